import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import type { LimitReset } from "../../src/keys/usage-windows";
import type { NewGeneration } from "../../src/db/schema";
import { ledgerRecord } from "./synthetic-record";
import { NO_USAGE } from "../../src/keys/key-usage";
import { admin, chat, get, newAccount, settled, user } from "./helpers";

const MODEL = "meta-llama/llama-3.1-8b-instruct";
const record = (id: string, costNano: number): NewGeneration => ledgerRecord(id, { accountId: "x", model: MODEL, costNano });

/** Runs `fn` against a fresh ledger whose clock the test sets. */
async function withLedger(fn: (ledger: LedgerObject, setNow: (iso: string) => void) => void) {
  const stub = env.LEDGER.get(env.LEDGER.idFromName("key-budget-" + crypto.randomUUID()));
  await runInDurableObject(stub, (instance) => {
    const ledger = instance as LedgerObject;
    let now = 0;
    ledger.clock = () => now;
    const setNow = (iso: string) => (now = Date.parse(iso));
    setNow("2026-11-01T00:00:00Z");
    ledger.grant({ grantId: "credits", amountNano: 1_000_000, source: "test" });
    fn(ledger, setNow);
  });
}

let n = 0;
const admit = (ledger: LedgerObject, limitReset: LimitReset | null, holdNano = 10) =>
  ledger.admit({ genId: `g${++n}`, keyHash: "k", limitNano: 1000, limitReset, holdNano, paid: true, abandoned: record(`g${n}`, 0) });
/** Admits and settles one request of `costNano` on key "k". */
function spend(ledger: LedgerObject, limitReset: LimitReset | null, costNano: number) {
  expect(admit(ledger, limitReset)).toMatchObject({ ok: true });
  ledger.settleBatch([{ genId: `g${n}`, keyHash: "k", costNano, record: record(`g${n}`, costNano) }]);
}

describe("key budgets that reset: the ledger holds the limit to the current window", () => {
  // Spend the whole limit of 1000 just before the boundary: refused there; at the boundary a
  // resetting key is admitted again, a key without a reset never is.
  it.each([
    ["daily", "2026-11-22T23:59:59.999Z", "2026-11-23T00:00:00.000Z"],
    ["weekly", "2026-11-22T23:59:59.999Z", "2026-11-23T00:00:00.000Z"], // Sunday → Monday
    ["monthly", "2026-11-30T23:59:59.999Z", "2026-12-01T00:00:00.000Z"],
    [null, "2026-11-30T23:59:59.999Z", "2026-12-01T00:00:00.000Z"],
  ] as const)("%s: spent before %s, admitted again from %s", async (reset, before, boundary) => {
    await withLedger((ledger, setNow) => {
      setNow(before);
      spend(ledger, reset, 1000);
      expect(admit(ledger, reset)).toMatchObject({ ok: false, reason: "key_limit" });
      setNow(boundary);
      expect(admit(ledger, reset)).toMatchObject(reset === null ? { ok: false, reason: "key_limit" } : { ok: true });
    });
  });

  it("a daily budget is not reset within the day, and a weekly one not at a day boundary inside the week", async () => {
    await withLedger((ledger, setNow) => {
      setNow("2026-11-23T00:00:00Z"); // Monday
      spend(ledger, "weekly", 600);
      setNow("2026-11-24T00:00:00Z");
      spend(ledger, "weekly", 400);
      expect(admit(ledger, "weekly")).toMatchObject({ ok: false, reason: "key_limit" }); // 1000 spent this week
      expect(admit(ledger, "daily")).toMatchObject({ ok: true }); // 400 spent today
      setNow("2026-11-24T23:59:59Z");
      spend(ledger, "daily", 590); // holds the one admitted above (10) plus this: 400 + 590 + 10 = 1000
      expect(admit(ledger, "daily")).toMatchObject({ ok: false, reason: "key_limit" });
    });
  });

  it("running requests' holds count against the window: no overdraft of the budget at a boundary", async () => {
    await withLedger((ledger, setNow) => {
      setNow("2026-11-22T23:59:00Z");
      spend(ledger, "daily", 900);
      setNow("2026-11-23T00:00:00Z");
      expect(admit(ledger, "daily", 600)).toMatchObject({ ok: true }); // new day: 0 spent
      expect(admit(ledger, "daily", 400)).toMatchObject({ ok: true }); // 600 held
      expect(admit(ledger, "daily", 1)).toMatchObject({ ok: false, reason: "key_limit" }); // 1000 held: the budget is taken
    });
  });

  it("usage_daily, usage_weekly and usage_monthly follow the windows across boundaries", async () => {
    await withLedger((ledger, setNow) => {
      setNow("2026-11-30T10:00:00Z"); // Monday, last day of November
      spend(ledger, null, 100);
      setNow("2026-12-01T10:00:00Z"); // Tuesday, same week, new month
      spend(ledger, null, 20);
      expect(ledger.keyUsage("k")).toEqual({ ...NO_USAGE, usageNano: 120, dailyNano: 20, weeklyNano: 120, monthlyNano: 20 });
      setNow("2026-12-07T00:00:00Z"); // next Monday
      expect(ledger.keyUsage("k")).toEqual({ ...NO_USAGE, usageNano: 120, dailyNano: 0, weeklyNano: 0, monthlyNano: 20 });
    });
  });
});

