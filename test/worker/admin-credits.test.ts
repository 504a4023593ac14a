import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { admin, call } from "./helpers";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import { REVERSALS_STEP, migrateLedger } from "../../src/ledger/ledger-sql";

const ADMIN = { authorization: "Bearer test-admin-token", "content-type": "application/json" };
const post = (path: string, body: unknown) => call("/admin" + path, { method: "POST", headers: ADMIN, body: JSON.stringify(body) });
const email = () => `admin-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`;

type Audit = { credits_nano: number; grants: number; grants_nano: number };
type Granted = { grant_id: string; applied: boolean; total_credits: number };

describe("admin: accounts and credit grants", () => {
  it("creates an account with zero credits (a valid starting balance), which makes no grant", async () => {
    const res = await post("/accounts", { email: email(), credits: 0 });
    expect(res.status).toBe(201);
    const a = (await res.json()) as { id: string; total_credits: number };
    expect(a.total_credits).toBe(0);
    expect(await admin<Audit>(`/accounts/${a.id}/audit`)).toMatchObject({ credits_nano: 0, grants: 0, grants_nano: 0 });
  });

  it("refuses negative or non-numeric starting credits with a 400 JSON error", async () => {
    for (const credits of [-1, "10", null]) {
      const res = await post("/accounts", { email: email(), credits });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: number; message: string } }).error).toMatchObject({
        code: 400,
        message: expect.stringContaining("credits"),
      });
    }
  });

  it("a grant with an idempotency key applies once: a repeat (a lost reply retried) says so and adds nothing", async () => {
    const a = await admin<{ id: string }>("/accounts", { email: email(), credits: 1 });
    const first = await admin<Granted>(`/accounts/${a.id}/credits`, { usd: 2.5, idempotency_key: "invoice-42" });
    expect(first).toMatchObject({ grant_id: "admin:invoice-42", applied: true, total_credits: 3.5 });
    const again = await admin<Granted>(`/accounts/${a.id}/credits`, { usd: 2.5, idempotency_key: "invoice-42" });
    expect(again).toMatchObject({ grant_id: "admin:invoice-42", applied: false, total_credits: 3.5 });
    // The same key with another amount is a mistake, not a repeat: refused, nothing added.
    const conflict = await post(`/accounts/${a.id}/credits`, { usd: 3, idempotency_key: "invoice-42" });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { error: { message: string } }).error.message).toContain("invoice-42");
    // Without a key every call is a new grant.
    expect(await admin<Granted>(`/accounts/${a.id}/credits`, { usd: 1 })).toMatchObject({ applied: true, total_credits: 4.5 });
    // The audit: credits = Σ grants (account creation, the keyed grant once, the unkeyed one).
    expect(await admin<Audit>(`/accounts/${a.id}/audit`)).toMatchObject({ credits_nano: 4_500_000_000, grants: 3, grants_nano: 4_500_000_000 });
  });

  it("refuses a malformed idempotency key or a non-positive grant with a 400 JSON error", async () => {
    const a = await admin<{ id: string }>("/accounts", { email: email() });
    for (const body of [
      { usd: 1, idempotency_key: "" },
      { usd: 1, idempotency_key: "has space" },
      { usd: 1, idempotency_key: "x".repeat(101) },
      { usd: 0 },
      { usd: -1 },
    ]) {
      const res = await post(`/accounts/${a.id}/credits`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await admin<Audit>(`/accounts/${a.id}/audit`)).toMatchObject({ credits_nano: 0, grants: 0 });
  });
});

