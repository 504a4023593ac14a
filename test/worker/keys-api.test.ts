import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { admin, call, chat, get, newAccount, settled, storedRecords, user } from "./helpers";
import { createKey } from "../../src/keys/key-store";
import type { LedgerObject } from "../../src/ledger/ledger-object";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const PAID = "meta-llama/llama-3.1-8b-instruct";
const FUTURE = "2099-12-31T23:59:59Z";

/** Every field of the contract's key object (`/keys`, `/keys/{hash}`), and no other but ours: `response_cache_ttl_seconds` (docs/caching.md). */
const KEY_FIELDS = [
  "byok_usage",
  "byok_usage_daily",
  "byok_usage_monthly",
  "byok_usage_weekly",
  "created_at",
  "creator_user_id",
  "disabled",
  "expires_at",
  "hash",
  "include_byok_in_limit",
  "label",
  "limit",
  "limit_remaining",
  "limit_reset",
  "name",
  "response_cache_ttl_seconds",
  "updated_at",
  "usage",
  "usage_daily",
  "usage_monthly",
  "usage_weekly",
  "workspace_id",
];

/** An account with credits, one ordinary key and one management key. */
async function accountWithManagementKey(credits = 5) {
  const a = await newAccount(credits);
  const m = await admin<{ key: string; hash: string; is_management: boolean }>("/keys", { account: a.accountId, management: true });
  expect(m.is_management).toBe(true);
  return { ...a, mgmt: m.key, mgmtHash: m.hash };
}

