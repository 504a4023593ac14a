/**
 * The key of a cached answer (docs/caching.md): SHA-256 over the account, the kind of answer, whether it is
 * streamed, the models routing resolved the request to (aliases, shortcuts and presets already applied) and
 * the canonical request — every field of it but the model names, serialized with its object keys sorted, so
 * the key is the same whichever inbound API the request came in and however its JSON was ordered. Every
 * parameter that can change the answer (temperature, tools, tool_choice, response_format, the completion
 * cap, seed, stop, provider preferences, …) is in the request, so in the key; nothing is left out by name.
 */
export async function cacheKey(p: { accountId: string; kind: "chat" | "embeddings"; stream: boolean; models: string[]; body: object }): Promise<string> {
  const { model: _model, models: _models, stream: _stream, ...rest } = p.body as Record<string, unknown>;
  const text = `answer-cache v1\n${p.accountId}\n${p.kind}\n${p.stream ? "stream" : "whole"}\n${p.models.join("\n")}\n${canonicalJson(rest)}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** JSON with every object's keys sorted (arrays keep their order: it is meaning): equal requests, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