describe("ledger reversals (refunds, disputes): credits = Σ grants − Σ reversals", () => {
  it("a grant's reversal is set to a total, raised or lowered, at most the grant; an older reading changes nothing; a missing grant is refused", async () => {
    const ledger = env.LEDGER.get(env.LEDGER.idFromName(`reversals-${Date.now()}-${Math.random()}`));
    await ledger.grant({ grantId: "payment:p1", amountNano: 1000, source: "console-payment" });
    const rev = (amountNano: number, observedAt: number) => ledger.reverse({ grantId: "payment:p1", amountNano, observedAt, source: "stripe" });
    expect(await rev(300, 10)).toMatchObject({ changeNano: 300, reversedNano: 300, stale: false, totals: { creditsNano: 700 } });
    expect(await rev(300, 10)).toMatchObject({ changeNano: 0, reversedNano: 300 }); // a duplicate
    // More than the grant (a refund of the fee too, a dispute over a refund): all of it, no more.
    expect(await rev(1800, 20)).toMatchObject({ changeNano: 700, reversedNano: 1000, totals: { creditsNano: 0 } });
    // Lowered (a dispute won): given back.
    expect(await rev(200, 30)).toMatchObject({ changeNano: -800, reversedNano: 200, totals: { creditsNano: 800 } });
    // A state read before the one stored (an event processed late beside a newer one): nothing changes.
    expect(await rev(1000, 25)).toMatchObject({ changeNano: 0, reversedNano: 200, stale: true, totals: { creditsNano: 800 } });
    expect(await ledger.grantsSummary()).toEqual({ count: 1, totalNano: 1000, reversals: 1, reversedNano: 200 });
    // Refusals, called in the object itself (a thrown RPC error would surface twice in the test runner).
    await runInDurableObject(ledger, (instance: LedgerObject) => {
      expect(() => instance.reverse({ grantId: "payment:none", amountNano: 1, observedAt: 40, source: "test" })).toThrow(/no grant/);
      expect(() => instance.reverse({ grantId: "payment:p1", amountNano: -1, observedAt: 40, source: "test" })).toThrow(RangeError);
      expect(() => instance.reverse({ grantId: "payment:p1", amountNano: 1, observedAt: Number.NaN, source: "test" })).toThrow(RangeError);
    });
    expect((await ledger.totals()).creditsNano).toBe(800);
  });

  it("reversal rows of earlier deployments (one per refund, one per dispute) fold into one per grant that adds up to the same credits", async () => {
    const ledger = env.LEDGER.get(env.LEDGER.idFromName(`reversals-migration-${Date.now()}-${Math.random()}`));
    await ledger.grant({ grantId: "payment:a", amountNano: 1000, source: "console-payment" });
    await ledger.grant({ grantId: "payment:b", amountNano: 500, source: "console-payment" });
    await runInDurableObject(ledger, (_instance: LedgerObject, state) => {
      const sql = state.storage.sql;
      // The schema and rows an earlier deployment left: its reversals table, credits already net of them.
      sql.exec("DROP TABLE reversals");
      sql.exec(
        "CREATE TABLE reversals (reversal_id TEXT PRIMARY KEY, grant_id TEXT NOT NULL, amount_nano INTEGER NOT NULL, final INTEGER NOT NULL, source TEXT NOT NULL, updated_at INTEGER NOT NULL)",
      );
      const old = [
        ["payment:a:refund", "payment:a", 300, 0, "stripe-refund"],
        ["payment:a:dispute:dp_1", "payment:a", 0, 1, "stripe-dispute"],
        ["payment:a:dispute:dp_2", "payment:a", 400, 0, "stripe-dispute"],
        ["payment:b:refund", "payment:b", 500, 0, "stripe-refund"],
      ] as const;
      for (const [id, grant, amount, final, source] of old) sql.exec("INSERT INTO reversals VALUES (?, ?, ?, ?, ?, 1)", id, grant, amount, final, source);
      sql.exec("UPDATE account SET credits_nano = credits_nano - 1200");
      sql.exec("UPDATE ledger_migrations SET done = ?", REVERSALS_STEP);
      migrateLedger(sql);
    });
    expect(await ledger.grantsSummary()).toEqual({ count: 2, totalNano: 1500, reversals: 2, reversedNano: 1200 });
    expect((await ledger.totals()).creditsNano).toBe(300);
    // The next reading of Stripe's state replaces a folded row (its observed_at is 0).
    expect(await ledger.reverse({ grantId: "payment:a", amountNano: 300, observedAt: 1, source: "stripe" })).toMatchObject({
      changeNano: -400,
      totals: { creditsNano: 700 },
    });
  });
});
