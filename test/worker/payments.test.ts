import { describe, it, expect } from "vitest";
import { env, createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { admin } from "./helpers";
import { csrfOf, signUp, textOf, type ConsoleClient } from "./console-helpers";
import { pay, ledgerGrant, type PaymentDeps } from "../../src/payments/payment-flow";
import { reconcilePayments } from "../../src/payments/reconcile";
import { testCardProvider } from "../../src/payments/test-card-provider";
import type { PaymentProvider } from "../../src/payments/payment-provider";

// The console's add-credits flow: begin (pending) → charge (idempotency key = payment id) → charged +
// reference → grant `payment:<id>` → succeeded. A crash or a lost reply at any step is resumed by the
// same form sent again or by reconciliation, and never charges or grants twice.

const CARD = { card_number: "4242 4242 4242 4242", card_expiry: "12/40", card_cvc: "123" };
const USD = 1_000_000_000;
type Audit = { credits_nano: number; grants: number; grants_nano: number };
type PaymentRow = { id: string; status: string; reference: string | null; amount_nano: number };

const audit = (accountId: string) => admin<Audit>(`/accounts/${accountId}/audit`);
const paymentRows = async (accountId: string) =>
  (await env.DB.prepare("SELECT id, status, reference, amount_nano FROM payments WHERE account_id = ? ORDER BY created_at").bind(accountId).all<PaymentRow>())
    .results;
const charges = async (paymentId: string) =>
  (
    await env.DB.prepare("SELECT reference, amount_nano FROM test_card_charges WHERE payment_id = ?")
      .bind(paymentId)
      .all<{ reference: string; amount_nano: number }>()
  ).results;

/** The add-credits form as the page renders it: its one-time payment id and CSRF token. */
async function paymentForm(client: ConsoleClient): Promise<{ paymentId: string; csrf: string }> {
  const html = (await client.page("/settings/credits")).html;
  return { paymentId: /name="payment_id" value="([^"]+)"/.exec(html)![1]!, csrf: csrfOf(html) };
}
/** Sends the form as the browser does on a resubmit: no page load in between (a page load reconciles). */
const submit = (client: ConsoleClient, form: { paymentId: string; csrf: string }, amount = "10") =>
  client.post("/settings/credits", { payment_id: form.paymentId, amount, ...CARD }, { csrf: form.csrf });

type Step = "begun" | "charged, reply lost" | "charged" | "granted";
const STEPS: Step[] = ["begun", "charged, reply lost", "charged", "granted"];

/** The state a crash right after `step` leaves behind, for a payment of `amountNano` made with form `paymentId`. */
async function crashAfter(step: Step, accountId: string, paymentId: string, amountNano: number, createdAt = Date.now()): Promise<void> {
  await env.DB.prepare(
    "INSERT INTO payments (id, account_id, provider, amount_nano, status, reference, created_at) VALUES (?, ?, 'test-card', ?, 'pending', NULL, ?)",
  )
    .bind(paymentId, accountId, amountNano, createdAt)
    .run();
  if (step === "begun") return;
  await env.DB.prepare("INSERT INTO test_card_charges (payment_id, account_id, amount_nano, reference, created_at) VALUES (?, ?, ?, ?, ?)")
    .bind(paymentId, accountId, amountNano, `test_${paymentId.slice(-8)}`, createdAt)
    .run();
  if (step === "charged, reply lost") return;
  await env.DB.prepare("UPDATE payments SET status = 'charged', reference = ? WHERE id = ?")
    .bind(`test_${paymentId.slice(-8)}`, paymentId)
    .run();
  if (step === "charged") return;
  await env.LEDGER.get(env.LEDGER.idFromName(accountId)).grant({ grantId: `payment:${paymentId}`, amountNano, source: "console-payment" });
}

