import { Layout, type PageMeta } from "../layout/layout";
import { ErrorSummary, Field, PostForm } from "../layout/forms";
import { usd, utcDateTime } from "../layout/format";
import type { Payment } from "../../db/schema";
import type { Totals } from "../../ledger/ledger-object";
import type { PaymentProvider } from "../../payments/payment-provider";

/** A payment's status as the person reads it; "charged" means taken, credits on their way (reconciliation adds them). */
const STATUS: Record<Payment["status"], string> = { pending: "Pending", charged: "Processing", succeeded: "Succeeded", declined: "Declined", failed: "Failed" };

export type AddCreditsState = { amount?: string; errors?: { amount?: string }; problem?: string };

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

function AddCredits(props: { provider: PaymentProvider; csrf: string; paymentId: string; form: AddCreditsState }) {
  const { provider: p, form } = props;
  const messages = [form.problem, form.errors?.amount].filter((m): m is string => !!m);
  return (
    <>
      <div class="warning" role="note">
        <p>
          <strong>{p.testMode ? "Test mode — no real payments." : p.name}</strong> {p.instructions}
        </p>
      </div>
      <ErrorSummary title="The payment did not go through" messages={messages} />
      <PostForm action="/settings/credits" csrf={props.csrf} class="stack" aria-label="Add credits">
        <input type="hidden" name="payment_id" value={props.paymentId} />
        <Field
          id="amount"
          name="amount"
          label="Amount in USD"
          inputmode="decimal"
          required
          value={form.amount ?? "10"}
          error={form.errors?.amount}
          hint={`From ${usd(p.minNano)} to ${usd(p.maxNano)}, in whole cents.`}
          autocomplete="off"
        />
        <div class="field-row">
          {p.fields.map((f) => (
            <Field
              id={f.name}
              name={f.name}
              label={f.label}
              inputmode={f.inputmode}
              autocomplete={f.autocomplete}
              maxlength={f.maxlength}
              hint={f.hint}
              required
            />
          ))}
        </div>
        <div>
          <button type="submit">Add credits</button>
        </div>
      </PostForm>
    </>
  );
}

export function CreditsPage(props: {
  meta: PageMeta;
  csrf: string;
  totals: Totals;
  provider: PaymentProvider | null;
  paymentId: string;
  payments: Payment[];
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
      {props.provider ? (
        <AddCredits provider={props.provider} csrf={props.csrf} paymentId={props.paymentId} form={props.form ?? {}} />
      ) : (
        <div class="warning" role="note">
          <p>
            <strong>Adding credits is not available on this deployment.</strong> No payment processor is connected. The operator can add credits to your
            account; the built-in test-card flow exists only for local development.
          </p>
        </div>
      )}

      {props.payments.length > 0 && (
        <>
          <h2 id="payments-title">Recent payments</h2>
          <div class="table-wrap" role="region" aria-labelledby="payments-title" tabindex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col" class="num">
                    Amount
                  </th>
                  <th scope="col">Method</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {props.payments.map((p) => (
                  <tr>
                    <td>
                      <time datetime={new Date(p.createdAt).toISOString()}>{utcDateTime(p.createdAt)}</time>
                    </td>
                    <td class="num">{usd(p.amountNano)}</td>
                    <td>{p.provider === "test-card" ? "Test card" : p.provider}</td>
                    <td class={p.status === "succeeded" ? "status-ok" : p.status === "pending" || p.status === "charged" ? undefined : "status-bad"}>
                      {STATUS[p.status]}
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
