import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, call, chat, user } from "./helpers";
import { accountWithManagementKey, addMember, guardrailsApi, ownerOf } from "./guardrail-helpers";

// The management API of guardrails (`/guardrails`, key assignments), OpenRouter's shape, scoped to the
// management key's account. Its responses are held to the contract in test/node/guardrails-contract.test.ts.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";

describe("guardrails CRUD", () => {
  it("creates, reads, lists, updates and deletes a guardrail", async () => {
    const a = await accountWithManagementKey();
    const created = await guardrailsApi(a.mgmt, "POST", "/guardrails", {
      name: "Prod",
      description: "production keys",
      allowed_models: ["anthropic/*", "meta-llama/llama-3.1-8b-instruct"],
      allowed_providers: ["anthropic", "groq"],
      enforce_zdr: false,
      enforce_zdr_anthropic: true,
      max_price: { prompt: 3, completion: 15.5 },
      limit_usd: null,
    });
    expect(created.status).toBe(201);
    const g = ((await created.json()) as Json).data;
    expect(g).toMatchObject({
      name: "Prod",
      description: "production keys",
      allowed_models: ["anthropic/*", "meta-llama/llama-3.1-8b-instruct"],
      allowed_providers: ["anthropic", "groq"],
      ignored_models: null,
      enforce_zdr: null, // the per-author flags differ
      enforce_zdr_anthropic: true,
      enforce_zdr_openai: false,
      max_price: { prompt: 3, completion: 15.5 },
      limit_usd: null,
      include_byok_in_budgets: false,
      updated_at: null,
    });
    expect(g.id).toMatch(/^[0-9a-f-]{36}$/);
    const one = (await (await guardrailsApi(a.mgmt, "GET", `/guardrails/${g.id}`)).json()) as Json;
    expect(one.data).toEqual(g);
    const list = (await (await guardrailsApi(a.mgmt, "GET", "/guardrails")).json()) as Json;
    expect(list).toEqual({ data: [g], total_count: 1 });
    const patched = await guardrailsApi(a.mgmt, "PATCH", `/guardrails/${g.id}`, { name: "Prod 2", allowed_models: null, enforce_zdr: true });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as Json).data).toMatchObject({
      name: "Prod 2",
      allowed_models: null,
      enforce_zdr: true,
      allowed_providers: ["anthropic", "groq"],
    });
    expect(await (await guardrailsApi(a.mgmt, "DELETE", `/guardrails/${g.id}`)).json()).toEqual({ deleted: true });
    expect((await guardrailsApi(a.mgmt, "GET", `/guardrails/${g.id}`)).status).toBe(404);
  });

  it("an alias is stored as its catalog id; an unknown model or carrier is a 400", async () => {
    const a = await accountWithManagementKey();
    const bad = async (body: Json, says: RegExp) => {
      const res = await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "x", ...body });
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).error.message).toMatch(says);
    };
    await bad({ allowed_models: ["no-such/model"] }, /allowed_models.*no-such\/model is not in the catalog/);
    await bad({ ignored_providers: ["nope"] }, /ignored_providers.*nope is not a carrier/);
    await bad({ max_price: { prompt: 0.0001 } }, /max_price.prompt.*at most 3 decimals/);
    await bad({ allowed_models: [] }, /allowed_models/);
  });

  it.each([
    ["limit_usd", 50],
    ["reset_interval", "monthly"],
    ["content_filters", []],
    ["content_filter_builtins", [{ slug: "email", action: "redact" }]],
    ["enable_free_model_publication", false],
    ["enable_free_model_training", false],
    ["enable_paid_model_training", true],
    ["include_byok_in_budgets", true],
    ["colour", "red"],
  ])("a field Switchyard does not enforce (%s) is refused, never ignored", async (field, value) => {
    const a = await accountWithManagementKey();
    const res = await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "x", [field]: value });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toContain(field);
    const list = (await (await guardrailsApi(a.mgmt, "GET", "/guardrails")).json()) as Json;
    expect(list.total_count).toBe(0);
  });

  it("only management keys: an API key gets 403, no key 401", async () => {
    const a = await accountWithManagementKey();
    expect((await guardrailsApi(a.key, "GET", "/guardrails")).status).toBe(403);
    expect((await guardrailsApi("", "GET", "/guardrails")).status).toBe(401);
  });
});

