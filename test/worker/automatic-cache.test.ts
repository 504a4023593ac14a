import { describe, it, expect } from "vitest";
import { call, newAccount } from "./helpers";
import { simRequests, uniqueTag } from "./sim";

// A caller whose protocol caches by itself (OpenAI's prompt_cache_key: Codex sends one on every turn) on an
// Anthropic model: the key becomes Anthropic's automatic caching, so a session's next turn reads its prompt
// from the cache instead of paying the full input price again (docs/protocols.md, "Usage and prompt caching").
type Json = Record<string, any>;
const MODEL = "anthropic/claude-haiku-4.5";

function post(key: string, body: unknown) {
  return call("/api/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Two turns of one conversation with a long system prompt (well over the 1,024 tokens Anthropic caches at least). */
async function twoTurns(cacheKey: string | null): Promise<{ tag: string; usages: Json[] }> {
  const { key } = await newAccount(5);
  const tag = uniqueTag();
  const instructions = `${tag} ` + "Follow the house rules and answer briefly. ".repeat(400);
  const base = { model: MODEL, instructions, ...(cacheKey === null ? {} : { prompt_cache_key: cacheKey }) };
  const input: Json[] = [{ role: "user", content: [{ type: "input_text", text: `hi [sim tag=${tag} tokens=3]` }] }];
  const usages: Json[] = [];
  for (const next of ["", `and again [sim tag=${tag} tokens=3]`]) {
    if (next) input.push({ role: "user", content: [{ type: "input_text", text: next }] });
    const res = await post(key, { ...base, input });
    expect(res.status).toBe(200);
    const json = (await res.json()) as Json;
    usages.push(json.usage as Json);
    input.push(...(json.output as Json[]).filter((i) => i.type === "message"));
  }
  return { tag, usages };
}

describe("prompt_cache_key on an Anthropic model", () => {
  it("becomes Anthropic's automatic caching: the first turn writes the prompt, the next reads it", async () => {
    const { tag, usages } = await twoTurns(`codex-${uniqueTag()}`);
    const seen = await simRequests(tag);
    expect(seen.map((r) => r.body.cache_control)).toEqual([{ type: "ephemeral" }, { type: "ephemeral" }]);
    expect(usages[0]!.input_tokens_details.cached_tokens).toBe(0);
    expect(usages[0]!.input_tokens_details.cache_write_tokens).toBeGreaterThan(1024);
    // The second turn's prompt starts with the whole first one: all of it is read from the cache.
    expect(usages[1]!.input_tokens_details.cached_tokens).toBe(usages[0]!.input_tokens_details.cache_write_tokens);
  });

  it("without a key (and no breakpoint) nothing asks Anthropic to cache: nothing is written or read", async () => {
    const { tag, usages } = await twoTurns(null);
    const seen = await simRequests(tag);
    expect(seen.map((r) => r.body.cache_control)).toEqual([undefined, undefined]);
    expect(usages.map((u) => [u.input_tokens_details.cached_tokens, u.input_tokens_details.cache_write_tokens ?? 0])).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });
});
