import { Layout, type PageMeta } from "../layout/layout";
import { ShownOnce } from "../layout/shown-once";
import { ErrorSummary, Field, PostForm } from "../layout/forms";
import { CopyScript } from "../layout/copy-button";
import { usd } from "../layout/format";
import type { ApiKey } from "../../db/schema";
import type { AlertRules, FiredAlert } from "../../alerts/events";
import type { EndpointView } from "../../alerts/endpoint-store";
import type { AlertDelivery } from "../../db/schema";
import { DeliveryLog, FiredList } from "./history";

export type AlertsPageProps = {
  meta: PageMeta;
  csrf: string;
  keys: ApiKey[];
  rules: AlertRules;
  endpoints: EndpointView[];
  fired: FiredAlert[];
  deliveries: AlertDelivery[];
  maxEndpoints: number;
  /** The form values and errors of a refused form, by its name (`balance`, `key:<hash>`, `endpoint`). */
  refused?: { form: string; value: string; error: string };
  created?: { endpoint: EndpointView; secret: string };
  notice?: string;
  canSeal: boolean;
};

const valueOf = (p: AlertsPageProps, form: string, saved: string) => (p.refused?.form === form ? p.refused.value : saved);
const errorOf = (p: AlertsPageProps, form: string) => (p.refused?.form === form ? p.refused.error : undefined);
const WINDOW = { daily: "today (UTC)", weekly: "this week (from Monday, UTC)", monthly: "this month (UTC)" } as const;

/** /settings/alerts: budget thresholds, the webhook endpoints alerts go to, and what fired and how it was delivered. */
export function AlertsPage(p: AlertsPageProps) {
  const keys = p.keys.filter((k) => !k.isManagement);
  return (
    <Layout meta={p.meta}>
      <h1>Budget alerts</h1>
      {p.notice && (
        <p class="notice" role="status">
          {p.notice}
        </p>
      )}
      <p>
        An alert fires once when a key's spending reaches a share of its limit in its reset window, or when the balance falls below an amount. It shows below
        and is posted, signed, to each of your webhook endpoints.
      </p>
      <h2>Balance</h2>
      <PostForm action="/settings/alerts/balance" csrf={p.csrf} class="stack" aria-label="Balance thresholds">
        <Field
          id="balance"
          name="thresholds"
          label="Alert when the balance falls below (USD)"
          hint="Amounts separated by commas, e.g. 20, 5. Empty: no balance alerts. An amount fires again after credits take the balance back above it."
          value={valueOf(p, "balance", p.rules.balanceBelowNano.map((n) => usd(n).slice(1)).join(", "))}
          error={errorOf(p, "balance")}
        />
        <div class="actions">
          <button type="submit">Save balance thresholds</button>
        </div>
      </PostForm>
      <h2 id="keys-title">Keys</h2>
      {keys.length === 0 ? (
        <p>You have no API keys yet.</p>
      ) : (
        keys.map((k) => (
          <PostForm action={`/settings/alerts/keys/${k.hash}`} csrf={p.csrf} class="stack" aria-label={`Thresholds of key ${k.name}`}>
            <Field
              id={`key-${k.hash}`}
              name="thresholds"
              label={`${k.name} (${k.label})`}
              hint={
                k.limitNano === null
                  ? "This key has no limit: set one on its page for these to apply. Percents separated by commas, e.g. 50, 80, 100."
                  : `Percents of its limit of ${usd(k.limitNano)} ${k.limitReset ? `spent ${WINDOW[k.limitReset]}` : "(all its usage: no reset)"}, e.g. 50, 80, 100. Each fires once per window.`
              }
              value={valueOf(p, `key:${k.hash}`, (p.rules.keyPercents[k.hash] ?? []).join(", "))}
              error={errorOf(p, `key:${k.hash}`)}
            />
            <div class="actions">
              <button type="submit">Save thresholds of {k.name}</button>
            </div>
          </PostForm>
        ))
      )}
      <h2 id="endpoints-title">Webhook endpoints</h2>
      {p.created && <NewSecret {...p.created} />}
      <Endpoints {...p} />
      <FiredList fired={p.fired} keys={p.keys} />
      <DeliveryLog deliveries={p.deliveries} />
      <CopyScript nonce={p.meta.nonce} />
    </Layout>
  );
}

function NewSecret(props: { endpoint: EndpointView; secret: string }) {
  return (
    <ShownOnce
      id="new-secret"
      level="h3"
      title={`Signing secret of ${props.endpoint.url}`}
      label="Signing secret"
      copyLabel="Copy the signing secret"
      value={props.secret}
    >
      <p>
        <strong>Copy it now: this is the only time it is shown.</strong> Your receiver verifies each delivery's <code>Switchyard-Signature</code> with it
        (docs/teams.md, "Budget alerts"). Lost, remove the endpoint and add it again.
      </p>
    </ShownOnce>
  );
}

function Endpoints(p: AlertsPageProps) {
  return (
    <>
      {p.endpoints.length === 0 ? (
        <p>No endpoints yet: alerts show only on this page.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="endpoints-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Secret</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {p.endpoints.map((e) => (
                <tr>
                  <th scope="row">{e.url}</th>
                  <td data-label="Secret">
                    <code>whsec_…{e.secretHint}</code>
                  </td>
                  <td data-label="Actions">
                    <div class="actions">
                      <PostForm action={`/settings/alerts/endpoints/${e.id}/test`} csrf={p.csrf} aria-label={`Send a test event to ${e.url}`}>
                        <button type="submit">Send test event</button>
                      </PostForm>
                      <PostForm action={`/settings/alerts/endpoints/${e.id}/remove`} csrf={p.csrf} aria-label={`Remove ${e.url}`}>
                        <button type="submit" class="danger">
                          Remove
                        </button>
                      </PostForm>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!p.canSeal ? (
        <p>This deployment cannot store signing secrets (its REASONING_SEAL_KEY secret is not set), so no endpoint can be added.</p>
      ) : p.endpoints.length >= p.maxEndpoints ? (
        <p>You have {p.maxEndpoints} endpoints, the most an account can have. Remove one to add another.</p>
      ) : (
        <PostForm action="/settings/alerts/endpoints" csrf={p.csrf} class="stack" aria-label="Add a webhook endpoint">
          <ErrorSummary messages={errorOf(p, "endpoint") ? [errorOf(p, "endpoint")!] : []} />
          <Field
            id="endpoint-url"
            name="url"
            label="Endpoint URL"
            hint="https (http only to localhost). Alerts are posted here as signed JSON."
            value={valueOf(p, "endpoint", "")}
            error={errorOf(p, "endpoint")}
            maxlength={2048}
          />
          <div class="actions">
            <button type="submit">Add endpoint</button>
          </div>
        </PostForm>
      )}
    </>
  );
}
