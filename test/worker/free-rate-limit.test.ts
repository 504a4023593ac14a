import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import type { FreeLimits } from "../../src/ledger/free-limits";
import type { NewGeneration } from "../../src/db/schema";
import { ledgerRecord } from "./synthetic-record";
import { admin, chat, generation, newAccount, settled, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { chatWithVars } from "./with-vars";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

const catalog = Catalog.parse(catalogJson);
const FREE = "openai/gpt-oss-20b:free";
const PAID = "meta-llama/llama-3.1-8b-instruct";
// A request that failed (500) before any carrier served it: what a free request leaves when it is refused.
const record = (id: string): NewGeneration =>
  ledgerRecord(id, {
    accountId: "x",
    model: FREE,
    providerName: null,
    latencyMs: null,
    generationTimeMs: null,
    tokensPrompt: 0,
    tokensCompletion: 0,
    finishReason: null,
    status: 500,
  });

/** Runs `fn` against a fresh ledger whose clock the test moves, with `grantedUsd` of credits. */
async function withLedger(grantedUsd: number, fn: (ledger: LedgerObject, clock: { set(iso: string): void; add(ms: number): void }) => void) {
  const stub = env.LEDGER.get(env.LEDGER.idFromName("free-limits-" + crypto.randomUUID()));
  await runInDurableObject(stub, (instance) => {
    const ledger = instance as LedgerObject;
    let now = Date.parse("2026-11-23T10:00:00Z");
    ledger.clock = () => now;
    if (grantedUsd > 0) ledger.grant({ grantId: "credits", amountNano: grantedUsd * 1e9, source: "test" });
    fn(ledger, { set: (iso) => (now = Date.parse(iso)), add: (ms) => (now += ms) });
  });
}

let n = 0;
const admitFree = (ledger: LedgerObject, free: FreeLimits, keyHash = "k") =>
  ledger.admit({ genId: `f${++n}`, keyHash, limitNano: null, holdNano: 0, paid: false, free, abandoned: record(`f${n}`) });

describe("free-model rate limits, counted by the account's ledger", () => {
  const perMinute: FreeLimits = { perMinute: 20, perDay: 1000, perDayBought: 1000, boughtNano: 10e9 };

  it("20 a sliding minute: the 21st is refused until the oldest of the 20 is a minute old; refusals are not counted", async () => {
    await withLedger(0, (ledger, clock) => {
      const t0 = Date.parse("2026-11-23T10:00:00Z");
      for (let i = 0; i < 20; i++) {
        expect(admitFree(ledger, perMinute)).toMatchObject({ ok: true });
        clock.add(1_000); // one a second: t0 … t0 + 19 s
      }
      // now t0 + 20 s: the first frees a slot 40 s from now
      expect(admitFree(ledger, perMinute)).toEqual({ ok: false, reason: "rate_limit", window: "minute", limit: 20, resetAt: t0 + 60_000, retryAfterS: 40 });
      // The limit lowered to 18 with 20 in the window: a slot frees once three have left.
      expect(admitFree(ledger, { ...perMinute, perMinute: 18 })).toMatchObject({ ok: false, limit: 18, resetAt: t0 + 62_000 });
      expect(admitFree(ledger, perMinute)).toMatchObject({ ok: false, window: "minute" });
      clock.set("2026-11-23T10:01:00Z"); // the first is now a minute old: one slot
      expect(admitFree(ledger, perMinute)).toMatchObject({ ok: true });
      expect(admitFree(ledger, perMinute)).toEqual({ ok: false, reason: "rate_limit", window: "minute", limit: 20, resetAt: t0 + 61_000, retryAfterS: 1 });
    });
  });

  it.each([
    ["under $10 of credits bought: 3 a day", 9, 3],
    ["$10 or more bought: 5 a day", 10, 5],
  ])("%s (limits configured small), reset at 00:00 UTC", async (_name, grantedUsd, perDay) => {
    const small: FreeLimits = { perMinute: 1000, perDay: 3, perDayBought: 5, boughtNano: 10e9 };
    await withLedger(grantedUsd, (ledger, clock) => {
      clock.set("2026-11-23T23:59:00Z");
      for (let i = 0; i < perDay; i++) expect(admitFree(ledger, small, `key${i % 2}`)).toMatchObject({ ok: true }); // any of the account's keys
      const midnight = Date.parse("2026-11-24T00:00:00Z");
      expect(admitFree(ledger, small)).toEqual({ ok: false, reason: "rate_limit", window: "day", limit: perDay, resetAt: midnight, retryAfterS: 60 });
      // Paid requests are not counted or limited.
      expect(ledger.admit({ genId: `p${++n}`, keyHash: "k", limitNano: null, holdNano: 0, paid: true, abandoned: record(`p${n}`) })).toEqual(
        grantedUsd > 0 ? { ok: true, holdNano: 0 } : { ok: false, reason: "balance", availableNano: 0 },
      );
      clock.set("2026-11-24T00:00:00Z");
      for (let i = 0; i < perDay; i++) expect(admitFree(ledger, small)).toMatchObject({ ok: true });
      expect(admitFree(ledger, small)).toMatchObject({ ok: false, window: "day" });
    });
  });

  it("a plan mixing free and priced endpoints: a free slot while one is left, else only the priced ones if the balance pays, else 429", async () => {
    const one: FreeLimits = { perMinute: 1, perDay: 1000, perDayBought: 1000, boughtNano: 10e9 };
    const mixed = (ledger: LedgerObject, genId: string) =>
      ledger.admit({ genId, keyHash: "k", limitNano: null, holdNano: 500, paid: true, free: one, abandoned: record(genId) });
    await withLedger(1, (ledger) => {
      expect(mixed(ledger, "m1")).toMatchObject({ ok: true }); // a slot counted, the hold kept for the priced ones
      expect(ledger.totals().heldNano).toBe(500);
      expect(mixed(ledger, "m2")).toEqual({ ok: true, route: "paid_only", holdNano: 500 });
    });
    await withLedger(0, (ledger) => {
      expect(mixed(ledger, "m1")).toEqual({ ok: true, route: "free_only", holdNano: 0 }); // nothing to pay with: no hold
      expect(ledger.totals().heldNano).toBe(0);
      expect(mixed(ledger, "m2")).toMatchObject({ ok: false, reason: "rate_limit", window: "minute" });
    });
  });

  it("a settle that gives a free slot back frees it in the minute and the day, once however often it is retried", async () => {
    const small: FreeLimits = { perMinute: 1000, perDay: 2, perDayBought: 2, boughtNano: 10e9 };
    await withLedger(1, (ledger) => {
      expect(ledger.admit({ genId: "m1", keyHash: "k", limitNano: null, holdNano: 500, paid: true, free: small, abandoned: record("m1") })).toEqual({
        ok: true,
        holdNano: 500,
      });
      expect(admitFree(ledger, small)).toMatchObject({ ok: true }); // the day is now full
      expect(admitFree(ledger, small)).toMatchObject({ ok: false, window: "day" });
      const served = { genId: "m1", keyHash: "k", costNano: 40, record: record("m1"), releaseFreeSlot: true };
      ledger.settleBatch([served]);
      ledger.settleBatch([served]); // a retry gives nothing back twice
      expect(admitFree(ledger, small)).toMatchObject({ ok: true });
      expect(admitFree(ledger, small)).toMatchObject({ ok: false, window: "day" });
    });
  });

  it("buying credits during the day raises the day's limit at once", async () => {
    const small: FreeLimits = { perMinute: 1000, perDay: 2, perDayBought: 4, boughtNano: 10e9 };
    await withLedger(5, (ledger) => {
      expect([admitFree(ledger, small), admitFree(ledger, small)]).toMatchObject([{ ok: true }, { ok: true }]);
      expect(admitFree(ledger, small)).toMatchObject({ ok: false, window: "day", limit: 2 });
      ledger.grant({ grantId: "payment", amountNano: 5e9, source: "console-payment" }); // $10 in all
      expect([admitFree(ledger, small), admitFree(ledger, small)]).toMatchObject([{ ok: true }, { ok: true }]);
      expect(admitFree(ledger, small)).toMatchObject({ ok: false, window: "day", limit: 4 });
    });
  });
});

describe("free-model rate limits over HTTP", () => {
  type ErrorBody = { error: { code: number; message: string; metadata: Record<string, unknown> } };
  const inLedger = <R>(accountId: string, fn: (ledger: LedgerObject) => R) =>
    runInDurableObject(env.LEDGER.get(env.LEDGER.idFromName(accountId)), (o) => fn(o as LedgerObject));
  /** Pins the account's ledger clock (the windows' time) at `start`; the returned function moves it. */
  async function pinClock(accountId: string, start: number): Promise<(to: number) => void> {
    let now = start;
    await inLedger(accountId, (ledger) => void (ledger.clock = () => now));
    return (to) => void (now = to);
  }
  const headers = (res: Response) =>
    Object.fromEntries(["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"].map((h) => [h, res.headers.get(h)]));

  it("20 a minute (the default) per account across keys: the 21st gets 429 with the headers, recorded with cost 0, no carrier called; zero-priced models share it; other accounts and paid traffic unaffected", async () => {
    const a = await newAccount(1);
    const second = await admin<{ key: string }>("/keys", { account: a.accountId });
    const t0 = Date.parse("2026-11-23T10:00:00Z");
    const moveClock = await pinClock(a.accountId, t0);
    for (let i = 0; i < 20; i++) {
      const res = await chat(i % 2 ? second.key : a.key, { model: FREE, ...user(`free ${i} [sim tokens=2]`) });
      expect(res.status, `request ${i}`).toBe(200);
      await res.arrayBuffer();
    }
    const tag = uniqueTag();
    for (const key of [a.key, second.key]) {
      const refused = await chat(key, { model: FREE, ...user(`one too many [sim tag=${tag}]`) });
      expect(refused.status).toBe(429);
      expect(headers(refused)).toEqual({
        "x-ratelimit-limit": "20",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(t0 + 60_000),
        "retry-after": "60",
      });
      const body = (await refused.json()) as ErrorBody;
      expect(body.error).toMatchObject({ code: 429, metadata: { error_type: "rate_limit_exceeded", window: "minute" } });
      expect(body.error.message).toMatch(/at most 20 requests a minute to free models/);
      const id = refused.headers.get("x-generation-id");
      expect(id).toMatch(/^gen-/);
      expect(await generation(key, id!)).toMatchObject({ status: 429, total_cost: 0, provider_name: null });
    }
    expect(await simRequests(tag)).toEqual([]); // no carrier called

    const zeroPriced = "meta-llama/llama-3.3-70b-instruct:free";
    expect((await chat(a.key, { model: zeroPriced, ...user("x") })).status).toBe(429);
    expect((await chat(a.key, { model: PAID, ...user("paid, same account [sim tokens=2]") })).status).toBe(200);
    const other = await newAccount(0);
    expect((await chat(other.key, { model: FREE, ...user("another account [sim tokens=2]") })).status).toBe(200);

    moveClock(t0 + 59_999);
    expect(headers(await chat(a.key, { model: FREE, ...user("x") }))["retry-after"]).toBe("1");
    moveClock(t0 + 60_000);
    expect((await chat(second.key, { model: FREE, ...user("a minute later [sim tokens=2]") })).status).toBe(200);
  });

  it("the daily limit (configured 2, and 4 from $10 of credits) over HTTP: refused until 00:00 UTC, raised by a grant", async () => {
    const vars = { FREE_REQUESTS_PER_DAY: "2", FREE_REQUESTS_PER_DAY_BOUGHT: "4", FREE_BOUGHT_THRESHOLD_USD: "10" };
    const a = await newAccount(5);
    const t0 = Date.parse("2026-11-23T23:00:00Z");
    const midnight = Date.parse("2026-11-24T00:00:00Z");
    const moveClock = await pinClock(a.accountId, t0);
    const send = async (model = FREE) => {
      const { res, settled } = await chatWithVars(vars, a.key, { model, ...user("hi [sim tokens=1]") });
      await res.arrayBuffer();
      await settled();
      return res;
    };
    expect([(await send()).status, (await send()).status]).toEqual([200, 200]);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(headers(refused)).toEqual({ "x-ratelimit-limit": "2", "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(midnight), "retry-after": "3600" });
    expect((await send(PAID)).status).toBe(200);

    await admin(`/accounts/${a.accountId}/credits`, { usd: 5 }); // $10 granted in all
    expect([(await send()).status, (await send()).status]).toEqual([200, 200]);
    expect(headers(await send())["x-ratelimit-limit"]).toBe("4");
    moveClock(midnight - 1);
    expect((await send()).status).toBe(429);
    moveClock(midnight);
    expect((await send()).status).toBe(200);
  });

  it("a paid fallback cannot opt out: a free model served in a mixed plan counts; past the limit the paid fallback serves it, charged", async () => {
    const a = await newAccount(1);
    const t0 = Date.parse("2026-11-23T10:00:00Z");
    await pinClock(a.accountId, t0);
    const mixed = { model: FREE, models: [PAID] };
    const served: string[] = [];
    let charged = 0;
    for (let i = 0; i < 26; i++) {
      const res = await chat(a.key, { ...mixed, ...user(`mixed ${i} [sim tokens=2]`) });
      const body = (await res.json()) as { model: string; usage: { cost: number } };
      expect(res.status, `request ${i}`).toBe(200);
      served.push(body.model);
      charged += body.usage.cost;
    }
    expect(served).toEqual([...Array(20).fill(FREE), ...Array(6).fill(PAID)]);
    expect(charged).toBeGreaterThan(0);
    const refused = await chat(a.key, { model: FREE, ...user("plain free") });
    expect(refused.status).toBe(429);
    const usage = (await settled(a.accountId)).total_usage;
    expect(Math.round(usage * 1e9)).toBe(Math.round(charged * 1e9));
  });

  it("a mixed plan whose free carrier fails and a priced one serves gives its free slot back", async () => {
    const vars = { FREE_REQUESTS_PER_MINUTE: "2" };
    const a = await newAccount(1);
    await pinClock(a.accountId, Date.parse("2026-11-23T10:00:00Z"));
    const send = async (body: object) => {
      const { res, settled: done } = await chatWithVars(vars, a.key, body);
      const json = (await res.json()) as { model?: string };
      await done();
      return { status: res.status, model: json.model };
    };
    const freeCarrier = catalog.endpoints(FREE)[0]!.provider;
    for (let i = 0; i < 3; i++)
      expect(await send({ model: FREE, models: [PAID], ...user(`x ${i} [sim carrier=${freeCarrier} status=503] [sim tokens=2]`) })).toEqual({
        status: 200,
        model: PAID,
      });
    // Three served by the paid fallback: none took a slot, so two plain free requests still fit in the minute.
    expect((await send({ model: FREE, ...user("a [sim tokens=2]") })).status).toBe(200);
    expect((await send({ model: FREE, ...user("b [sim tokens=2]") })).status).toBe(200);
    expect((await send({ model: FREE, ...user("c") })).status).toBe(429);
  });

  it("an empty balance: a mixed plan is served by its free model; once the free limit is reached it gets 429, never 402", async () => {
    const vars = { FREE_REQUESTS_PER_MINUTE: "1" };
    const a = await newAccount(0);
    await pinClock(a.accountId, Date.parse("2026-11-23T10:00:00Z"));
    const first = await chatWithVars(vars, a.key, { model: PAID, models: [FREE], ...user("x [sim tokens=2]") });
    expect(first.res.status).toBe(200);
    expect(((await first.res.json()) as { model: string }).model).toBe(FREE);
    await first.settled();
    const second = await chatWithVars(vars, a.key, { model: PAID, models: [FREE], ...user("x [sim tokens=2]") });
    expect(second.res.status).toBe(429);
    await second.settled();
    expect((await chat(a.key, { model: PAID, ...user("x") })).status).toBe(402);
  });

  it("a catalog whose :free model has a price is refused, so every :free model is billed and limited as free", () => {
    const priced = structuredClone(catalogJson) as { models: Array<{ id: string; endpoints: Array<{ input_price_per_1m: number }> }> };
    priced.models.find((m) => m.id === FREE)!.endpoints[0]!.input_price_per_1m = 0.1;
    expect(() => Catalog.parse(priced)).toThrow(/a :free model must be priced 0/);
  });
});
