import { describe, it, expect } from "vitest";
import { admin, chat, generation, get, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { accountWithManagementKey, guardKey, guardrailsApi, post } from "./guardrail-helpers";

// A key's guardrails on the request path: a request they forbid is a 403 in the caller's protocol naming
// the guardrail and the rule, before anything is held; routing never falls back to what they forbid.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const LLAMA = "meta-llama/llama-3.1-8b-instruct"; // groq, cerebras (keep no data), deepinfra (retains and trains)
const NEMO = "mistralai/mistral-nemo"; // deepinfra, nebius: both retain prompts
const SONNET = "anthropic/claude-sonnet-4.5"; // anthropic at $3 / $15 per 1M tokens
const EMBED = "openai/text-embedding-3-small";

/** The record a refused request left, and the account's totals: nothing held, nothing charged. */
async function nothingCharged(a: { accountId: string; key: string }, res: Response) {
  const record = await generation(a.key, res.headers.get("x-generation-id")!);
  expect(record).toMatchObject({ status: 403, total_cost: 0 });
  const totals = await admin<Json>(`/accounts/${a.accountId}`);
  expect(totals).toMatchObject({ held: 0, total_usage: 0 });
}

describe("each rule refuses with a 403 naming the guardrail and the rule", () => {
  const rules: Array<[string, Json, string, string]> = [
    ["allowed_models", { allowed_models: ["anthropic/*"] }, LLAMA, `rule allowed_models: model ${LLAMA} is not among its allowed models (anthropic/*)`],
    ["ignored_models", { ignored_models: ["meta-llama/*"] }, LLAMA, `rule ignored_models: model ${LLAMA} is among its ignored models (meta-llama/*)`],
    ["allowed_providers", { allowed_providers: ["groq"] }, SONNET, "rule allowed_providers: carrier anthropic is not among its allowed providers (groq)"],
    ["ignored_providers", { ignored_providers: ["anthropic"] }, SONNET, "rule ignored_providers: carrier anthropic is among its ignored providers"],
    ["enforce_zdr", { enforce_zdr: true }, NEMO, "rule enforce_zdr_other: carrier deepinfra does not declare zero data retention"],
    ["max_price.prompt", { max_price: { prompt: 2.5 } }, SONNET, "rule max_price.prompt: carrier anthropic charges $3 per 1M prompt tokens"],
    ["max_price.completion", { max_price: { completion: 10 } }, SONNET, "rule max_price.completion: carrier anthropic charges $15 per 1M completion tokens"],
  ];
  /** Each API's request for a model, and how its 403 body carries the message. */
  const APIS: Array<[string, (key: string, model: string) => Promise<Response>, (body: Json) => string]> = [
    ["chat", (key, model) => chat(key, { model, ...user("hi") }), (b) => (expect(b.error.code).toBe(403), b.error.message)],
    [
      "messages",
      (key, model) => post("/messages", key, { model, max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
      (b) => (expect(b).toMatchObject({ type: "error", error: { type: "permission_error" } }), b.error.message),
    ],
    ["responses", (key, model) => post("/responses", key, { model, input: "hi" }), (b) => (expect(b.error.code).toBe(403), b.error.message)],
  ];
  const cases = APIS.flatMap(([api, send, message]) =>
    rules.map(([name, rule, model, says]) => [`${name} on ${api}`, rule, model, says, send, message] as const),
  );
  it.each(cases)("%s", async (_, rule, model, says, send, message) => {
    const a = await accountWithManagementKey();
    const id = await guardKey(a.mgmt, a.hash, rule, "Prod");
    const res = await send(a.key, model);
    expect(res.status).toBe(403);
    expect(message((await res.json()) as Json)).toContain(`guardrail "Prod" (${id}), ${says}`);
    await nothingCharged(a, res);
  });

  // The embeddings model is OpenAI's, at OpenAI (which retains prompts), $0.02 per 1M input tokens.
  const embeddingRules: Array<[string, Json, string]> = [
    ["allowed_models", { allowed_models: ["anthropic/*"] }, `rule allowed_models: model ${EMBED} is not among its allowed models`],
    ["ignored_models", { ignored_models: ["openai/*"] }, `rule ignored_models: model ${EMBED} is among its ignored models`],
    ["allowed_providers", { allowed_providers: ["groq"] }, "rule allowed_providers: carrier openai is not among its allowed providers"],
    ["ignored_providers", { ignored_providers: ["openai"] }, "rule ignored_providers: carrier openai is among its ignored providers"],
    ["enforce_zdr", { enforce_zdr: true }, "rule enforce_zdr_openai: carrier openai does not declare zero data retention"],
    ["max_price.prompt", { max_price: { prompt: 0.01 } }, "rule max_price.prompt: carrier openai charges $0.02 per 1M prompt tokens"],
  ];
  it.each(embeddingRules)("%s on embeddings", async (_, rule, says) => {
    const a = await accountWithManagementKey();
    const id = await guardKey(a.mgmt, a.hash, rule, "Prod");
    const res = await post("/embeddings", a.key, { model: EMBED, input: "a sentence" });
    expect(res.status).toBe(403);
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe(403);
    expect(body.error.message).toContain(`guardrail "Prod" (${id}), ${says}`);
    await nothingCharged(a, res);
  });

  it("/messages/count_tokens: a carrier the guardrails forbid is never sent the prompt to count", async () => {
    const a = await accountWithManagementKey();
    const id = await guardKey(a.mgmt, a.hash, { enforce_zdr: true }, "ZDR");
    const tag = uniqueTag();
    const res = await post("/messages/count_tokens", a.key, { model: SONNET, messages: [{ role: "user", content: `hi [sim tag=${tag}]` }] });
    expect(res.status).toBe(403);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ type: "error", error: { type: "permission_error" } });
    expect(body.error.message).toContain(`guardrail "ZDR" (${id}), rule enforce_zdr_anthropic`);
    expect(await simRequests(tag)).toEqual([]);
    const allowedModel = await post("/messages/count_tokens", a.key, { model: LLAMA, messages: [{ role: "user", content: "hi" }] });
    expect(allowedModel.status).toBe(200);
  });

  it("a streamed request is refused the same way, before any stream opens", async () => {
    const a = await accountWithManagementKey();
    await guardKey(a.mgmt, a.hash, { allowed_providers: ["groq"] });
    const res = await chat(a.key, { model: SONNET, stream: true, ...user("hi") });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/json");
    await nothingCharged(a, res);
  });
});

describe("routing never reaches what the guardrails forbid", () => {
  it("a failing first carrier falls back past a forbidden carrier to an allowed one", async () => {
    const a = await accountWithManagementKey();
    await guardKey(a.mgmt, a.hash, { allowed_providers: ["groq", "cerebras"] });
    const tag = uniqueTag();
    // The caller's own order puts the forbidden deepinfra second.
    const res = await chat(a.key, {
      model: LLAMA,
      provider: { order: ["groq", "deepinfra", "cerebras"] },
      ...user(`x [sim carrier=groq status=503] [sim tag=${tag}]`),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).provider).toBe("Cerebras");
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual(["groq", "cerebras"]);
  });

  it("when the only allowed carrier fails, the request fails: no forbidden carrier is tried", async () => {
    const a = await accountWithManagementKey();
    await guardKey(a.mgmt, a.hash, { allowed_providers: ["groq"] });
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, ...user(`x [sim carrier=groq status=503] [sim tag=${tag}]`) });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual(["groq"]);
    expect(await generation(a.key, res.headers.get("x-generation-id")!)).toMatchObject({ total_cost: 0 });
  });

  it("zero data retention keeps out the carrier that retains and trains on prompts", async () => {
    const a = await accountWithManagementKey();
    await guardKey(a.mgmt, a.hash, { enforce_zdr_other: true });
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, provider: { order: ["deepinfra", "groq"] }, ...user(`x [sim tag=${tag}]`) });
    expect(res.status).toBe(200);
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual(["groq"]);
  });

  it("model fallbacks skip a forbidden model", async () => {
    const a = await accountWithManagementKey();
    await guardKey(a.mgmt, a.hash, { allowed_models: ["meta-llama/*"] });
    const res = await chat(a.key, { models: [SONNET, LLAMA], ...user("hi") });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).model).toBe(LLAMA);
  });

  it("several guardrails must all allow; unassigning one takes effect at once", async () => {
    const a = await accountWithManagementKey();
    await guardKey(a.mgmt, a.hash, { allowed_providers: ["groq", "anthropic"] }, "carriers");
    const models = await guardKey(a.mgmt, a.hash, { allowed_models: ["meta-llama/*"] }, "models");
    const refused = await chat(a.key, { model: SONNET, ...user("hi") });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as Json).error.message).toContain(`guardrail "models" (${models}), rule allowed_models`);
    const removed = await guardrailsApi(a.mgmt, "POST", `/guardrails/${models}/assignments/keys/remove`, { key_hashes: [a.hash] });
    expect(await removed.json()).toEqual({ unassigned_count: 1 });
    // The key is cached in this isolate with its guardrails; the change was made here, so it applies now.
    const served = await chat(a.key, { model: SONNET, ...user("hi") });
    expect(served.status).toBe(200);
  });
});

