/** The usage numbers a carrier reports (OpenAI shape), read defensively. */
export type CarrierUsage = { promptTokens: number; completionTokens: number; reasoningTokens: number };

export function readUsage(usage: unknown): CarrierUsage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  const prompt = u.prompt_tokens;
  const completion = u.completion_tokens;
  if (!isCount(prompt) || !isCount(completion)) return undefined;
  const details = u.completion_tokens_details;
  const reasoning = typeof details === "object" && details !== null ? (details as Record<string, unknown>).reasoning_tokens : undefined;
  return { promptTokens: prompt, completionTokens: completion, reasoningTokens: isCount(reasoning) ? reasoning : 0 };
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}
