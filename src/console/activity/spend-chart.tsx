import { compactCount, count, usd } from "../layout/format";
import type { SpendPoint, View } from "./queries";

/** The chart's height in pixels; its width is its card's (bars and day labels are placed in % of it). */
const H = 220;
const TOP = 12;
const BOTTOM = 30;
/** Pixels per character of an axis label (13 px digits are narrower), and the gap between label and plot. */
const CHAR_PX = 8;
const GAP = 8;

/** What the chart's bars can show: spend, requests, or tokens (prompt + completion); each with its own figures. */
export const METRICS = {
  spend: { switch: "Spend", title: "spend", value: (p: SpendPoint) => p.costNano, figure: usd, axis: usd, zero: "$0" },
  requests: { switch: "Requests", title: "requests", value: (p: SpendPoint) => p.requests, figure: count, axis: compactCount, zero: "0" },
  tokens: {
    switch: "Tokens",
    title: "tokens (in + out)",
    value: (p: SpendPoint) => p.tokensPrompt + p.tokensCompletion,
    figure: count,
    axis: compactCount,
    zero: "0",
  },
} as const;
export type Metric = keyof typeof METRICS;

/** The `metric` query parameter: one of METRICS, anything else (or nothing) is spend. */
export function readMetric(value: string | undefined): Metric {
  return value === "requests" || value === "tokens" ? value : "spend";
}

const plural = (n: number, one: string) => `${count(n)} ${n === 1 ? one : `${one}s`}`;

/**
 * Spend, requests or tokens per UTC day (or hour) as an inline SVG bar chart (no script, no external file).
 * Each bar has a tooltip with its spend, requests and tokens whatever the bars show, the chart has a text
 * alternative, and the same numbers are available as a table.
 */
export function SpendChart(props: { days: SpendPoint[]; view: View; metric: Metric }) {
  const { days, view } = props;
  const m = METRICS[props.metric];
  const unit = view === "day" ? "day" : "hour";
  const per = unit === "day" ? "Daily" : "Hourly";
  const title = `${per} ${m.title}, last ${days.length} ${unit}s (UTC)`;
  // The axis tops out at a round figure (two significant digits) at or above the busiest day, so its labels read plainly.
  const max = niceCeiling(Math.max(0, ...days.map(m.value)));
  const total = days.reduce((s, d) => s + m.value(d), 0);
  const requests = days.reduce((s, d) => s + d.requests, 0);
  const plotH = H - TOP - BOTTOM;
  // Horizontal positions are percentages of the plot's width, so the bars fill the card on any screen.
  const slot = 100 / Math.max(1, days.length);
  const barW = slot * 0.7;
  const round = (n: number) => Math.round(n * 10) / 10;
  const pct = (n: number) => `${Math.round(n * 100) / 100}%`;
  const y = (v: number) => round(TOP + plotH - (max === 0 ? 0 : (v / max) * plotH));
  // The scale: the round top and its half above the zero line; an all-zero chart has only its zero line.
  const ticks = max === 0 ? [] : [1, 0.5].map((f) => ({ f, at: y(max * f), text: m.axis(Math.round(max * f)) }));
  const axisW = GAP + CHAR_PX * Math.max(m.zero.length, ...ticks.map((t) => t.text.length));
  const busiest = days.reduce<SpendPoint | undefined>((b, d) => (m.value(d) > (b ? m.value(b) : 0) ? d : b), undefined);
  const first = days[0]?.label ?? "";
  const last = days.at(-1)?.label ?? "";
  const between = `between ${first} and ${last}`;
  const most = `the most in one ${unit} was ${m.figure(busiest ? m.value(busiest) : 0)} ${unit === "day" ? "on" : "at"} ${busiest?.label}`;
  const summary =
    total === 0
      ? `No ${props.metric} ${between}.`
      : props.metric === "spend"
        ? `${usd(total)} spent on ${plural(requests, "request")} ${between}; ${most}.`
        : props.metric === "requests"
          ? `${plural(total, "request")} ${between}; ${most}.`
          : `${plural(total, "token")} (in + out) in ${plural(requests, "request")} ${between}; ${most}.`;
  return (
    <figure class="chart">
      <figcaption id="spend-title">{title}</figcaption>
      {/* The scale in its own column beside the plot, so it stays in view however narrow the card. */}
      <div class="chart-body">
        <svg class="chart-axis" width={axisW} height={H} aria-hidden="true">
          {ticks.map((t) => (
            <text x={axisW - GAP} y={t.at + 4} text-anchor="end">
              {t.text}
            </text>
          ))}
          <text x={axisW - GAP} y={TOP + plotH + 4} text-anchor="end">
            {m.zero}
          </text>
        </svg>
        <svg class="chart-plot" width="100%" height={H} role="img" aria-labelledby="spend-title spend-desc">
          <desc id="spend-desc">{summary}</desc>
          <line class="axis" x1="0" y1={TOP + plotH} x2="100%" y2={TOP + plotH} />
          {ticks.map((t) => (
            <line class={t.f === 1 ? "axis" : "grid"} x1="0" y1={t.at} x2="100%" y2={t.at} />
          ))}
          {days.map((d, i) =>
            m.value(d) > 0 ? (
              <rect
                class="bar"
                x={pct(i * slot + (slot - barW) / 2)}
                y={y(m.value(d))}
                width={pct(barW)}
                height={round(Math.max(1, TOP + plotH - y(m.value(d))))}
              >
                <title>{`${d.label}: ${usd(d.costNano)} (${d.requests} ${d.requests === 1 ? "request" : "requests"}, ${count(d.tokensPrompt)} → ${count(d.tokensCompletion)} tokens)`}</title>
              </rect>
            ) : null,
          )}
          {days.map((d, i) =>
            (days.length - 1 - i) % (unit === "day" ? 7 : 8) === 0 ? (
              // Each label under its bar; near the plot's ends it may reach into the card's padding (the plot's overflow shows).
              <text x={pct(i * slot + slot / 2)} y={H - 8} text-anchor="middle">
                {d.axis}
              </text>
            ) : null,
          )}
        </svg>
      </div>
      <p class="muted">{summary}</p>
      <details>
        <summary>
          {per} {m.title} as a table
        </summary>
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{title}, with requests, tokens and spend</caption>
            <thead>
              <tr>
                <th scope="col">{unit === "day" ? "Day" : "Hour"} (UTC)</th>
                <th scope="col" class="num">
                  Requests
                </th>
                <th scope="col" class="num">
                  Tokens in → out
                </th>
                {props.metric === "tokens" && (
                  <th scope="col" class="num">
                    Tokens in + out
                  </th>
                )}
                <th scope="col" class="num">
                  Spend
                </th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr>
                  <td>{d.label}</td>
                  <td class="num">{count(d.requests)}</td>
                  <td class="num">
                    {count(d.tokensPrompt)} → {count(d.tokensCompletion)}
                  </td>
                  {props.metric === "tokens" && <td class="num">{count(m.value(d))}</td>}
                  <td class="num">{usd(d.costNano)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/**
 * The smallest whole figure ≥ `n` with two significant digits and an even last one, so that its half (the
 * mid gridline) is whole too: 1,710 → 1,800; 3 → 4; 17 → 18; 0 stays 0.
 */
export function niceCeiling(n: number): number {
  if (n <= 0) return 0;
  const step = 10 ** Math.max(0, Math.floor(Math.log10(n)) - 1);
  const top = Math.ceil(n / step) * step;
  return top % 2 === 0 ? top : top + step;
}
