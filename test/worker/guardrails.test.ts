import { describe, it, expect } from "vitest";
import { admin, chat, generation, get, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { env } from "cloudflare:test";
import { accountWithManagementKey, addMember, guardKey, guardrailsApi, memberKey, post } from "./guardrail-helpers";
import { keyGuardrails } from "../../src/keys/guardrail-store";
import { removeMember } from "../../src/members/member-store";

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

describe("a member's guardrails apply to every key of the member", () => {
  /** A guardrail allowing only Llama models, assigned to `memberId` through the API; returns its id. */
  async function guardMember(mgmt: string, memberId: string): Promise<string> {
    const created = await guardrailsApi(mgmt, "POST", "/guardrails", { name: "Team", allowed_models: ["meta-llama/*"] });
    const id = ((await created.json()) as Json).data.id as string;
    const assigned = await guardrailsApi(mgmt, "POST", `/guardrails/${id}/assignments/members`, { member_user_ids: [memberId] });
    expect(await assigned.json()).toEqual({ assigned_count: 1 });
    return id;
  }
  const says = (id: string) => `guardrail "Team" (${id}), rule allowed_models: model ${SONNET} is not among its allowed models (meta-llama/*)`;

  it("refuses on each of the member's keys, not on another member's; removing the assignment lets it through", async () => {
    const a = await accountWithManagementKey();
    const [alice, bob] = [await addMember(a.accountId), await addMember(a.accountId)];
    const [alice1, alice2, bobs] = [await memberKey(a.accountId, alice), await memberKey(a.accountId, alice), await memberKey(a.accountId, bob)];
    // Alice's first key is cached in this isolate before the assignment: the change made here applies at once.
    expect((await chat(alice1.key, { model: SONNET, ...user("hi") })).status).toBe(200);
    const id = await guardMember(a.mgmt, alice);
    for (const k of [alice1, alice2]) {
      const res = await chat(k.key, { model: SONNET, ...user("hi") });
      expect(res.status).toBe(403);
      expect(((await res.json()) as Json).error.message).toContain(says(id));
      expect(await generation(k.key, res.headers.get("x-generation-id")!)).toMatchObject({ status: 403, total_cost: 0 });
      expect((await chat(k.key, { model: LLAMA, ...user("hi") })).status).toBe(200);
    }
    const messages = await post("/messages", alice2.key, { model: SONNET, max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(messages.status).toBe(403);
    expect(((await messages.json()) as Json).error).toMatchObject({ type: "permission_error", message: expect.stringContaining(says(id)) });
    // Bob's key and the account's key of no member carry none of it.
    for (const key of [bobs.key, a.key]) expect((await chat(key, { model: SONNET, ...user("hi") })).status).toBe(200);
    const removed = await guardrailsApi(a.mgmt, "POST", `/guardrails/${id}/assignments/members/remove`, { member_user_ids: [alice] });
    expect(await removed.json()).toEqual({ unassigned_count: 1 });
    expect((await chat(alice1.key, { model: SONNET, ...user("hi") })).status).toBe(200);
  });

  it("GET /models/user with the member's key lists only what its member's guardrail leaves", async () => {
    const a = await accountWithManagementKey();
    const alice = await addMember(a.accountId);
    const k = await memberKey(a.accountId, alice);
    const before: string[] = ((await (await get("/models/user", k.key)).json()) as Json).data.map((m: Json) => m.id);
    expect(before).toContain(SONNET);
    await guardMember(a.mgmt, alice);
    const ids: string[] = ((await (await get("/models/user", k.key)).json()) as Json).data.map((m: Json) => m.id);
    expect(ids).toContain(LLAMA);
    expect(ids.every((m) => m.startsWith("meta-llama/"))).toBe(true);
  });

  it("a guardrail on both the key and its member counts once, and applies while either assignment remains", async () => {
    const a = await accountWithManagementKey();
    const alice = await addMember(a.accountId);
    const k = await memberKey(a.accountId, alice);
    const id = await guardMember(a.mgmt, alice);
    await guardrailsApi(a.mgmt, "POST", `/guardrails/${id}/assignments/keys`, { key_hashes: [k.hash] });
    expect((await keyGuardrails(env.DB, k.hash)).map((g) => g.id)).toEqual([id]);
    await guardrailsApi(a.mgmt, "POST", `/guardrails/${id}/assignments/keys/remove`, { key_hashes: [k.hash] });
    expect((await chat(k.key, { model: SONNET, ...user("hi") })).status).toBe(403); // still its member's
    await guardrailsApi(a.mgmt, "POST", `/guardrails/${id}/assignments/members/remove`, { member_user_ids: [alice] });
    expect((await chat(k.key, { model: SONNET, ...user("hi") })).status).toBe(200);
  });

  it("a change to a member's guardrail applies at once to the member's cached keys; removing the member removes the assignment", async () => {
    const a = await accountWithManagementKey();
    const alice = await addMember(a.accountId);
    const k = await memberKey(a.accountId, alice);
    const id = await guardMember(a.mgmt, alice);
    expect((await chat(k.key, { model: LLAMA, ...user("hi") })).status).toBe(200); // cached with the guardrail
    await guardrailsApi(a.mgmt, "PATCH", `/guardrails/${id}`, { allowed_models: ["anthropic/*"] });
    expect((await chat(k.key, { model: LLAMA, ...user("hi") })).status).toBe(403);
    expect((await removeMember(env.DB, a.accountId, alice)).ok).toBe(true);
    expect(((await (await guardrailsApi(a.mgmt, "GET", `/guardrails/${id}/assignments/members`)).json()) as Json).total_count).toBe(0);
  });

  it("another account's member cannot be given this account's guardrail", async () => {
    const a = await accountWithManagementKey();
    const theirs = await accountWithManagementKey();
    const stranger = await addMember(theirs.accountId);
    const k = await memberKey(theirs.accountId, stranger);
    const created = await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "Team", allowed_models: ["meta-llama/*"] });
    const id = ((await created.json()) as Json).data.id as string;
    const res = await guardrailsApi(a.mgmt, "POST", `/guardrails/${id}/assignments/members`, { member_user_ids: [stranger] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toContain(`${stranger} is not a member of this account`);
    expect((await chat(k.key, { model: SONNET, ...user("hi") })).status).toBe(200);
  });
});
