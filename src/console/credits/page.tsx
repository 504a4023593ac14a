import { Layout, type PageMeta } from "../layout/layout";
import { ErrorSummary, Field, PostForm } from "../layout/forms";
import { usd, utcDateTime } from "../layout/format";
import type { Payment } from "../../db/schema";
import type { Totals } from "../../ledger/contract";
import { feeRule, type PaymentTerms, type Quote } from "../../payments/payment-terms";

/** A payment's status as the person reads it; "charged" means paid, credits on their way (reconciliation adds them). */
const STATUS: Record<Payment["status"], string> = {
  pending: "Awaiting payment",
  charged: "Paid, adding credits",
  succeeded: "Succeeded",
  declined: "Declined",
  failed: "Not paid",
};

const METHOD: Record<string, string> = { stripe: "Stripe", "test-card": "Test card" };

/** How payments are taken here: Stripe live, Stripe's test mode, or the local Stripe simulator. */
export type PaymentsMode = { terms: PaymentTerms; mode: "live" | "test" | "simulator" };

/** The add-credits form's state: the amount typed, its error, the priced review once it is valid. */
export type AddCreditsState = { amount?: string; error?: string; review?: Quote; problem?: string };

function Figure(props: { label: string; nano: number; id: string }) {
  return (
    <div class="card">
      <p class="label" id={`${props.id}-label`}>
        {props.label}
      </p>
      <p class="figure" aria-labelledby={`${props.id}-label`} id={props.id}>
        {usd(props.nano)}
      </p>
    </div>
  );
}

const dollars = (cents: number) => usd(cents * 10_000_000);

function ModeNote(props: { mode: PaymentsMode["mode"] }) {
  if (props.mode === "live") return null;
  return (
    <div class="warning" role="note">
      <p>
        <strong>{props.mode === "simulator" ? "Local test mode — the Stripe simulator." : "Stripe test mode."}</strong> No real money is charged. On the
        checkout page pay with the test card 4242 4242 4242 4242, any future expiry date and any CVC; 4000 0000 0000 0002 is declined.
      </p>
    </div>
  );
}

/** Step 2: what will be charged, line by line, and the button that goes to Stripe. */
function Review(props: { quote: Quote; terms: PaymentTerms; csrf: string; paymentId: string; amount: string }) {
  const q = props.quote;
  return (
    <section aria-labelledby="review-title" class="stack">
      <h3 id="review-title">Review your payment</h3>
      <dl class="facts" id="payment-review">
        <dt>Credits added to your balance</dt>
        <dd id="review-credits">{dollars(q.creditsCents)}</dd>
        <dt>Platform fee ({feeRule(props.terms)})</dt>
        <dd id="review-fee">{dollars(q.feeCents)}</dd>
        <dt>Total charged</dt>
        <dd id="review-total">
          <strong>{dollars(q.totalCents)}</strong>
        </dd>
      </dl>
      <PostForm action="/settings/credits" csrf={props.csrf} class="stack" aria-label="Pay with Stripe">
        <input type="hidden" name="payment_id" value={props.paymentId} />
        <input type="hidden" name="amount" value={props.amount} />
        <div class="actions">
          <button type="submit">Pay {dollars(q.totalCents)} with Stripe</button>
          <a class="button secondary-link" href="/settings/credits#add">
            Change amount
          </a>
        </div>
      </PostForm>
    </section>
  );
}

function AddCredits(props: { payments: PaymentsMode; csrf: string; paymentId: string; form: AddCreditsState }) {
  const { terms } = props.payments;
  const { form } = props;
  return (
    <>
      <ModeNote mode={props.payments.mode} />
      <p>
        Payments are made on Stripe's checkout page. A platform fee ({feeRule(terms)}) is added to the credits you buy; you see the total before paying, and the
        fee is not added to your balance.
      </p>
      <ErrorSummary title="The payment did not start" messages={[form.problem, form.error].filter((m): m is string => !!m)} />
      {form.review ? (
        <Review quote={form.review} terms={terms} csrf={props.csrf} paymentId={props.paymentId} amount={form.amount ?? ""} />
      ) : (
        <form method="get" action="/settings/credits#add" class="stack" aria-label="Add credits">
          <Field
            id="amount"
            name="amount"
            label="Credits to buy, in USD"
            inputmode="decimal"
            required
            value={form.amount ?? "10"}
            error={form.error}
            hint={`From ${dollars(terms.minCents)} to ${dollars(terms.maxCents)}, in whole cents.`}
            autocomplete="off"
          />
          <div>
            <button type="submit">Review payment</button>
          </div>
        </form>
      )}
    </>
  );
}

