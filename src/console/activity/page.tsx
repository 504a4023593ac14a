import { Layout, type PageMeta } from "../layout/layout";
import { count, usd, utcDateTime } from "../layout/format";
import type { Generation } from "../../db/schema";
import type { Breakdown, SpendPoint, View } from "./queries";
import { Breakdowns, FilterForm, NO_CARRIER } from "./breakdowns";
import { filterQuery, type ActivityFilter } from "./filter";
import { METRICS, SpendChart, type Metric } from "./spend-chart";
import { parseAttempts } from "../../db/carrier-attempt";

/** The carriers a request was tried on, when there was more than one (a fallback): model, carrier, status, time. */
function Attempts(props: { g: Generation }) {
  const attempts = parseAttempts(props.g.providerResponses);
  if (attempts.length < 2) return null;
  return (
    <details class="attempts">
      <summary>{attempts.length} attempts</summary>
      <ol>
        {attempts.map((a) => (
          <li>
            <code>{a.model}</code> at {a.providerName}: <span class={a.status === 200 ? "status-ok" : "status-bad"}>{a.status}</span> after {count(a.latencyMs)}{" "}
            ms
          </li>
        ))}
      </ol>
    </details>
  );
}

/** One choice of a switch above the chart: the current one in bold (not a link), the others links. */
function Choice(props: { current: boolean; href: string; text: string }) {
  return props.current ? <strong aria-current="true">{props.text}</strong> : <a href={props.href}>{props.text}</a>;
}

function Status(props: { g: Generation }) {
  const { g } = props;
  if (g.status === 200) return <span class="status-ok">{g.cancelled ? "200, cancelled" : "200 OK"}</span>;
  return (
    <>
      <span class="status-bad">{g.status === 499 ? "499 caller left" : `${g.status} failed`}</span>
      {g.errorMessage && (
        <>
          <br />
          <span class="muted">{g.errorMessage.length > 120 ? g.errorMessage.slice(0, 119) + "…" : g.errorMessage}</span>
        </>
      )}
    </>
  );
}

export function ActivityPage(props: {
  meta: PageMeta;
  rows: Generation[];
  newer: string | null;
  older: string | null;
  paged: boolean;
  days: SpendPoint[];
  view: View;
  metric: Metric;
  filter: ActivityFilter;
  unreadDays: Array<{ name: "from" | "to"; value: string }>;
  keys: Array<{ hash: string; name: string }>;
  models: string[];
  breakdowns: Record<"model" | "key" | "carrier", Breakdown>;
}) {
  const { rows, filter } = props;
  // The chart's view and metric (each left out at its default) go with every link and the filter form.
  const viewParam: Record<string, string> = props.view === "hour" ? { view: "hour" } : {};
  const metricParam: Record<string, string> = props.metric === "spend" ? {} : { metric: props.metric };
  const chartParams = { ...viewParam, ...metricParam };
  return (
    <Layout meta={props.meta}>
      <h1>Activity</h1>
      <p>
        Every request made with your keys, newest first. Failed requests are listed with cost 0; each names the API it came in (chat, messages, responses,
        embeddings). A request shows up in this list within a few seconds of finishing, and in the chart and the sums by model, key and carrier once its record
        is stored (within minutes).
      </p>
      {props.unreadDays.map((d) => (
        <p class="warning" role="alert">
          “{d.value}” is not a day written yyyy-mm-dd (like 2026-03-01), so the {d.name === "from" ? "From" : "To"} date is left out of the filter.
        </p>
      ))}
      <FilterForm filter={filter} keys={props.keys} models={props.models} keep={chartParams} />
      <div class="chart-switches">
        <nav class="pager" aria-label="Chart view">
          <Choice current={props.view === "day"} href={`/activity${filterQuery(filter, metricParam)}`} text="Days" />
          <Choice current={props.view === "hour"} href={`/activity${filterQuery(filter, { view: "hour", ...metricParam })}`} text="Hours" />
        </nav>
        <nav class="pager" aria-label="Chart metric">
          {(Object.keys(METRICS) as Metric[]).map((metric) => (
            <Choice
              current={props.metric === metric}
              href={`/activity${filterQuery(filter, { ...viewParam, ...(metric === "spend" ? {} : { metric }) })}`}
              text={METRICS[metric].switch}
            />
          ))}
        </nav>
      </div>
      <SpendChart days={props.days} view={props.view} metric={props.metric} />
      <Breakdowns breakdowns={props.breakdowns} />

      <h2 id="requests-title">Requests</h2>
      {rows.length === 0 ? (
        <p>{props.paged ? "No more requests." : "No requests yet. Create a key and make your first request."}</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="requests-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                <th scope="col">Model</th>
                <th scope="col">Provider</th>
                <th scope="col">App</th>
                <th scope="col" class="num">
                  Tokens in → out
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
                <th scope="col" class="num">
                  Latency
                </th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((g) => (
                <tr id={g.id}>
                  <td data-label="Time (UTC)">
                    <time datetime={new Date(g.createdAt).toISOString()}>{utcDateTime(g.createdAt)}</time>
                  </td>
                  <td data-label="Model">
                    <code>{g.model}</code>{" "}
                    <span class="tag" title="the API the request came in">
                      {g.inboundApi}
                    </span>
                    {g.streamed && (
                      <>
                        {" "}
                        <span class="tag">stream</span>
                      </>
                    )}
                    {g.preset && (
                      <>
                        {" "}
                        <span class="tag" title="the preset the request named, and the version applied">
                          @preset/{g.preset}@{g.presetVersion}
                        </span>
                      </>
                    )}
                  </td>
                  <td data-label="Provider">
                    {g.providerName ?? <span class="muted">{NO_CARRIER}</span>}
                    <Attempts g={g} />
                  </td>
                  <td data-label="App">{g.app ?? <span class="muted">—</span>}</td>
                  <td class="num" data-label="Tokens in → out">
                    {count(g.tokensPrompt)} → {count(g.tokensCompletion)}
                  </td>
                  <td class="num" data-label="Cost">
                    {usd(g.costNano)}
                  </td>
                  <td class="num" data-label="Latency">
                    {g.latencyMs === null ? "—" : `${count(g.latencyMs)} ms`}
                  </td>
                  <td data-label="Status">
                    <Status g={g} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(props.newer || props.older || props.paged) && (
        <nav class="pager" aria-label="Pages of requests">
          {props.paged && <a href={`/activity${filterQuery(filter, chartParams)}`}>Newest</a>}
          {props.newer && <a href={`/activity${filterQuery(filter, { ...chartParams, after: props.newer })}`}>← Newer</a>}
          {props.older && <a href={`/activity${filterQuery(filter, { ...chartParams, before: props.older })}`}>Older →</a>}
        </nav>
      )}
    </Layout>
  );
}
