import { Layout, type PageMeta } from "../layout/layout";
import { contextSize, count, modalities, perMillion } from "../layout/format";
import { SORTS, type ModelRow, type SortKey } from "./listing";

function Price(props: { nano: number }) {
  return props.nano === 0 ? <span class="tag">Free</span> : <>{perMillion(props.nano)}</>;
}

/** A column header that sorts the table by its column; the active one says so to assistive technology. */
function SortHeader(props: { label: string; sort: SortKey; current: SortKey; query: string; numeric?: boolean }) {
  const params = new URLSearchParams();
  if (props.query) params.set("q", props.query);
  params.set("sort", props.sort);
  const active = props.sort === props.current;
  return (
    <th scope="col" class={props.numeric ? "num" : undefined} aria-sort={active ? SORTS[props.sort][1] : undefined}>
      <a href={`/models?${params}`}>
        {props.label}
        {active ? (SORTS[props.sort][1] === "ascending" ? " ▲" : " ▼") : ""}
      </a>
    </th>
  );
}

export function ModelsPage(props: { meta: PageMeta; rows: ModelRow[]; total: number; query: string; sort: SortKey }) {
  const { rows, query, sort } = props;
  return (
    <Layout meta={props.meta}>
      <h1>Models</h1>
      <p class="lead">
        Every model in the catalog, its context size and its price per 1M tokens in and out (from the cheapest carrier). Use a model's id as <code>model</code>{" "}
        in your requests.
      </p>
      <form role="search" method="get" action="/models" class="inline" aria-label="Search the models">
        <div class="field">
          <label for="q">Search</label>
          <input id="q" name="q" type="search" value={query} placeholder="e.g. llama, qwen" maxlength={100} />
        </div>
        <div class="field">
          <label for="sort">Sort by</label>
          <select id="sort" name="sort">
            {(Object.keys(SORTS) as SortKey[]).map((k) => (
              <option value={k} selected={k === sort}>
                {SORTS[k][0]}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Apply</button>
      </form>
      <p role="status">
        {rows.length === props.total ? `${count(rows.length)} models` : `${count(rows.length)} of ${count(props.total)} models match “${query}”`}
      </p>
      {rows.length > 0 && (
        <div class="table-wrap" role="region" aria-label="Models" tabindex={0}>
          <table class="stack">
            <caption>Models, sorted by {SORTS[sort][0].toLowerCase()}. Prices in USD per 1M tokens.</caption>
            <thead>
              <tr>
                <SortHeader label="Model" sort="name" current={sort} query={query} />
                <SortHeader label="Context" sort="context" current={sort} query={query} numeric />
                <SortHeader label="Input / 1M" sort="input" current={sort} query={query} numeric />
                <SortHeader label="Output / 1M" sort="output" current={sort} query={query} numeric />
                <th scope="col">Modalities</th>
                <SortHeader label="Released" sort="newest" current={sort} query={query} numeric />
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr>
                  <th scope="row">
                    <a href={`/models/${r.id}`}>{r.name}</a>
                    <br />
                    <code class="muted">{r.id}</code>
                  </th>
                  <td class="num" data-label="Context" title={`${count(r.contextLength)} tokens`}>
                    {contextSize(r.contextLength)}
                  </td>
                  <td class="num" data-label="Input / 1M">
                    <Price nano={r.inputNano} />
                  </td>
                  <td class="num" data-label="Output / 1M">
                    <Price nano={r.outputNano} />
                  </td>
                  <td data-label="Modalities">{modalities(r.inputModalities, r.outputModalities)}</td>
                  <td class="num" data-label="Released">
                    {new Date(r.created * 1000).toISOString().slice(0, 10)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {rows.length === 0 && (
        <p>
          No model matches. <a href="/models">Show all models</a>.
        </p>
      )}
    </Layout>
  );
}