/** Runs the Worker's Cron Trigger handler (the default export's `scheduled`) as Cloudflare would. */
async function cron(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("add credits: a repeat at every step never charges or grants twice", () => {
  for (const step of STEPS)
    it(`the same form sent again after a crash once "${step}" finishes the payment, once`, async () => {
      const { client, accountId } = await signUp();
      const form = await paymentForm(client);
      const { paymentId } = form;
      await crashAfter(step, accountId, paymentId, 10 * USD);

      // The resubmitted form (its amount edited: the amount recorded first is what counts).
      const res = await submit(client, form, "50");
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/settings/credits?done=added");
      expect(await audit(accountId)).toMatchObject({ credits_nano: 10 * USD, grants: 1, grants_nano: 10 * USD });
      expect(await paymentRows(accountId)).toEqual([{ id: paymentId, status: "succeeded", reference: expect.stringMatching(/^test_/), amount_nano: 10 * USD }]);
      expect(await charges(paymentId)).toEqual([{ reference: (await paymentRows(accountId))[0]!.reference, amount_nano: 10 * USD }]);

      // And once more: processed already, nothing added.
      const again = await submit(client, form);
      expect(again.headers.get("location")).toBe("/settings/credits?done=duplicate");
      expect(await audit(accountId)).toMatchObject({ credits_nano: 10 * USD, grants: 1 });
      expect(await charges(paymentId)).toHaveLength(1);
    });

  it("three submissions of one form at once charge once and grant once", async () => {
    const { client, accountId } = await signUp();
    const form = await paymentForm(client);
    const { paymentId } = form;
    const locations = (await Promise.all([1, 2, 3].map(() => submit(client, form, "7")))).map((r) => r.headers.get("location"));
    expect(locations).toContain("/settings/credits?done=added");
    expect(await audit(accountId)).toMatchObject({ credits_nano: 7 * USD, grants: 1, grants_nano: 7 * USD });
    expect(await charges(paymentId)).toHaveLength(1);
    expect((await paymentRows(accountId)).map((p) => p.status)).toEqual(["succeeded"]);
  });
});

describe("add credits: lost replies", () => {
  /** The real processor and ledger, with a reply lost after the work was done. */
  function losing(what: "charge" | "grant"): PaymentDeps {
    const provider = testCardProvider(env.DB);
    const grant = ledgerGrant(env);
    const lostReply = (): never => {
      throw new Error("connection reset");
    };
    return {
      d1: env.DB,
      provider: what === "charge" ? ({ ...provider, charge: async (p, f) => (await provider.charge(p, f), lostReply()) } satisfies PaymentProvider) : provider,
      grant: what === "grant" ? async (a, r) => (await grant(a, r), lostReply()) : grant,
    };
  }

  it("a charge whose reply is lost leaves the payment pending; reconciliation finds the charge and grants it once", async () => {
    const { client, accountId } = await signUp();
    const { paymentId } = await paymentForm(client);
    await expect(pay(losing("charge"), { id: paymentId, accountId, amountNano: 3 * USD }, CARD)).rejects.toThrow("connection reset");
    expect((await paymentRows(accountId)).map((p) => p.status)).toEqual(["pending"]);
    expect((await audit(accountId)).credits_nano).toBe(0);
    await cron();
    expect(await paymentRows(accountId)).toEqual([expect.objectContaining({ status: "succeeded", reference: (await charges(paymentId))[0]!.reference })]);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 3 * USD, grants: 1 });
    await cron();
    expect(await audit(accountId)).toMatchObject({ credits_nano: 3 * USD, grants: 1 });
  });

  it("a grant whose reply is lost tells the person the credits are on their way; the payment completes once", async () => {
    const { client, accountId } = await signUp();
    const { paymentId } = await paymentForm(client);
    expect(await pay(losing("grant"), { id: paymentId, accountId, amountNano: 4 * USD }, CARD)).toEqual({ kind: "processing" });
    expect((await paymentRows(accountId)).map((p) => p.status)).toEqual(["charged"]);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 4 * USD, grants: 1 }); // the grant did happen
    // The credits page finishes it when it loads.
    const page = await client.page("/settings/credits");
    expect(textOf(page.html)).toMatch(/\$4\.00 Test card Succeeded/);
    expect((await paymentRows(accountId)).map((p) => p.status)).toEqual(["succeeded"]);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 4 * USD, grants: 1, grants_nano: 4 * USD });
  });
});

