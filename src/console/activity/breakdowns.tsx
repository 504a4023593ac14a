import { count, usd } from "../layout/format";
import type { Breakdown, BreakdownRow } from "./queries";
import type { ActivityFilter } from "./filter";
import { filterQuery } from "./filter";

const TITLES = { model: "By model", key: "By API key", carrier: "By carrier" } as const;

function Row(props: { r: BreakdownRow; total?: boolean }) {
  const { r } = props;
  const Cell = props.total ? "th" : "td";
  return (
    <tr class={props.total ? "total" : undefined}>
      {props.total ? <th scope="row">Total</th> : <td>{r.name}</td>}
      <Cell class="num">{count(r.requests)}</Cell>
      <Cell class="num">{count(r.tokensPrompt)}</Cell>
      <Cell class="num">{count(r.tokensCompletion)}</Cell>
      <Cell class="num">{count(r.tokensCached)}</Cell>
      <Cell class="num">{usd(r.costNano)}</Cell>
    </tr>
  );
}

/** The filtered requests summed by model, key and carrier, each table with its total. */
export function Breakdowns(props: { breakdowns: Record<keyof typeof TITLES, Breakdown> }) {
  return (
    <section class="breakdowns" aria-labelledby="breakdown-title">
      <h2 id="breakdown-title">Breakdown</h2>
      {(Object.keys(TITLES) as Array<keyof typeof TITLES>).map((by) => {
        const b = props.breakdowns[by];
        return (
          <div class="table-wrap" role="region" aria-labelledby={`by-${by}`} tabindex={0}>
            <table id={`breakdown-${by}`}>
              <caption id={`by-${by}`}>{TITLES[by]}</caption>
              <thead>
                <tr>
                  <th scope="col">{by === "model" ? "Model" : by === "key" ? "Key" : "Carrier"}</th>
                  <th scope="col" class="num">
                    Requests
                  </th>
                  <th scope="col" class="num">
                    Tokens in
                  </th>
                  <th scope="col" class="num">
                    Tokens out
                  </th>
                  <th scope="col" class="num">
                    Cached
                  </th>
                  <th scope="col" class="num">
                    Cost
                  </th>
                </tr>
              </thead>
              <tbody>
                {b.rows.map((r) => (
                  <Row r={r} />
                ))}
              </tbody>
              <tfoot>
                <Row r={b.total} total />
              </tfoot>
            </table>
          </div>
        );
      })}
    </section>
  );
}

/** The filter: a date range (UTC), a key, a model; and the CSV of what it selects. `keep`: the chart's view and metric, carried through. */
export function FilterForm(props: { filter: ActivityFilter; keys: Array<{ hash: string; name: string }>; models: string[]; keep: Record<string, string> }) {
  const f = props.filter;
  return (
    <form method="get" action="/activity" class="filters" aria-label="Filter the requests">
      {Object.entries(props.keep).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <label>
        From <input type="date" name="from" value={f.from ?? ""} />
      </label>
      <label>
        To <input type="date" name="to" value={f.to ?? ""} />
      </label>
      <Choice label="Key" name="key" all="All keys" chosen={f.key} options={props.keys.map((k) => [k.hash, k.name])} />
      <Choice label="Model" name="model" all="All models" chosen={f.model} options={props.models.map((m) => [m, m])} />
      <button type="submit">Apply</button> <a href="/activity">Clear</a> <a href={`/activity.csv${filterQuery(f)}`}>Download CSV</a>
    </form>
  );
}

/** A filter's select: "all" first, then each option as [value, text]. */
function Choice(props: { label: string; name: string; all: string; chosen: string | undefined; options: Array<[string, string]> }) {
  return (
    <label>
      {props.label}{" "}
      <select name={props.name}>
        <option value="">{props.all}</option>
        {props.options.map(([value, text]) => (
          <option value={value} selected={props.chosen === value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}
