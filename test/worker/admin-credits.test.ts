import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { admin, call } from "./helpers";
import type { LedgerObject } from "../../src/ledger/ledger-object";

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
  it("a reversal is raised, never lowered, unless final; all of a grant's reversals stay within it; a missing grant is refused", async () => {
    const ledger = env.LEDGER.get(env.LEDGER.idFromName(`reversals-${Date.now()}-${Math.random()}`));
    await ledger.grant({ grantId: "payment:p1", amountNano: 1000, source: "console-payment" });
    const rev = (reversalId: string, amountNano: number, final = false) =>
      ledger.reverse({ reversalId, grantId: "payment:p1", amountNano, final, source: "test" });
    expect(await rev("payment:p1:refund", 300)).toMatchObject({ changeNano: 300, reversedNano: 300, totals: { creditsNano: 700 } });
    expect(await rev("payment:p1:refund", 200)).toMatchObject({ changeNano: 0, reversedNano: 300 }); // an older cumulative figure
    expect(await rev("payment:p1:refund", 300)).toMatchObject({ changeNano: 0 }); // a duplicate
    // A dispute for more than is left takes only what is left of the grant.
    expect(await rev("payment:p1:dispute:dp_1", 900)).toMatchObject({ changeNano: 700, reversedNano: 700, totals: { creditsNano: 0 } });
    // Won (final): given back; a later non-final ask changes nothing.
    expect(await rev("payment:p1:dispute:dp_1", 0, true)).toMatchObject({ changeNano: -700, totals: { creditsNano: 700 } });
    expect(await rev("payment:p1:dispute:dp_1", 900)).toMatchObject({ changeNano: 0, reversedNano: 0, totals: { creditsNano: 700 } });
    expect(await ledger.grantsSummary()).toEqual({ count: 1, totalNano: 1000, reversals: 2, reversedNano: 300 });
    // Refusals, called in the object itself (a thrown RPC error would surface twice in the test runner).
    await runInDurableObject(ledger, (instance: LedgerObject) => {
      expect(() => instance.reverse({ reversalId: "x", grantId: "payment:none", amountNano: 1, final: false, source: "test" })).toThrow(/no grant/);
      expect(() => instance.reverse({ reversalId: "x", grantId: "payment:p1", amountNano: -1, final: false, source: "test" })).toThrow(RangeError);
    });
    expect((await ledger.totals()).creditsNano).toBe(700);
  });
});
