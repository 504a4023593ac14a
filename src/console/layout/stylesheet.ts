/**
 * The console's only stylesheet, served from our origin (the CSP allows styles from 'self' only).
 * Colours meet WCAG AA contrast; layouts collapse to one column on a phone; wide tables scroll
 * inside their own region instead of widening the page.
 */
export const STYLESHEET_PATH = "/assets/console.css";

export const STYLESHEET = `
:root {
  --fg: #1b1f24; --muted: #4d5560; --bg: #ffffff; --panel: #f5f7fa; --line: #d0d7de;
  --accent: #0a58ca; --accent-fg: #ffffff; --ok: #146c2e; --bad: #b42318; --warn-bg: #fff4d6; --warn-line: #b88700;
  --bar: #0a58ca;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: var(--bg); line-height: 1.5;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg: #e6edf3; --muted: #a9b4c0; --bg: #0d1117; --panel: #161b22; --line: #3d444d;
    --accent: #6cb6ff; --accent-fg: #0d1117; --ok: #56d364; --bad: #ff8182; --warn-bg: #3a2e05; --warn-line: #d29922;
    --bar: #6cb6ff;
  }
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 0.9rem; overflow-x: auto; }
h1 { font-size: 1.8rem; line-height: 1.2; margin: 0.2rem 0 1rem; }
h2 { font-size: 1.3rem; margin: 2rem 0 0.75rem; }
.skip-link { position: absolute; left: -999px; top: 0; background: var(--accent); color: var(--accent-fg); padding: 0.5rem 1rem; z-index: 10; }
.skip-link:focus { left: 0.5rem; top: 0.5rem; }
.site-header { border-bottom: 1px solid var(--line); background: var(--panel); }
.nav { max-width: 72rem; margin: 0 auto; padding: 0.6rem 1rem; display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem 1.2rem; }
.nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.2rem 1rem; margin: 0; padding: 0; }
.nav a { text-decoration: none; padding: 0.35rem 0.1rem; display: inline-block; }
.nav a[aria-current="page"] { font-weight: 700; text-decoration: underline; text-underline-offset: 0.3em; }
.brand { font-weight: 800; font-size: 1.15rem; color: var(--fg) !important; }
.sign-out { margin-left: auto; display: flex; align-items: center; gap: 0.6rem; flex-wrap: wrap; }
.who { color: var(--muted); overflow-wrap: anywhere; }
main { max-width: 72rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
main:focus { outline: none; }
.site-footer { border-top: 1px solid var(--line); color: var(--muted); font-size: 0.9rem; }
.site-footer p { max-width: 72rem; margin: 0 auto; padding: 1rem; }
.lead { font-size: 1.15rem; color: var(--muted); max-width: 46rem; }
.muted { color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(13rem, 1fr)); gap: 1rem; margin: 1rem 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; background: var(--panel); }
.card .figure { font-size: 1.6rem; font-weight: 700; overflow-wrap: anywhere; }
.card .label { color: var(--muted); font-size: 0.95rem; margin: 0; }
.panel { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; margin: 1rem 0; background: var(--panel); }
.notice { border-left: 4px solid var(--accent); background: var(--panel); padding: 0.75rem 1rem; margin: 1rem 0; }
.warning { border: 1px solid var(--warn-line); border-left-width: 4px; background: var(--warn-bg); padding: 0.75rem 1rem; margin: 1rem 0; border-radius: 4px; }
.error-summary { border: 2px solid var(--bad); border-radius: 6px; padding: 0.75rem 1rem; margin: 1rem 0; }
.error-summary h2 { margin: 0 0 0.4rem; font-size: 1.05rem; color: var(--bad); }
.field-error { color: var(--bad); font-weight: 600; margin: 0.2rem 0 0; }
form.stack { display: grid; gap: 0.9rem; max-width: 28rem; }
form.inline { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: end; }
.field { display: grid; gap: 0.25rem; }
fieldset.field { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 0.75rem; margin: 0; min-width: 0; }
legend { font-weight: 600; padding: 0 0.25rem; }
.break { overflow-wrap: anywhere; }
.field-row { display: flex; flex-wrap: wrap; gap: 0.9rem; }
.field-row .field { flex: 1 1 8rem; }
/* The first field of a row is its longest (a card number: 16 digits and their spaces). */
.field-row .field:first-child { flex: 2 1 14rem; }
label { font-weight: 600; }
.hint { color: var(--muted); font-size: 0.9rem; margin: 0; }
input, select, button, textarea { font: inherit; }
input[type="text"], input[type="email"], input[type="password"], input[type="search"], input[type="number"], select {
  padding: 0.55rem 0.6rem; border: 1px solid var(--muted); border-radius: 6px; background: var(--bg); color: var(--fg); min-height: 2.6rem; width: 100%;
}
textarea { padding: 0.55rem 0.6rem; border: 1px solid var(--muted); border-radius: 6px; background: var(--bg); color: var(--fg); width: 100%; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
input[aria-invalid="true"], select[aria-invalid="true"], textarea[aria-invalid="true"] { border: 2px solid var(--bad); }
button, .button { display: inline-block; padding: 0.55rem 1rem; min-height: 2.6rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); cursor: pointer; text-decoration: none; font-weight: 600; }
button.secondary { background: transparent; color: var(--accent); }
button.danger { background: transparent; border-color: var(--bad); color: var(--bad); }
button.link-button { background: none; border: none; color: var(--accent); padding: 0.35rem 0.1rem; min-height: 0; text-decoration: underline; font-weight: 400; }
a.button.danger-link { background: transparent; border-color: var(--bad); color: var(--bad); }
a.button.secondary-link { background: transparent; color: var(--accent); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.actions { display: flex; flex-wrap: wrap; gap: 0.4rem; }
.actions form { margin: 0; }
td .actions { flex-wrap: nowrap; }
td .actions button, td .actions a { white-space: nowrap; }
td .actions select { width: auto; }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; margin: 0.75rem 0; }
table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
caption { text-align: left; padding: 0.6rem 0.75rem; color: var(--muted); }
th, td { text-align: left; padding: 0.55rem 0.75rem; border-top: 1px solid var(--line); vertical-align: top; }
thead th { border-top: none; background: var(--panel); white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th a { color: inherit; }
.status-ok { color: var(--ok); font-weight: 600; }
details.attempts { font-size: 0.85em; margin-top: 0.25rem; }
details.attempts ol { margin: 0.25rem 0 0; padding-left: 1.25rem; }
.status-bad { color: var(--bad); font-weight: 600; }
.tag { display: inline-block; border: 1px solid var(--line); border-radius: 999px; padding: 0 0.5rem; font-size: 0.85rem; white-space: nowrap; }
.new-key { border: 2px solid var(--ok); border-radius: 8px; padding: 1rem; margin: 1rem 0; }
.new-key h2 { margin-top: 0; }
.key-output { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
.key-output input { flex: 1 1 20rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
.chart-switches { display: flex; flex-wrap: wrap; gap: 0.5rem 2rem; margin: 1rem 0; }
.chart-switches .pager { margin: 0; }
.filters { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; margin: 1rem 0; }
.filters label { display: flex; flex-direction: column; gap: 0.25rem; font-size: 0.9rem; }
.filters select { max-width: 16rem; }
.filters input.day { width: 9rem; }
tfoot tr.total th, tfoot tr.total td { font-weight: 600; border-top: 2px solid var(--line); }
figure.chart { margin: 1rem 0; padding: 1rem; border: 1px solid var(--line); border-radius: 8px; }
/* The scale keeps its width; the plot takes the rest of the card, whatever the screen (no sideways scroll). */
figure.chart .chart-body { display: flex; align-items: flex-start; }
figure.chart .chart-axis { flex: none; display: block; }
/* Visible overflow: the first day's label may reach a little past the plot's left edge, over the scale's empty corner. */
figure.chart .chart-plot { flex: 1 1 0; min-width: 0; display: block; overflow: visible; }
figure.chart .grid { stroke: var(--line); stroke-dasharray: 3 3; }
figure.chart figcaption { font-weight: 600; margin-bottom: 0.5rem; }
.chart .bar { fill: var(--bar); }
.chart .axis { stroke: var(--line); }
.chart text { fill: var(--muted); font-size: 13px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1.2rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  h1 { font-size: 1.5rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: 0.5rem; }
  .sign-out { margin-left: 0; }
  /*
   * Tables of records stack on a phone: each row becomes a small card, each cell a line led by its
   * column's name (data-label), so every column and every action shows without a sideways scroll.
   */
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  table.stack, table.stack caption, table.stack tbody, table.stack tfoot, table.stack tr, table.stack th, table.stack td { display: block; }
  table.stack tr { border-top: 1px solid var(--line); padding: 0.4rem 0; }
  table.stack tbody tr:first-child { border-top: none; }
  table.stack tfoot tr.total { border-top: 2px solid var(--line); }
  table.stack tr > th, table.stack tr > td { border: none; padding: 0.2rem 0.75rem; text-align: left; white-space: normal; }
  table.stack tr > [data-label] { position: relative; padding-left: 9.25rem; }
  table.stack tr > [data-label]::before { content: attr(data-label); position: absolute; left: 0.75rem; width: 8.25rem; font-size: 0.9rem; font-weight: 600; color: var(--muted); }
  table.stack td .actions { flex-wrap: wrap; }
}
`;

/** The site icon: a small switch-track mark, same origin as everything else. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0a58ca"/><path d="M6 24 L16 8 L26 24 M11 16 H21" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round"/></svg>`;
