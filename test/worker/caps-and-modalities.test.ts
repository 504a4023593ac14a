import { describe, it, expect } from "vitest";
import { call, generation, newAccount, settled, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";

// A completion cap and output modalities are checked against what the model's endpoints can do, before
// anything is held or any carrier is asked: refused in the caller's protocol, naming the caller's own field.
const LLAMA = "meta-llama/llama-3.1-8b-instruct"; // groq returns at most 131,072 tokens, cerebras 8,192, deepinfra 16,384
const HAIKU = "anthropic/claude-haiku-4.5"; // anthropic: at most 64,000
type Json = Record<string, any>;

function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  return call(`/api/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** One request in a new account, tagged so the carriers the simulator saw can be read back. */
async function send(path: string, body: (tag: string) => Json, headers: Record<string, string> = {}) {
  const a = await newAccount(10);
  const tag = uniqueTag();
  const res = await post(path, a.key, body(tag), headers);
  return { a, res, json: (await res.json()) as Json, carriers: async () => (await simRequests(tag)).map((r) => r.carrier) };
}

/** Refused before any carrier: nothing charged, recorded at cost 0. */
async function refusedFree(a: { accountId: string; key: string }, res: Response, carriers: () => Promise<string[]>) {
  expect(await carriers()).toEqual([]);
  expect((await settled(a.accountId)).total_usage).toBe(0);
  expect(await generation(a.key, res.headers.get("x-generation-id")!)).toMatchObject({ status: 400, total_cost: 0 });
}

describe("a completion cap above every endpoint's maximum output", () => {
  it.each([
    { name: "chat max_tokens", cap: { max_tokens: 200_000 }, field: "max_tokens" },
    { name: "chat max_completion_tokens", cap: { max_completion_tokens: 200_000 }, field: "max_completion_tokens" },
    { name: "chat with both, the larger named", cap: { max_tokens: 100, max_completion_tokens: 200_000 }, field: "max_completion_tokens" },
  ])("$name: 400 naming the field and the maximum; nothing charged, no carrier called", async ({ cap, field }) => {
    const { a, res, json, carriers } = await send("/chat/completions", (tag) => ({ model: LLAMA, ...cap, ...user(`hi [sim tag=${tag}]`) }));
    expect(res.status).toBe(400);
    expect(json.error.message).toBe(`${field}: 200000 is more than any endpoint of ${LLAMA} (at most 131072) returns. Set ${field} to at most 131072.`);
    await refusedFree(a, res, carriers);
  });

  it("/responses names max_output_tokens (OpenAI's error shape, its param too)", async () => {
    const { a, res, json, carriers } = await send("/responses", (tag) => ({ model: LLAMA, max_output_tokens: 200_000, input: `hi [sim tag=${tag}]` }));
    expect(res.status).toBe(400);
    expect(json.error).toMatchObject({ type: "invalid_request_error", param: "max_output_tokens" });
    expect(json.error.message).toMatch(/^max_output_tokens: 200000 is more than any endpoint .* Set max_output_tokens to at most 131072\.$/);
    expect(json.error.message).not.toMatch(/\bmax_tokens\b/);
    await refusedFree(a, res, carriers);
  });

  it("/responses: a cap the context cannot hold names max_output_tokens too", async () => {
    const { res, json } = await send("/responses", (tag) => ({ model: LLAMA, max_output_tokens: 131_072, input: `hi [sim tag=${tag}]` }));
    expect(res.status).toBe(400);
    expect(json.error.message).toMatch(/completion \(max_output_tokens\).*lower max_output_tokens\.$/);
    expect(json.error.message).not.toMatch(/\bmax_tokens\b/);
  });

  it("/messages: Anthropic's error shape naming max_tokens and the model's maximum", async () => {
    const { a, res, json, carriers } = await send("/messages", (tag) => ({
      model: HAIKU,
      max_tokens: 200_000,
      messages: [{ role: "user", content: `hi [sim tag=${tag}]` }],
    }));
    expect(res.status).toBe(400);
    expect(json).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: `max_tokens: 200000 is more than any endpoint of ${HAIKU} (at most 64000) returns. Set max_tokens to at most 64000.`,
      },
    });
    await refusedFree(a, res, carriers);
  });

  it("endpoints below the cap are not tried: the routing metadata names them and why", async () => {
    const { res, json, carriers } = await send("/chat/completions", (tag) => ({ model: LLAMA, max_tokens: 20_000, ...user(`hi [sim tag=${tag}]`) }), {
      "x-openrouter-metadata": "enabled",
    });
    expect(res.status).toBe(200);
    expect(await carriers()).toEqual(["groq"]);
    const meta = json.openrouter_metadata;
    expect(meta.endpoints.available.map((e: Json) => e.provider)).toEqual(["Groq"]);
    // In the catalog's order (cheapest first).
    expect(meta.params.not_tried).toEqual([
      { provider: "DeepInfra", model: LLAMA, reason: "not tried: it returns at most 16384 completion tokens, fewer than max_tokens 20000" },
      { provider: "Cerebras", model: LLAMA, reason: "not tried: it returns at most 8192 completion tokens, fewer than max_tokens 20000" },
    ]);
  });

  it("a cap every endpoint returns is sent as asked, on the cheapest", async () => {
    const { res, carriers } = await send("/chat/completions", (tag) => ({ model: LLAMA, max_tokens: 8192, ...user(`hi [sim tag=${tag}]`) }));
    expect(res.status).toBe(200);
    expect(await carriers()).toEqual(["deepinfra"]);
  });
});

describe("output modalities the model cannot produce", () => {
  it("chat modalities [image, text] on a text-only model: 400 naming image and the model's own; nothing charged, no carrier called", async () => {
    const { a, res, json, carriers } = await send("/chat/completions", (tag) => ({
      model: LLAMA,
      modalities: ["image", "text"],
      ...user(`hi [sim tag=${tag}]`),
    }));
    expect(res.status).toBe(400);
    expect(json.error.message).toBe(
      `modalities: image is not an output modality of ${LLAMA} (output modalities: text). Ask for its output modalities only, or send the request to a model whose output_modalities include image (GET /api/v1/models?output_modalities=image).`,
    );
    await refusedFree(a, res, carriers);
  });

  it("modalities the model produces are served", async () => {
    const { res } = await send("/chat/completions", (tag) => ({ model: LLAMA, modalities: ["text"], ...user(`hi [sim tag=${tag}]`) }));
    expect(res.status).toBe(200);
  });
});