describe("key assignments", () => {
  it("assigns and unassigns keys, lists them per guardrail and for the account", async () => {
    const a = await accountWithManagementKey();
    const second = await admin<{ hash: string }>("/keys", { account: a.accountId, name: "second" });
    const g = ((await (await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "g" })).json()) as Json).data;
    const assign = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys`, { key_hashes: [a.hash, second.hash] });
    expect(await assign.json()).toEqual({ assigned_count: 2 });
    const again = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys`, { key_hashes: [a.hash] });
    expect(await again.json()).toEqual({ assigned_count: 0 });
    const listed = (await (await guardrailsApi(a.mgmt, "GET", `/guardrails/${g.id}/assignments/keys`)).json()) as Json;
    expect(listed.total_count).toBe(2);
    expect(listed.data.map((x: Json) => x.key_hash).sort()).toEqual([a.hash, second.hash].sort());
    expect(listed.data.find((x: Json) => x.key_hash === a.hash)).toMatchObject({ guardrail_id: g.id, key_label: a.label, assigned_by: null });
    const all = (await (await guardrailsApi(a.mgmt, "GET", "/guardrails/assignments/keys?limit=1")).json()) as Json;
    expect(all.total_count).toBe(2);
    expect(all.data).toHaveLength(1);
    // Deleting a key takes its assignments with it; deleting the guardrail takes it off its keys.
    expect((await call(`/api/v1/keys/${second.hash}`, { method: "DELETE", headers: { authorization: `Bearer ${a.mgmt}` } })).status).toBe(200);
    await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys`, { key_hashes: [second.hash] }).then((r) => expect(r.status).toBe(404));
    expect(((await (await guardrailsApi(a.mgmt, "GET", `/guardrails/${g.id}/assignments/keys`)).json()) as Json).total_count).toBe(1);
    const removed = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys/remove`, { key_hashes: [a.hash] });
    expect(await removed.json()).toEqual({ unassigned_count: 1 });
    await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys`, { key_hashes: [a.hash] });
    await guardrailsApi(a.mgmt, "DELETE", `/guardrails/${g.id}`);
    expect(((await (await guardrailsApi(a.mgmt, "GET", "/guardrails/assignments/keys")).json()) as Json).total_count).toBe(0);
    expect((await chat(a.key, { model: "meta-llama/llama-3.1-8b-instruct", ...user("hi") })).status).toBe(200);
  });

  it("as many keys as GUARDRAIL_LIST_ITEMS in one call (past D1's 100 bound parameters per statement); one more is a 400", async () => {
    const a = await accountWithManagementKey();
    const hashes = Array.from({ length: 100 }, (_, i) => `${a.hash.slice(0, 60)}${(i + 0x1000).toString(16)}`);
    await env.DB.batch(
      hashes.map((h) =>
        env.DB.prepare("INSERT INTO api_keys (hash, account_id, name, label, created_at) VALUES (?, ?, ?, ?, ?)").bind(
          h,
          a.accountId,
          h.slice(0, 8),
          "sk-sy-v1-x...y",
          Date.now(),
        ),
      ),
    );
    const g = ((await (await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "g" })).json()) as Json).data;
    const assign = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys`, { key_hashes: hashes });
    expect(await assign.json()).toEqual({ assigned_count: 100 });
    expect(((await (await guardrailsApi(a.mgmt, "GET", `/guardrails/${g.id}/assignments/keys`)).json()) as Json).total_count).toBe(100);
    const tooMany = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys`, { key_hashes: [...hashes, a.hash] });
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as Json).error.message).toContain("at most 100");
    const removed = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys/remove`, { key_hashes: hashes });
    expect(await removed.json()).toEqual({ unassigned_count: 100 });
  });

  it("a management key or an unknown hash is a 404 and nothing is assigned", async () => {
    const a = await accountWithManagementKey();
    const g = ((await (await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "g" })).json()) as Json).data;
    for (const hash of [a.mgmtHash, "0".repeat(64)]) {
      const res = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/keys`, { key_hashes: [a.hash, hash] });
      expect(res.status).toBe(404);
    }
    expect(((await (await guardrailsApi(a.mgmt, "GET", `/guardrails/${g.id}/assignments/keys`)).json()) as Json).total_count).toBe(0);
  });
});

describe("member assignments", () => {
  const members = (key: string, path: string) => guardrailsApi(key, "GET", path).then(async (r) => (expect(r.status).toBe(200), (await r.json()) as Json));

  it("assigns and unassigns members, lists them per guardrail and for the account, in the contract's shape", async () => {
    const a = await accountWithManagementKey();
    const [m1, m2] = [await addMember(a.accountId), await addMember(a.accountId)];
    const g = ((await (await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "g" })).json()) as Json).data;
    const assign = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members`, { member_user_ids: [m1, m2, m1] });
    expect(await assign.json()).toEqual({ assigned_count: 2 });
    const again = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members`, { member_user_ids: [m1] });
    expect(await again.json()).toEqual({ assigned_count: 0 });
    const listed = await members(a.mgmt, `/guardrails/${g.id}/assignments/members`);
    expect(listed.total_count).toBe(2);
    expect(listed.data.map((x: Json) => x.user_id).sort()).toEqual([m1, m2].sort());
    // The operator's management key belongs to no member: assigned_by null.
    expect(listed.data.find((x: Json) => x.user_id === m1)).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: m1,
      organization_id: a.accountId,
      guardrail_id: g.id,
      assigned_by: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const all = await members(a.mgmt, "/guardrails/assignments/members?limit=1");
    expect(all.total_count).toBe(2);
    expect(all.data).toHaveLength(1);
    const removed = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members/remove`, { member_user_ids: [m1] });
    expect(await removed.json()).toEqual({ unassigned_count: 1 });
    expect((await members(a.mgmt, `/guardrails/${g.id}/assignments/members`)).data.map((x: Json) => x.user_id)).toEqual([m2]);
    // Deleting the guardrail takes it off its members.
    await guardrailsApi(a.mgmt, "DELETE", `/guardrails/${g.id}`);
    expect((await members(a.mgmt, "/guardrails/assignments/members")).total_count).toBe(0);
  });

  it("assigned_by is the member whose management key made the assignment", async () => {
    const a = await accountWithManagementKey();
    const owner = await ownerOf(a.accountId);
    await env.DB.prepare("UPDATE api_keys SET member_id = ? WHERE hash = ?").bind(owner, a.mgmtHash).run();
    const m = await addMember(a.accountId);
    const g = ((await (await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "g" })).json()) as Json).data;
    await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members`, { member_user_ids: [m] });
    expect((await members(a.mgmt, `/guardrails/${g.id}/assignments/members`)).data[0]).toMatchObject({ user_id: m, assigned_by: owner });
  });

  it("another account's member or an unknown id is a 400 naming it, and nothing is assigned or removed", async () => {
    const a = await accountWithManagementKey();
    const theirs = await accountWithManagementKey();
    const mine = await addMember(a.accountId);
    const other = await addMember(theirs.accountId);
    const g = ((await (await guardrailsApi(a.mgmt, "POST", "/guardrails", { name: "g" })).json()) as Json).data;
    for (const id of [other, "mem_000000000000000000000000", await ownerOf(theirs.accountId)]) {
      const res = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members`, { member_user_ids: [mine, id] });
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).error.message).toContain(`${id} is not a member of this account`);
    }
    expect((await members(a.mgmt, `/guardrails/${g.id}/assignments/members`)).total_count).toBe(0);
    await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members`, { member_user_ids: [mine] });
    const res = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members/remove`, { member_user_ids: [mine, other] });
    expect(res.status).toBe(400);
    expect((await members(a.mgmt, `/guardrails/${g.id}/assignments/members`)).total_count).toBe(1);
    for (const body of [{}, { member_user_ids: [] }, { member_user_ids: [""] }, { member_user_ids: [mine], extra: 1 }])
      expect((await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members`, body)).status).toBe(400);
    const tooMany = Array.from({ length: 101 }, (_, i) => `mem_${i}`);
    const over = await guardrailsApi(a.mgmt, "POST", `/guardrails/${g.id}/assignments/members`, { member_user_ids: tooMany });
    expect(over.status).toBe(400);
    expect(((await over.json()) as Json).error.message).toContain("at most 100");
    // The other account sees none of it.
    expect((await members(theirs.mgmt, "/guardrails/assignments/members")).total_count).toBe(0);
  });
});

describe("account scoping", () => {
  it("another account's guardrail is a 404 on every route, and its keys cannot be assigned", async () => {
    const mine = await accountWithManagementKey();
    const theirs = await accountWithManagementKey();
    const g = ((await (await guardrailsApi(theirs.mgmt, "POST", "/guardrails", { name: "theirs" })).json()) as Json).data;
    for (const [method, path, body] of [
      ["GET", `/guardrails/${g.id}`, undefined],
      ["PATCH", `/guardrails/${g.id}`, { name: "mine now" }],
      ["DELETE", `/guardrails/${g.id}`, undefined],
      ["GET", `/guardrails/${g.id}/assignments/keys`, undefined],
      ["POST", `/guardrails/${g.id}/assignments/keys`, { key_hashes: [mine.hash] }],
      ["POST", `/guardrails/${g.id}/assignments/keys/remove`, { key_hashes: [mine.hash] }],
      ["GET", `/guardrails/${g.id}/assignments/members`, undefined],
      ["POST", `/guardrails/${g.id}/assignments/members`, { member_user_ids: [await ownerOf(mine.accountId)] }],
      ["POST", `/guardrails/${g.id}/assignments/members/remove`, { member_user_ids: [await ownerOf(mine.accountId)] }],
      ["GET", `/guardrails/${UNKNOWN_ID}`, undefined],
      ["GET", "/guardrails/not-a-uuid", undefined],
    ] as const)
      expect((await guardrailsApi(mine.mgmt, method, path, body)).status, `${method} ${path}`).toBe(404);
    expect(((await (await guardrailsApi(mine.mgmt, "GET", "/guardrails")).json()) as Json).total_count).toBe(0);
    const own = ((await (await guardrailsApi(mine.mgmt, "POST", "/guardrails", { name: "mine" })).json()) as Json).data;
    expect((await guardrailsApi(mine.mgmt, "POST", `/guardrails/${own.id}/assignments/keys`, { key_hashes: [theirs.hash] })).status).toBe(404);
    expect(((await (await guardrailsApi(theirs.mgmt, "GET", `/guardrails/${g.id}`)).json()) as Json).data.name).toBe("theirs");
  });
});
