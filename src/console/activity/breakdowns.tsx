import { count, usd } from "../layout/format";
import type { Breakdown, BreakdownRow } from "./queries";
import type { ActivityFilter } from "./filter";
import { filterQuery } from "./filter";

const TITLES = { model: "By model", key: "By API key", carrier: "By carrier" } as const;

/** What a request that no carrier served (every carrier failed, or none could be tried) shows as its carrier. */
export const NO_CARRIER = "— (no carrier served)";

function Row(props: { r: BreakdownRow; total?: boolean }) {
  const { r } = props;
  const Cell = props.total ? "th" : "td";
  return (
    <tr class={props.total ? "total" : undefined}>
      {props.total ? <th scope="row">Total</th> : <td>{r.name === "" ? <span class="muted">{NO_CARRIER}</span> : r.name}</td>}
      <Cell class="num" data-label="Requests">
        {count(r.requests)}
      </Cell>
      <Cell class="num" data-label="Tokens in">
        {count(r.tokensPrompt)}
      </Cell>
      <Cell class="num" data-label="Tokens out">
        {count(r.tokensCompletion)}
      </Cell>
      <Cell class="num" data-label="Cached">
        {count(r.tokensCached)}
      </Cell>
      <Cell class="num" data-label="Cost">
        {usd(r.costNano)}
      </Cell>
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
            <table id={`breakdown-${by}`} class="stack">
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
      <DayField label="From" name="from" value={f.from} />
      <DayField label="To" name="to" value={f.to} />
      <Choice label="Key" name="key" all="All keys" chosen={f.key} options={props.keys.map((k) => [k.hash, k.name])} />
      <Choice label="Model" name="model" all="All models" chosen={f.model} options={props.models.map((m) => [m, m])} />
      <button type="submit">Apply</button> <a href="/activity">Clear</a> <a href={`/activity.csv${filterQuery(f)}`}>Download CSV</a>
    </form>
  );
}

/**
 * A UTC day typed as the page writes dates, yyyy-mm-dd: a text field, because a date picker shows the
 * browser's local format (mm/dd/yyyy and the like) beside the page's UTC dates.
 */
function DayField(props: { label: string; name: string; value: string | undefined }) {
  return (
    <label>
      {props.label} (UTC){" "}
      <input
        type="text"
        class="day"
        name={props.name}
        value={props.value ?? ""}
        placeholder="yyyy-mm-dd"
        pattern="[0-9]{4}-[0-9]{2}-[0-9]{2}"
        title="A day as yyyy-mm-dd, like 2026-03-01"
        inputmode="numeric"
        maxlength={10}
        autocomplete="off"
      />
    </label>
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