describe("reconciliation (Cron Trigger and the credits page)", () => {
  it("completes every payment a crash left after the charge, gives up on one never charged once it is old, and leaves a young one", async () => {
    const accounts = await Promise.all(STEPS.map(() => signUp()));
    const old = Date.now() - 60 * 60_000; // older than PAYMENT_ABANDON_AFTER_MS (15 minutes)
    for (const [i, step] of STEPS.entries())
      await crashAfter(step, accounts[i]!.accountId, `pay_${"r".repeat(36)}${String(i).padStart(2, "0")}${Date.now() % 1e5}`, (i + 1) * USD, old);
    const young = await signUp();
    await crashAfter("begun", young.accountId, `pay_${"y".repeat(38)}${Date.now() % 1e5}`, USD);

    await cron();
    const status = async (accountId: string) => (await paymentRows(accountId)).map((p) => p.status);
    expect(await status(accounts[0]!.accountId)).toEqual(["failed"]); // begun, never charged: nothing was taken
    expect((await audit(accounts[0]!.accountId)).credits_nano).toBe(0);
    for (const i of [1, 2, 3]) {
      expect(await status(accounts[i]!.accountId)).toEqual(["succeeded"]);
      expect(await audit(accounts[i]!.accountId)).toMatchObject({ credits_nano: (i + 1) * USD, grants: 1, grants_nano: (i + 1) * USD });
    }
    expect(await status(young.accountId)).toEqual(["pending"]); // may still be under way
    // A second run changes nothing.
    await cron();
    for (const i of [1, 2, 3]) expect(await audit(accounts[i]!.accountId)).toMatchObject({ credits_nano: (i + 1) * USD, grants: 1 });
    expect(await status(young.accountId)).toEqual(["pending"]);
  });

  it("the credits page finishes the account's own charged payment before showing the balance, and no one else's", async () => {
    const mine = await signUp();
    const other = await signUp();
    await crashAfter("charged", mine.accountId, `pay_${"m".repeat(38)}${Date.now() % 1e5}`, 6 * USD);
    await crashAfter("charged", other.accountId, `pay_${"o".repeat(38)}${Date.now() % 1e5}`, 8 * USD);
    const html = (await mine.client.page("/settings/credits")).html;
    expect(textOf(/<p class="figure"[^>]*id="balance">([^<]*)<\/p>/.exec(html)![1]!)).toBe("$6.00");
    expect(textOf(html)).toMatch(/\$6\.00 Test card Succeeded/);
    expect((await paymentRows(other.accountId)).map((p) => p.status)).toEqual(["charged"]);
    expect((await audit(other.accountId)).credits_nano).toBe(0);
  });

  it("with the processor no longer connected, a pending payment waits without taking a place in the batch; charged ones are still granted", async () => {
    const { accountId } = await signUp();
    const old = Date.now() - 60 * 60_000;
    await crashAfter("begun", accountId, `pay_${"w".repeat(38)}${Date.now() % 1e5}`, USD, old);
    await crashAfter("charged", accountId, `pay_${"c".repeat(38)}${Date.now() % 1e5}`, 2 * USD, old + 1);
    const report = await reconcilePayments(
      { d1: env.DB, grant: ledgerGrant(env), providers: [] },
      { accountId, limit: 1, abandonAfterMs: 15 * 60_000, now: Date.now() },
    );
    expect(report).toEqual({ completed: 1, abandoned: 0, waiting: 0, errors: 0 });
    expect((await paymentRows(accountId)).map((p) => p.status)).toEqual(["pending", "succeeded"]);
    expect(await audit(accountId)).toMatchObject({ credits_nano: 2 * USD, grants: 1 });
  });
});
