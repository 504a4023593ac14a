import { describe, it, expect } from "vitest";
import { admin, call, chat, get, newAccount, settled, user } from "./helpers";

const ADMIN = { authorization: "Bearer test-admin-token", "content-type": "application/json" };
const setLimit = (hash: string, limit: unknown) => call(`/admin/keys/${hash}/limit`, { method: "POST", headers: ADMIN, body: JSON.stringify({ limit }) });
const PAID = "meta-llama/llama-3.1-8b-instruct";

describe("admin: a key's credit limit", () => {
  it("a key newly given a limit is limited at once in this isolate, also for paid models admitted from the isolate's slice", async () => {
    const a = await newAccount(5);
    // No limit: paid requests are admitted from the isolate's slice, and the key sits in the isolate's key cache.
    for (let i = 0; i < 3; i++) expect((await chat(a.key, { model: PAID, ...user("spend [sim tokens=20]") })).status).toBe(200);
    const spent = (await settled(a.accountId)).total_usage;
    expect(spent).toBeGreaterThan(0);

    const res = await setLimit(a.hash, spent / 2);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ hash: a.hash, limit: spent / 2 });
    const refused = await chat(a.key, { model: PAID, ...user("one more") });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { code: number; message: string } }).error.code).toBe(402);
    expect(((await (await get("/key", a.key)).json()) as { data: { limit: number } }).data.limit).toBe(spent / 2);

    // Raised above the usage: admitted again; removed: back to no limit.
    expect((await setLimit(a.hash, spent + 1)).status).toBe(200);
    expect((await chat(a.key, { model: PAID, ...user("again") })).status).toBe(200);
    expect(await (await setLimit(a.hash, null)).json()).toMatchObject({ limit: null });
    expect(((await (await get("/key", a.key)).json()) as { data: { limit: number | null } }).data.limit).toBeNull();
  });

  it("refuses a bad limit or an unknown key with a JSON error, changing nothing", async () => {
    const a = await newAccount(1, 2);
    for (const limit of [-1, 0, "5", 2_000_000, undefined]) {
      const res = await setLimit(a.hash, limit);
      expect(res.status, String(limit)).toBe(400);
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(400);
    }
    expect((await setLimit("f".repeat(64), 1)).status).toBe(404);
    expect((await setLimit("not-a-hash", 1)).status).toBe(404);
    expect(((await (await get("/key", a.key)).json()) as { data: { limit: number } }).data.limit).toBe(2);
    expect(await admin(`/accounts/${a.accountId}`)).toMatchObject({ total_credits: 1 });
  });
});