function keysApi(key: string, method: string, path = "", body?: unknown) {
  return call(`/api/v1/keys${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function json(res: Response, status: number): Promise<Json> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Json;
}

async function expectError(res: Response, status: number, message?: RegExp) {
  const body = await json(res, status);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(status);
  if (message) expect(body.error.message).toMatch(message);
  return body;
}

async function sha256Hex(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const countKeys = async (accountId: string) =>
  (await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ?").bind(accountId).first<{ n: number }>())!.n;
const keyRow = (hash: string) => env.DB.prepare("SELECT * FROM api_keys WHERE hash = ?").bind(hash).first<Json>();

/** Adds usage to a key in its account's ledger on a day long past: in its total, in no current window. */
async function addOldUsage(accountId: string, keyHash: string, nano: number) {
  await runInDurableObject(env.LEDGER.get(env.LEDGER.idFromName(accountId)), async (_instance, state) => {
    state.storage.sql.exec("INSERT INTO key_usage (key_hash, day, usage_nano) VALUES (?, '2000-01-03', ?)", keyHash, nano);
  });
}

describe("POST /keys", () => {
  it("creates a key in the management key's account: 201 with data and the key, shown only then", async () => {
    const a = await accountWithManagementKey();
    const res = await keysApi(a.mgmt, "POST", "", { name: "customer 42", limit: 5, limit_reset: "monthly", include_byok_in_limit: true, expires_at: FUTURE });
    const body = await json(res, 201);
    expect(Object.keys(body).sort()).toEqual(["data", "key"]);
    const key = body.key as string;
    expect(key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    const data = body.data;
    expect(Object.keys(data).sort()).toEqual(KEY_FIELDS);
    expect(data).toMatchObject({
      hash: await sha256Hex(key),
      name: "customer 42",
      label: `${key.slice(0, 12)}...${key.slice(-3)}`,
      disabled: false,
      limit: 5,
      limit_remaining: 5,
      limit_reset: "monthly",
      include_byok_in_limit: true,
      usage: 0,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
      byok_usage: 0,
      byok_usage_daily: 0,
      byok_usage_weekly: 0,
      byok_usage_monthly: 0,
      updated_at: null,
      expires_at: "2099-12-31T23:59:59.000Z",
      creator_user_id: a.accountId,
    });
    expect(new Date(data.created_at).toISOString()).toBe(data.created_at);
    expect(data.workspace_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    // Stored in the management key's account, hashed, with its settings.
    expect(await keyRow(data.hash)).toMatchObject({
      account_id: a.accountId,
      limit_nano: 5_000_000_000,
      limit_reset: "monthly",
      include_byok_in_limit: 1,
      expires_at: Date.parse(FUTURE),
      is_management: 0,
    });

    // Never shown again: the get and the list carry no `key`.
    const one = await json(await keysApi(a.mgmt, "GET", `/${data.hash}`), 200);
    expect(one).toEqual({ data });
    const list = await json(await keysApi(a.mgmt, "GET"), 200);
    expect(JSON.stringify(list)).not.toContain(key.slice(9));
    expect(list.data.find((k: Json) => k.hash === data.hash)).toEqual(data);

    // The new key works at once and reports its settings.
    const self = await json(await get("/key", key), 200);
    expect(self.data).toMatchObject({
      name: "customer 42",
      limit: 5,
      limit_remaining: 5,
      limit_reset: "monthly",
      include_byok_in_limit: true,
      expires_at: "2099-12-31T23:59:59.000Z",
      is_management_key: false,
      creator_user_id: a.accountId,
    });
  });

  it("a key created through /keys runs completions charged to the management key's account", async () => {
    const a = await accountWithManagementKey(5);
    const { key, data } = await json(await keysApi(a.mgmt, "POST", "", { name: "worker" }), 201);
    expect(data.limit).toBeNull();
    expect(data.limit_remaining).toBeNull();
    const res = await chat(key, { model: PAID, ...user("hello [sim tokens=10]") });
    const cost = (await json(res, 200)).usage.cost as number;
    expect(cost).toBeGreaterThan(0);
    const totals = await settled(a.accountId);
    expect(totals.total_usage).toBe(cost);
    const after = await json(await keysApi(a.mgmt, "GET", `/${data.hash}`), 200);
    expect(after.data).toMatchObject({ usage: cost, usage_daily: cost, usage_weekly: cost, usage_monthly: cost });
  });

  it("accepts creator_user_id and workspace_id only when they name the caller's own account and workspace, and +00:00 as UTC", async () => {
    const a = await accountWithManagementKey();
    const first = await json(await keysApi(a.mgmt, "POST", "", { name: "one" }), 201);
    const ws = first.data.workspace_id as string;
    const ok = await json(
      await keysApi(a.mgmt, "POST", "", {
        name: "two",
        creator_user_id: a.accountId,
        workspace_id: ws.toUpperCase(),
        expires_at: "2099-06-01T12:00:00+00:00",
        limit: 0,
        limit_reset: null,
      }),
      201,
    );
    expect(ok.data).toMatchObject({
      workspace_id: ws,
      creator_user_id: a.accountId,
      expires_at: "2099-06-01T12:00:00.000Z",
      limit: 0,
      limit_remaining: 0,
      limit_reset: null,
    });
    // Another account has another workspace.
    const b = await accountWithManagementKey();
    const theirs = await json(await keysApi(b.mgmt, "POST", "", { name: "b" }), 201);
    expect(theirs.data.workspace_id).not.toBe(ws);
    await expectError(await keysApi(b.mgmt, "POST", "", { name: "x", workspace_id: ws }), 400, /workspace_id/);
    await expectError(await keysApi(b.mgmt, "POST", "", { name: "x", creator_user_id: a.accountId }), 400, /creator_user_id/);
  });

  it("refuses invalid bodies with 400 in the error shape, creating nothing", async () => {
    const a = await accountWithManagementKey();
    const before = await countKeys(a.accountId);
    const cases: [unknown, RegExp][] = [
      [{}, /name/],
      [{ name: "" }, /name/],
      [{ name: "   " }, /name/],
      [{ name: "x".repeat(101) }, /name/],
      [{ name: 42 }, /name/],
      [{ name: "x", rate_limit: 5 }, /Unrecognized key.*rate_limit/],
      [{ name: "x", limit_reset: "yearly" }, /limit_reset/],
      [{ name: "x", limit: -1 }, /limit/],
      [{ name: "x", limit: "5" }, /limit/],
      [{ name: "x", limit: 1.0000000001 }, /limit.*9 decimals/],
      [{ name: "x", limit: 2_000_000 }, /limit/],
      [{ name: "x", include_byok_in_limit: "yes" }, /include_byok_in_limit/],
      [{ name: "x", expires_at: "2099-01-01T00:00:00+01:00" }, /expires_at.*UTC/],
      [{ name: "x", expires_at: "2099-01-01T00:00:00" }, /expires_at/],
      [{ name: "x", expires_at: "2099-02-30T00:00:00Z" }, /expires_at/],
      [{ name: "x", expires_at: "tomorrow" }, /expires_at/],
      [{ name: "x", expires_at: "2020-01-01T00:00:00Z" }, /expires_at.*future/],
      [{ name: "x", workspace_id: "not-a-uuid" }, /workspace_id/],
      ["{not json", /not valid JSON/],
      ["[1,2]", /JSON object/],
      ["", /not valid JSON/],
    ];
    for (const [body, message] of cases) await expectError(await keysApi(a.mgmt, "POST", "", body), 400, message);
    expect(await countKeys(a.accountId)).toBe(before);
  });
});

describe("GET /keys", () => {
  it("lists the account's API keys 100 a page, newest first, without disabled keys unless asked, never management keys", async () => {
    const a = await accountWithManagementKey();
    await env.DB.prepare("DELETE FROM api_keys WHERE hash = ?").bind(a.hash).run(); // only the bulk keys below
    // 105 keys straight into D1 (3 disabled), with distinct creation times, plus a second management key.
    const base = Date.parse("2030-01-01T00:00:00Z");
    const rows = Array.from({ length: 105 }, (_, i) => ({
      hash: (i.toString(16).padStart(4, "0") + a.accountId.slice(5)).padEnd(64, "0"),
      createdAt: base + i * 1000,
      disabled: i % 40 === 7,
    }));
    await env.DB.batch(
      rows.map((r) =>
        env.DB.prepare("INSERT INTO api_keys (hash, account_id, name, label, disabled, created_at) VALUES (?, ?, ?, 'sk-sy-v1-abc...xyz', ?, ?)").bind(
          r.hash,
          a.accountId,
          `bulk ${r.createdAt}`,
          r.disabled ? 1 : 0,
          r.createdAt,
        ),
      ),
    );
    const otherMgmt = await admin<{ hash: string }>("/keys", { account: a.accountId, management: true });
    const newestFirst = [...rows].sort((x, y) => y.createdAt - x.createdAt);
    const enabled = newestFirst.filter((r) => !r.disabled).map((r) => r.hash);
    expect(enabled).toHaveLength(102);

    const page1 = (await json(await keysApi(a.mgmt, "GET"), 200)).data as Json[];
    expect(page1.map((k) => k.hash)).toEqual(enabled.slice(0, 100));
    for (const k of page1) expect(Object.keys(k).sort()).toEqual(KEY_FIELDS);
    const page2 = (await json(await keysApi(a.mgmt, "GET", "?offset=100"), 200)).data as Json[];
    expect(page2.map((k) => k.hash)).toEqual(enabled.slice(100));
    expect((await json(await keysApi(a.mgmt, "GET", "?offset=102&include_disabled=false"), 200)).data).toEqual([]);

    const all = newestFirst.map((r) => r.hash);
    const withDisabled = [
      ...((await json(await keysApi(a.mgmt, "GET", "?include_disabled=true"), 200)).data as Json[]),
      ...((await json(await keysApi(a.mgmt, "GET", "?include_disabled=true&offset=100"), 200)).data as Json[]),
    ];
    expect(withDisabled.map((k) => k.hash)).toEqual(all);
    expect(withDisabled.filter((k) => k.disabled)).toHaveLength(3);
    for (const hidden of [a.mgmtHash, otherMgmt.hash]) expect(withDisabled.some((k) => k.hash === hidden)).toBe(false);

    // The workspace filter: the account's own workspace lists the same keys.
    const ws = page1[0]!.workspace_id as string;
    expect(((await json(await keysApi(a.mgmt, "GET", `?workspace_id=${ws}`), 200)).data as Json[]).map((k) => k.hash)).toEqual(enabled.slice(0, 100));
  });

  it("refuses bad query parameters with 400", async () => {
    const a = await accountWithManagementKey();
    for (const [query, message] of [
      ["?offset=-1", /offset/],
      ["?offset=abc", /offset/],
      ["?offset=1.5", /offset/],
      ["?offset=", /offset/],
      ["?include_disabled=yes", /include_disabled/],
      ["?include_disabled=1", /include_disabled/],
      ["?limit=10", /Unrecognized key.*limit/],
      [`?workspace_id=${crypto.randomUUID()}`, /workspace_id/],
    ] as const)
      await expectError(await keysApi(a.mgmt, "GET", query), 400, message);
  });
});

describe("PATCH /keys/{hash}", () => {
  it("updates each field, stamps updated_at, and the key's next request sees the change", async () => {
    const a = await accountWithManagementKey();
    const created = await json(await keysApi(a.mgmt, "POST", "", { name: "before" }), 201);
    const { hash } = created.data;
    const key = created.key as string;
    expect((await get("/key", key)).status).toBe(200); // cached in this isolate

    const steps: [Json, Json][] = [
      [{ name: "after" }, { name: "after" }],
      [{ limit: 2.5 }, { limit: 2.5, limit_remaining: 2.5 }],
      [{ limit_reset: "weekly" }, { limit_reset: "weekly" }],
      [{ include_byok_in_limit: true }, { include_byok_in_limit: true }],
      [
        { limit: null, limit_reset: null },
        { limit: null, limit_remaining: null, limit_reset: null },
      ],
      [{ disabled: true }, { disabled: true }],
    ];
    for (const [change, expected] of steps) {
      const { data } = await json(await keysApi(a.mgmt, "PATCH", `/${hash}`, change), 200);
      expect(data, JSON.stringify(change)).toMatchObject({ ...expected, hash, created_at: created.data.created_at });
      expect(Object.keys(data).sort()).toEqual(KEY_FIELDS);
      expect(data.updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(Date.parse(data.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.data.created_at));
    }
    expect(await keyRow(hash)).toMatchObject({ name: "after", limit_nano: null, limit_reset: null, include_byok_in_limit: 1, disabled: 1 });
    await expectError(await get("/key", key), 401, /disabled/);
    // A disabled key is listed only with include_disabled=true.
    expect(((await json(await keysApi(a.mgmt, "GET"), 200)).data as Json[]).some((k) => k.hash === hash)).toBe(false);
    expect(((await json(await keysApi(a.mgmt, "GET", "?include_disabled=true"), 200)).data as Json[]).some((k) => k.hash === hash)).toBe(true);
    await json(await keysApi(a.mgmt, "PATCH", `/${hash}`, { disabled: false }), 200);
    expect((await get("/key", key)).status).toBe(200);
  });

  it("limit_remaining is measured in the window limit_reset names, in /keys and in the key's own GET /key", async () => {
    const a = await accountWithManagementKey();
    const { key, data } = await json(await keysApi(a.mgmt, "POST", "", { name: "budget", limit: 2 }), 201);
    await addOldUsage(a.accountId, data.hash, 1_500_000_000); // $1.50, spent long ago
    const expectations: [string | null, number][] = [
      [null, 0.5], // no reset: all usage ever counts
      ["daily", 2],
      ["weekly", 2],
      ["monthly", 2],
    ];
    for (const [reset, remaining] of expectations) {
      const patched = (await json(await keysApi(a.mgmt, "PATCH", `/${data.hash}`, { limit_reset: reset }), 200)).data;
      expect(patched, String(reset)).toMatchObject({
        limit: 2,
        limit_reset: reset,
        limit_remaining: remaining,
        usage: 1.5,
        usage_daily: 0,
        usage_weekly: 0,
        usage_monthly: 0,
      });
      expect((await json(await keysApi(a.mgmt, "GET", `/${data.hash}`), 200)).data.limit_remaining).toBe(remaining);
      const self = (await json(await get("/key", key), 200)).data;
      expect(self, String(reset)).toMatchObject({ limit_reset: reset, limit_remaining: remaining, usage: 1.5 });
    }
  });

  it("refuses an empty body, unknown or read-only fields and bad values with 400, changing nothing", async () => {
    const a = await accountWithManagementKey();
    const { data } = await json(await keysApi(a.mgmt, "POST", "", { name: "fixed", limit: 1 }), 201);
    for (const [body, message] of [
      [{}, /at least one/],
      [{ expires_at: FUTURE }, /Unrecognized key.*expires_at/],
      [{ hash: "f".repeat(64) }, /Unrecognized key/],
      [{ limit_reset: "hourly" }, /limit_reset/],
      [{ limit: -0.5 }, /limit/],
      [{ disabled: "true" }, /disabled/],
      [{ name: "" }, /name/],
      ["nope", /JSON/],
    ] as const)
      await expectError(await keysApi(a.mgmt, "PATCH", `/${data.hash}`, body), 400, message);
    expect(await keyRow(data.hash)).toMatchObject({ name: "fixed", limit_nano: 1_000_000_000, disabled: 0, updated_at: null });
  });
});

describe("DELETE /keys/{hash}", () => {
  it("deletes the key: {deleted: true}, then 401 for the key and 404 for its hash", async () => {
    const a = await accountWithManagementKey();
    const { key, data } = await json(await keysApi(a.mgmt, "POST", "", { name: "doomed" }), 201);
    expect((await get("/key", key)).status).toBe(200); // cached in this isolate
    expect(await json(await keysApi(a.mgmt, "DELETE", `/${data.hash}`), 200)).toEqual({ deleted: true });
    expect(await keyRow(data.hash)).toBeNull();
    await expectError(await get("/key", key), 401, /Invalid API key/);
    await expectError(await keysApi(a.mgmt, "GET", `/${data.hash}`), 404);
    await expectError(await keysApi(a.mgmt, "DELETE", `/${data.hash}`), 404);
  });
});

describe("roles", () => {
  it("any key that is not a management key gets 403 on every /keys route, and nothing changes", async () => {
    const a = await accountWithManagementKey();
    const before = await keyRow(a.hash);
    for (const [method, path, body] of [
      ["GET", "", undefined],
      ["GET", "?offset=0", undefined],
      ["POST", "", { name: "escalate" }],
      ["GET", `/${a.hash}`, undefined],
      ["PATCH", `/${a.hash}`, { limit: null }],
      ["DELETE", `/${a.hash}`, undefined],
      ["GET", `/${a.mgmtHash}`, undefined],
      ["DELETE", `/${a.mgmtHash}`, undefined],
    ] as const)
      await expectError(await keysApi(a.key, method, path, body), 403, /^Only management keys can perform this operation/);
    expect(await keyRow(a.hash)).toEqual(before);
    expect(await countKeys(a.accountId)).toBe(2);
    // Without a key (or with a bad one) it is 401, as everywhere.
    await expectError(await call("/api/v1/keys"), 401);
    await expectError(await keysApi("sk-sy-v1-" + "0".repeat(64), "GET"), 401);
  });

  it("a management key cannot run completions (403 saying what it is for), and it is recorded; GET /key and /credits work for it", async () => {
    const a = await accountWithManagementKey(5);
    const res = await chat(a.mgmt, { model: PAID, ...user("hi") });
    await expectError(res, 403, /management key.*\/api\/v1\/keys.*cannot run completions/);
    const id = res.headers.get("x-generation-id");
    expect(id).toMatch(/^gen-/); // the refusal's record, as on every chat answer
    const self = await json(await get("/key", a.mgmt), 200);
    expect(self.data).toMatchObject({ is_management_key: true, is_provisioning_key: true, usage: 0, limit: null });
    expect(await json(await get("/credits", a.mgmt), 200)).toEqual({ data: { total_credits: 5, total_usage: 0 } });
    const ordinary = await json(await get("/key", a.key), 200);
    expect(ordinary.data).toMatchObject({ is_management_key: false, is_provisioning_key: false });
    // The refusal is recorded like other failures after authentication, at cost 0.
    const totals = await settled(a.accountId);
    expect(totals.total_usage).toBe(0);
    expect((await storedRecords(a.accountId, 1)).map((g) => ({ id: g.id, status: g.status, cost_nano: g.costNano, key_hash: g.keyHash }))).toEqual([
      { id, status: 403, cost_nano: 0, key_hash: a.mgmtHash },
    ]);
  });

  it("another account's key and management keys' hashes are 404 on get, update and delete, and stay untouched", async () => {
    const a = await accountWithManagementKey();
    const b = await accountWithManagementKey();
    const secondMgmt = await admin<{ hash: string }>("/keys", { account: a.accountId, management: true });
    const targets = [b.hash, b.mgmtHash, a.mgmtHash, secondMgmt.hash, "f".repeat(64)];
    const before = await Promise.all(targets.map(keyRow));
    for (const hash of targets) {
      await expectError(await keysApi(a.mgmt, "GET", `/${hash}`), 404, /not found/);
      await expectError(await keysApi(a.mgmt, "PATCH", `/${hash}`, { disabled: true, name: "taken" }), 404, /not found/);
      await expectError(await keysApi(a.mgmt, "DELETE", `/${hash}`), 404, /not found/);
    }
    for (const bad of ["xyz", "F".repeat(64), "0".repeat(63)]) await expectError(await keysApi(a.mgmt, "GET", `/${bad}`), 404);
    expect(await Promise.all(targets.map(keyRow))).toEqual(before);
    expect((await get("/key", b.key)).status).toBe(200);
    expect((await get("/key", a.mgmt)).status).toBe(200);
    // And b's list shows none of a's keys.
    const bList = (await json(await keysApi(b.mgmt, "GET", "?include_disabled=true"), 200)).data as Json[];
    expect(bList.map((k) => k.hash)).toEqual([b.hash]);
  });

  it("browsers may call /keys with PATCH and DELETE (CORS preflight)", async () => {
    const res = await call("/api/v1/keys/abc", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "PATCH" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-methods")).toMatch(/PATCH.*DELETE|DELETE.*PATCH/);
  });
});

describe("expiry", () => {
  it("a key past its expires_at gets 401 saying when it expired; one not yet expired works", async () => {
    const a = await newAccount(1);
    const expired = await createKey(env.DB, a.accountId, "old", { expiresAt: Date.parse("2020-01-01T00:00:00Z") });
    for (const res of [await get("/key", expired.key), await get("/credits", expired.key), await chat(expired.key, { model: PAID, ...user("x") })])
      await expectError(res, 401, /^This API key expired at 2020-01-01T00:00:00\.000Z\.$/);
    const later = await createKey(env.DB, a.accountId, "later", { expiresAt: Date.parse(FUTURE) });
    expect((await json(await get("/key", later.key), 200)).data.expires_at).toBe("2099-12-31T23:59:59.000Z");
  });
});
