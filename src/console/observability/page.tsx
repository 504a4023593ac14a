import { Layout, type PageMeta } from "../layout/layout";
import { ShownOnce } from "../layout/shown-once";
import { ErrorSummary, PostForm } from "../layout/forms";
import { CopyScript } from "../layout/copy-button";
import type { ApiKey, ObservabilityDestination } from "../../db/schema";
import { shownConfig } from "../../observability/destination-secrets";
import type { DestinationForm } from "./destination-form";
import { DestinationFields } from "./fields";

export type ObservabilityPageProps = {
  meta: PageMeta;
  csrf: string;
  destinations: ObservabilityDestination[];
  keys: ApiKey[];
  /** The create form: empty, or refused with its values and problems. */
  form: DestinationForm;
  created?: { destination: ObservabilityDestination; secret: string };
  notice?: string;
  max: number;
  canSeal: boolean;
};

export const problemsOf = (form: DestinationForm) => [...Object.values(form.errors), ...(form.problem ? [form.problem] : [])];
const KIND = { "otel-collector": "Collector", webhook: "Webhook" } as const;

/** What a destination's secrets look like here: only their stored masks, nothing opened. */
export function SecretsShown(props: { d: ObservabilityDestination }) {
  const c = shownConfig(props.d);
  const headers = Object.entries(c.headers ?? {});
  return (
    <>
      {"signing_secret" in c && (
        <span>
          Signing secret <code>{c.signing_secret}</code>
        </span>
      )}
      {headers.map(([k, v]) => (
        <span>
          {" "}
          {k}: <code>{v}</code>
        </span>
      ))}
      {!("signing_secret" in c) && headers.length === 0 && "None"}
    </>
  );
}

/** /settings/observability: the account's trace export destinations (docs/observability.md) and the form that adds one. */
export function ObservabilityPage(p: ObservabilityPageProps) {
  return (
    <Layout meta={p.meta}>
      <h1>Trace export</h1>
      {p.notice && (
        <p class="notice" role="status">
          {p.notice}
        </p>
      )}
      <p>
        Each request's record goes, as an OpenTelemetry span, to the collectors below (Tempo, Honeycomb, Datadog, any OTLP/HTTP endpoint), or as signed JSON to
        a webhook: off the request path, retried when a destination is down. Metadata only: no prompt or completion is ever exported.
      </p>
      {p.created && <NewSecret {...p.created} />}
      <h2 id="destinations-title">Destinations</h2>
      {p.destinations.length === 0 ? (
        <p>No destinations yet: nothing is exported.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="destinations-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Sampling
                </th>
                <th scope="col">Keys</th>
                <th scope="col">Secrets</th>
              </tr>
            </thead>
            <tbody>
              {p.destinations.map((d) => (
                <tr>
                  <th scope="row">
                    <a href={`/settings/observability/${d.id}`}>{d.name}</a>
                  </th>
                  <td data-label="Kind">{KIND[d.type]}</td>
                  <td data-label="Endpoint" class="break">
                    {d.endpoint}
                  </td>
                  <td data-label="Status">{d.enabled ? "On" : "Off"}</td>
                  <td class="num" data-label="Sampling">
                    {d.samplingRate}
                  </td>
                  <td data-label="Keys">{d.apiKeyHashes === null ? "All" : `${(JSON.parse(d.apiKeyHashes) as string[]).length} chosen`}</td>
                  <td data-label="Secrets">
                    <SecretsShown d={d} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Add a destination</h2>
      {p.destinations.length >= p.max ? (
        <p>You have {p.max} destinations, the most an account can have. Delete one to add another.</p>
      ) : (
        <PostForm action="/settings/observability" csrf={p.csrf} class="stack" aria-label="Add a destination">
          <ErrorSummary messages={problemsOf(p.form)} />
          {!p.canSeal && <p>This deployment cannot store secrets (its REASONING_SEAL_KEY secret is not set): only a collector without headers can be added.</p>}
          <DestinationFields idPrefix="new" form={p.form} keys={p.keys} creating={true} />
          <div class="actions">
            <button type="submit">Add destination</button>
          </div>
        </PostForm>
      )}
      <CopyScript nonce={p.meta.nonce} />
    </Layout>
  );
}

function NewSecret(props: { destination: ObservabilityDestination; secret: string }) {
  return (
    <ShownOnce
      id="new-secret"
      title={`Signing secret of ${props.destination.name}`}
      label="Signing secret"
      copyLabel="Copy the signing secret"
      value={props.secret}
    >
      <p>
        <strong>Copy it now: this is the only time it is shown.</strong> Your receiver checks each delivery's <code>Switchyard-Signature</code> with it
        (docs/observability.md, "Webhooks"). Lost, delete the destination and add it again.
      </p>
    </ShownOnce>
  );
}