function Adjustments(props: { p: Payment }) {
  const notes = [props.p.refundedNano > 0 && `${usd(props.p.refundedNano)} refunded`, props.p.disputedNano > 0 && `${usd(props.p.disputedNano)} disputed`];
  const text = notes.filter((n): n is string => !!n).join(", ");
  return text ? <span class="muted"> ({text}: taken from the balance)</span> : null;
}

export function CreditsPage(props: {
  meta: PageMeta;
  csrf: string;
  totals: Totals;
  payments: PaymentsMode | null;
  mayBuy: boolean; // the member's role adds credits (owners and billing members)
  paymentId: string;
  recent: Payment[];
  form?: AddCreditsState;
  notice?: string;
}) {
  const t = props.totals;
  return (
    <Layout meta={props.meta}>
      <h1>Credits</h1>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <div class="cards">
        <Figure label="Balance" nano={t.creditsNano - t.usageNano} id="balance" />
        <Figure label="Total credits" nano={t.creditsNano} id="total-credits" />
        <Figure label="Total usage" nano={t.usageNano} id="total-usage" />
      </div>
      {t.heldNano > 0 && <p class="muted">{usd(t.heldNano)} is reserved for requests still in progress; what they really cost is charged when they finish.</p>}
      <p>
        Paid models need a positive balance; when it runs out the API answers 402 and points here. Free models work without credits.
        {!t.granted && " This account has never added credits, so it is on the free tier."}
      </p>

      <h2 id="add">Add credits</h2>
      {!props.mayBuy ? (
        <p>Owners and billing members of this account add credits.</p>
      ) : props.payments ? (
        <AddCredits payments={props.payments} csrf={props.csrf} paymentId={props.paymentId} form={props.form ?? {}} />
      ) : (
        <div class="warning" role="note">
          <p>
            <strong>Adding credits is not available on this deployment.</strong> No payment processor is connected; the operator can add credits to your
            account.
          </p>
        </div>
      )}

      {props.recent.length > 0 && (
        <>
          <h2 id="payments-title">Recent payments</h2>
          <div class="table-wrap" role="region" aria-labelledby="payments-title" tabindex={0}>
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col" class="num">
                    Credits
                  </th>
                  <th scope="col" class="num">
                    Fee
                  </th>
                  <th scope="col">Method</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {props.recent.map((p) => (
                  <tr>
                    <td data-label="Time">
                      <time datetime={new Date(p.createdAt).toISOString()}>{utcDateTime(p.createdAt)}</time>
                    </td>
                    <td class="num" data-label="Credits">
                      {usd(p.amountNano)}
                    </td>
                    <td class="num" data-label="Fee">
                      {usd(p.feeNano)}
                    </td>
                    <td data-label="Method">{METHOD[p.provider] ?? p.provider}</td>
                    <td
                      data-label="Status"
                      class={p.status === "succeeded" ? "status-ok" : p.status === "pending" || p.status === "charged" ? undefined : "status-bad"}
                    >
                      {STATUS[p.status]}
                      <Adjustments p={p} />
                      {p.status === "pending" && p.provider === "stripe" && (
                        <>
                          {" "}
                          <a
                            href={`/settings/credits?cancelled=${p.id}`}
                            aria-label={`Cancel the checkout of ${usd(p.amountNano)} started ${utcDateTime(p.createdAt)}`}
                          >
                            Cancel
                          </a>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Layout>
  );
}