describe("GET /models/user", () => {
  it("lists only the models the key may use, priced by an allowed endpoint", async () => {
    const a = await accountWithManagementKey();
    const all = (await (await get("/models/user", a.key)).json()) as Json;
    expect(all.data.map((m: Json) => m.id)).toContain(SONNET);
    await guardKey(a.mgmt, a.hash, { allowed_models: ["meta-llama/*", EMBED], ignored_providers: ["deepinfra", "groq"] });
    const res = await get("/models/user", a.key);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    const ids: string[] = body.data.map((m: Json) => m.id);
    expect(ids).toContain(LLAMA);
    expect(ids).toContain(EMBED);
    expect(ids.every((id) => id.startsWith("meta-llama/") || id === EMBED)).toBe(true);
    expect(body.total_count).toBe(ids.length);
    // llama-3.1-8b at cerebras ($0.1 per 1M), groq and deepinfra being ignored.
    expect(body.data.find((m: Json) => m.id === LLAMA).pricing.prompt).toBe("0.0000001");
  });

  it("needs a key; pages with offset and limit", async () => {
    expect((await get("/models/user")).status).toBe(401);
    const a = await accountWithManagementKey();
    const page = (await (await get("/models/user?offset=1&limit=2", a.key)).json()) as Json;
    expect(page.data).toHaveLength(2);
    expect(page.links.next).toBe("/api/v1/models/user?offset=3&limit=2");
    expect((await get("/models/user?limit=0", a.key)).status).toBe(400);
  });
});
