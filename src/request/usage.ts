/**
 * The usage a carrier reports, in OpenRouter's meaning: `promptTokens` includes the cache-read
 * (`cachedTokens`) and cache-written tokens; `completionTokens` includes reasoning.
 */
export type CarrierUsage = {
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** Prompt tokens read from the carrier's cache (billed at the cache-read price). */
  cachedTokens: number;
  /** Prompt tokens written to the cache, all of them; and the part of them written to 1-hour entries (priced apart). */
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
};

/** Usage with no cache and no reasoning detail (our estimate's shape). */
export function plainUsage(promptTokens: number, completionTokens: number, reasoningTokens: number): CarrierUsage {
  return { promptTokens, completionTokens, reasoningTokens, cachedTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 };
}

/** The canonical (OpenAI-shaped, OpenRouter-meaning) usage object, read defensively. */
export function readUsage(usage: unknown): CarrierUsage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  const prompt = u.prompt_tokens;
  const completion = u.completion_tokens;
  if (!isCount(prompt) || !isCount(completion)) return undefined;
  const out = field(u.completion_tokens_details);
  const inp = field(u.prompt_tokens_details);
  return {
    promptTokens: prompt,
    completionTokens: completion,
    reasoningTokens: count(out.reasoning_tokens),
    cachedTokens: count(inp.cached_tokens),
    cacheWriteTokens: count(inp.cache_write_tokens),
    cacheWrite1hTokens: count(inp.cache_write_1h_tokens),
  };
}

function field(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};
}

function count(v: unknown): number {
  return isCount(v) ? v : 0;
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}
