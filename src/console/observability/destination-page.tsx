import { Layout, type PageMeta } from "../layout/layout";
import { ErrorSummary, PostForm } from "../layout/forms";
import { utcDateTime } from "../layout/format";
import type { ApiKey, ObservabilityDestination, observabilityDeliveries } from "../../db/schema";
import type { DestinationForm } from "./destination-form";
import { DestinationFields } from "./fields";
import { problemsOf, SecretsShown } from "./page";

export type DeliveryRow = typeof observabilityDeliveries.$inferSelect;

export type DestinationPageProps = {
  meta: PageMeta;
  csrf: string;
  destination: ObservabilityDestination;
  keys: ApiKey[];
  /** The edit form: the stored values (header values masked), or refused with its values and problems. */
  form: DestinationForm;
  deliveries: DeliveryRow[];
  shown: number;
  notice?: string;
};

/** /settings/observability/<id>: one destination, its form, its deletion and its delivery log. */
export function DestinationPage(p: DestinationPageProps) {
  const d = p.destination;
  const base = `/settings/observability/${d.id}`;
  return (
    <Layout meta={p.meta}>
      <p>
        <a href="/settings/observability">All destinations</a>
      </p>
      <h1>{d.name}</h1>
      {p.notice && (
        <p class="notice" role="status">
          {p.notice}
        </p>
      )}
      <p>
        {d.type === "webhook" ? "Webhook" : "OpenTelemetry collector"}, {d.enabled ? "on" : "off"}. Secrets: <SecretsShown d={d} />
      </p>
      <h2>Change</h2>
      <PostForm action={base} csrf={p.csrf} class="stack" aria-label={`Change ${d.name}`}>
        <ErrorSummary messages={problemsOf(p.form)} />
        <DestinationFields idPrefix="edit" form={p.form} keys={p.keys} creating={false} />
        <div class="actions">
          <button type="submit">Save changes</button>
        </div>
      </PostForm>
      <DeliveryLog deliveries={p.deliveries} shown={p.shown} />
      <h2>Delete</h2>
      <PostForm action={`${base}/delete`} csrf={p.csrf} aria-label={`Delete ${d.name}`}>
        <p>Nothing more is exported here; exports already queued for it are dropped.</p>
        <button type="submit" class="danger">
          Delete {d.name}
        </button>
      </PostForm>
    </Layout>
  );
}

/** The destination's newest delivery attempts, newest first. */
function DeliveryLog(props: { deliveries: DeliveryRow[]; shown: number }) {
  return (
    <>
      <h2 id="deliveries-title">Delivery log</h2>
      <p class="hint">
        The newest {props.shown} attempts, newest first. Retried after no answer, a 429 or a 5xx; any other refusal is not retried (docs/observability.md,
        "Delivery").
      </p>
      {props.deliveries.length === 0 ? (
        <p>Nothing delivered yet.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="deliveries-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">When (UTC)</th>
                <th scope="col" class="num">
                  Spans
                </th>
                <th scope="col" class="num">
                  Attempt
                </th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {props.deliveries.map((r) => (
                <tr>
                  <th scope="row">{utcDateTime(r.at)}</th>
                  <td class="num" data-label="Spans">
                    {r.spans}
                  </td>
                  <td class="num" data-label="Attempt">
                    {r.attempt}
                  </td>
                  <td data-label="Outcome">
                    {r.outcome} ({r.status === 0 ? "no answer" : r.status})
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