describe("402 says which limit was reached (metadata.limit_source)", () => {
  type ErrorBody = { error: { code: number; message: string; metadata?: Record<string, unknown> } };

  it("key_limit for a key's budget, credits for an empty balance", async () => {
    // A $0.000001 key limit does not pay even the prompt of a request: refused before anything is spent, with the figures.
    const tiny = await newAccount(5, 0.000001);
    const short = await chat(tiny.key, { model: MODEL, ...user("spend [sim tokens=20]") });
    expect(short.status).toBe(402);
    const shortBody = (await short.json()) as ErrorBody;
    expect(shortBody.error.metadata).toMatchObject({ limit_source: "key_limit", affordable_prompt_tokens: expect.any(Number) });
    expect(shortBody.error.message).toMatch(/^Prompt tokens limit exceeded: \d+ > \d+\..*this API key's remaining limit pays for \d+\..*\/settings\/keys/);
    expect((await settled(tiny.accountId)).total_usage).toBe(0);

    // A key whose limit was lowered below what it spent has reached it.
    const limited = await newAccount(5, 1);
    expect((await chat(limited.key, { model: MODEL, ...user("spend [sim tokens=20]") })).status).toBe(200);
    await settled(limited.accountId);
    await admin(`/keys/${limited.hash}/limit`, { limit: 0.000001 });
    const overLimit = await chat(limited.key, { model: MODEL, ...user("more") });
    expect(overLimit.status).toBe(402);
    const keyBody = (await overLimit.json()) as ErrorBody;
    expect(keyBody.error.metadata).toEqual({ limit_source: "key_limit" });
    expect(keyBody.error.message).toMatch(/reached its credit limit of \$0\.000001/);

    const broke = await newAccount(0);
    const empty = await chat(broke.key, { model: MODEL, ...user("hi") });
    expect(empty.status).toBe(402);
    const creditsBody = (await empty.json()) as ErrorBody;
    expect(creditsBody.error.metadata).toEqual({ limit_source: "credits" });
    expect(creditsBody.error.message).toMatch(/Add credits at https:\/\/switchyard\.test\/settings\/credits/);
  });

  it("a key with a daily budget: the 402 names the period and when it resets; /key reports the window's remaining", async () => {
    const a = await newAccount(5);
    await env.DB.prepare("UPDATE api_keys SET limit_nano = 1000000000, limit_reset = 'daily' WHERE hash = ?").bind(a.hash).run();
    // The key was never used, so no isolate has cached it: the next request reads the row above.
    expect((await chat(a.key, { model: MODEL, ...user("spend [sim tokens=20]") })).status).toBe(200);
    await settled(a.accountId);
    await admin(`/keys/${a.hash}/limit`, { limit: 0.000000001 }); // below what it spent today
    const res = await chat(a.key, { model: MODEL, ...user("more") });
    expect(res.status).toBe(402);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.metadata).toMatchObject({ limit_source: "key_limit", limit_reset: "daily" });
    expect(body.error.message).toMatch(/reached its daily credit limit of \$0\.000000001; it resets at \d{4}-\d\d-\d\dT00:00:00\.000Z/);
    const key = ((await (await get("/key", a.key)).json()) as { data: { limit_reset: string | null } }).data;
    expect(key.limit_reset).toBe("daily");
  });
});
