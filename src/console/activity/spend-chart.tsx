import { count, usd } from "../layout/format";
import type { SpendPoint, View } from "./queries";

const W = 560;
const H = 200;
const LEFT = 96;
const RIGHT = 8;
const TOP = 12;
const BOTTOM = 30;

/**
 * Spend per UTC day (or hour) as an inline SVG bar chart (no script, no external file). Each bar has a
 * tooltip with its spend, requests and tokens, the chart has a text alternative, and the same numbers are
 * available as a table.
 */
export function SpendChart(props: { days: SpendPoint[]; view: View }) {
  const { days, view } = props;
  const unit = view === "day" ? "day" : "hour";
  // The axis tops out at a round figure (two significant digits) at or above the dearest day, so its labels read plainly.
  const max = niceCeiling(Math.max(0, ...days.map((d) => d.costNano)));
  const total = days.reduce((s, d) => s + d.costNano, 0);
  const requests = days.reduce((s, d) => s + d.requests, 0);
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, slot * 0.7);
  const round = (n: number) => Math.round(n * 10) / 10;
  const y = (nano: number) => round(TOP + plotH - (max === 0 ? 0 : (nano / max) * plotH));
  const busiest = days.reduce<SpendPoint | undefined>((b, d) => (d.costNano > (b?.costNano ?? 0) ? d : b), undefined);
  const first = days[0]?.label ?? "";
  const last = days.at(-1)?.label ?? "";
  const summary =
    total === 0
      ? `No spend between ${first} and ${last}.`
      : `${usd(total)} spent on ${requests} ${requests === 1 ? "request" : "requests"} between ${first} and ${last}; the most in one ${unit} was ${usd(busiest?.costNano ?? 0)} ${unit === "day" ? "on" : "at"} ${busiest?.label}.`;
  return (
    <figure class="chart">
      <figcaption id="spend-title">
        {unit === "day" ? "Daily" : "Hourly"} spend, last {days.length} {unit}s (UTC)
      </figcaption>
      {/* On a narrow screen the chart keeps a readable size and scrolls sideways in its card, as tables do. */}
      <div class="chart-scroll" role="region" aria-label="The chart, scrollable" tabindex={0}>
        <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-labelledby="spend-title spend-desc" preserveAspectRatio="xMidYMid meet">
          <desc id="spend-desc">{summary}</desc>
          <line class="axis" x1={LEFT} y1={TOP + plotH} x2={W - RIGHT} y2={TOP + plotH} />
          {[1, 0.5].map((f) => (
            <>
              <line class={f === 1 ? "axis" : "grid"} x1={LEFT} y1={y(max * f)} x2={W - RIGHT} y2={y(max * f)} />
              <text x={LEFT - 6} y={y(max * f) + 4} text-anchor="end">
                {usd(Math.round(max * f))}
              </text>
            </>
          ))}
          <text x={LEFT - 6} y={TOP + plotH + 4} text-anchor="end">
            $0
          </text>
          {days.map((d, i) =>
            d.costNano > 0 ? (
              <rect
                class="bar"
                x={round(LEFT + i * slot + (slot - barW) / 2)}
                y={y(d.costNano)}
                width={round(barW)}
                height={round(Math.max(1, TOP + plotH - y(d.costNano)))}
              >
                <title>{`${d.label}: ${usd(d.costNano)} (${d.requests} ${d.requests === 1 ? "request" : "requests"}, ${count(d.tokensPrompt)} → ${count(d.tokensCompletion)} tokens)`}</title>
              </rect>
            ) : null,
          )}
          {days.map((d, i) =>
            (days.length - 1 - i) % (unit === "day" ? 7 : 8) === 0 ? (
              // The last day's label ends at the plot's edge instead of being cut off there.
              <text x={round(i === days.length - 1 ? W - RIGHT : LEFT + i * slot + slot / 2)} y={H - 8} text-anchor={i === days.length - 1 ? "end" : "middle"}>
                {d.axis}
              </text>
            ) : null,
          )}
        </svg>
      </div>
      <p class="muted">{summary}</p>
      <details>
        <summary>{unit === "day" ? "Daily" : "Hourly"} spend as a table</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{unit === "day" ? "Day" : "Hour"} (UTC)</th>
                <th scope="col" class="num">
                  Requests
                </th>
                <th scope="col" class="num">
                  Tokens in → out
                </th>
                <th scope="col" class="num">
                  Spend
                </th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr>
                  <td>{d.label}</td>
                  <td class="num">{d.requests}</td>
                  <td class="num">
                    {count(d.tokensPrompt)} → {count(d.tokensCompletion)}
                  </td>
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

/** The smallest figure ≥ `nano` with two significant digits (1,710 → 1,800; 0 stays 0). */
export function niceCeiling(nano: number): number {
  if (nano <= 0) return 0;
  const step = 10 ** Math.max(0, Math.floor(Math.log10(nano)) - 1);
  return Math.ceil(nano / step) * step;
}
