import { Layout, type PageMeta } from "../layout/layout";
import { contextSize, count, modalities, perMillion } from "../layout/format";
import type { ModelEntry } from "../../catalog/schema";
import type { PricedEndpoint } from "../../catalog/catalog";
import type { EndpointStats } from "../../health/endpoint-stats";
import { jsExample } from "../home/page";
import { CopyButton, CopyScript } from "../layout/copy-button";

export type CarrierRow = { endpoint: PricedEndpoint; stats: EndpointStats };

function percent(v: number | null) {
  return v === null ? <span class="muted">No traffic yet</span> : `${v.toFixed(v === 100 ? 0 : 1)}%`;
}

/** The median of the last 30 minutes, or a dash without served requests. */
function median(p: { p50: number } | null, format: (v: number) => string) {
  return p === null ? <span class="muted">—</span> : format(p.p50);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const tokensPerSecond = (v: number) => `${v.toFixed(v >= 100 ? 0 : 1)} tok/s`;

/** The carrier's data policy in a few words: what `provider.data_collection` and `provider.zdr` route by. */
function dataPolicy(e: PricedEndpoint): string {
  const p = e.providerEntry.data_policy;
  if (!p) return "Not published";
  if (p.zdr) return "Zero retention";
  if (p.trains_on_prompts) return "Retains, trains";
  return p.retains_prompts ? "Retains prompts" : "Does not retain";
}

function Price(props: { nano: number }) {
  return props.nano === 0 ? <span class="tag">Free</span> : <>{perMillion(props.nano)}</>;
}

export function ModelPage(props: { meta: PageMeta; model: ModelEntry; carriers: CarrierRow[]; baseUrl: string }) {
  const m = props.model;
  return (
    <Layout meta={props.meta}>
      <p>
        <a href="/models">← All models</a>
      </p>
      <h1>{m.name}</h1>
      <p>
        <code id="model-id">{m.id}</code> <CopyButton target="model-id" label="Copy the model id" />
      </p>
      {m.description && <p class="lead">{m.description}</p>}
      <dl class="facts">
        {m.aliases && m.aliases.length > 0 && (
          <>
            <dt>Also answers to</dt>
            <dd id="model-aliases">
              {m.aliases.map((a, i) => (
                <>
                  {i > 0 && ", "}
                  <code>{a}</code>
                </>
              ))}{" "}
              <span class="muted">(the provider's own ids: a request naming one is served, billed and recorded as {m.id})</span>
            </dd>
          </>
        )}
        <dt>Context</dt>
        <dd>
          {contextSize(m.context_length)} ({count(m.context_length)} tokens)
        </dd>
        <dt>Modalities</dt>
        <dd>{modalities(m.input_modalities, m.output_modalities)}</dd>
        <dt>Released</dt>
        <dd>{new Date(m.created * 1000).toISOString().slice(0, 10)}</dd>
        <dt>Knowledge cutoff</dt>
        <dd>{m.knowledge_cutoff ?? "Not published"}</dd>
        <dt>Parameters</dt>
        <dd>{m.supported_parameters.length > 0 ? m.supported_parameters.join(", ") : "None listed"}</dd>
        {m.sources && (
          <>
            <dt>Prices read from</dt>
            <dd id="model-sources">
              {m.sources.map((src, i) => (
                <>
                  {i > 0 && <br />}
                  <a href={src.url} rel="noopener noreferrer">
                    {new URL(src.url).host}
                  </a>{" "}
                  <span class="muted">on {src.read_on}</span>
                </>
              ))}
            </dd>
          </>
        )}
      </dl>

      <h2 id="carriers">Carriers</h2>
      <p>
        Requests are spread over these carriers, the cheaper ones getting the most (weighted by the inverse square of price; a <code>session_id</code> keeps a
        conversation on one), and fall back to the others when a carrier fails or rate-limits; a carrier that looks down is tried last. You pay the price of the
        one that served. A request's <code>provider</code> preferences can reorder or filter this list.
      </p>
      <div class="table-wrap" role="region" aria-labelledby="carriers" tabindex={0}>
        <table>
          <caption>
            Carriers serving {m.name}, in the order they are tried. Prices in USD per 1M tokens. From this service's own traffic: uptime over 24 hours, latency
            (median time to first token) and throughput (median) over 30 minutes.
          </caption>
          <thead>
            <tr>
              <th scope="col">Carrier</th>
              <th scope="col" class="num">
                Price in / out
              </th>
              <th scope="col" class="num">
                Context, max out
              </th>
              <th scope="col">Quantization, data</th>
              <th scope="col" class="num">
                Uptime
              </th>
              <th scope="col" class="num">
                Latency
              </th>
              <th scope="col" class="num">
                Throughput
              </th>
            </tr>
          </thead>
          <tbody>
            {props.carriers.map(({ endpoint: e, stats }) => (
              <tr>
                <th scope="row">{e.providerEntry.name}</th>
                <td class="num">
                  <Price nano={e.inputNano} /> / <Price nano={e.outputNano} />
                </td>
                <td class="num">
                  {contextSize(e.context_length)} / {e.max_completion_tokens === null ? "—" : count(e.max_completion_tokens)}
                </td>
                <td>
                  {e.quantization ?? "Not published"}
                  <br />
                  <span class="muted">{dataPolicy(e)}</span>
                </td>
                <td class="num">{percent(stats.uptime_last_1d)}</td>
                <td class="num">{median(stats.latency_last_30m, seconds)}</td>
                <td class="num">{median(stats.throughput_last_30m, tokensPerSecond)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <h2>Use it</h2>
      <pre id="model-example">
        <code>{jsExample(props.baseUrl, m.id)}</code>
      </pre>
      <CopyButton target="model-example" label="Copy the example" />
      <CopyScript nonce={props.meta.nonce} />
    </Layout>
  );
}
