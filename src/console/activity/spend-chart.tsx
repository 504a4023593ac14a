import { usd } from "../layout/format";
import type { DaySpend } from "./queries";

const W = 560;
const H = 200;
const LEFT = 96;
const RIGHT = 8;
const TOP = 12;
const BOTTOM = 30;

/**
 * Daily spend as an inline SVG bar chart (no script, no external file). Each bar has a tooltip, the
 * chart has a text alternative, and the same numbers are available as a table.
 */
export function SpendChart(props: { days: DaySpend[] }) {
  const { days } = props;
  const max = Math.max(0, ...days.map((d) => d.costNano));
  const total = days.reduce((s, d) => s + d.costNano, 0);
  const requests = days.reduce((s, d) => s + d.requests, 0);
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const slot = plotW / Math.max(1, days.length);
  const barW = Math.max(2, slot * 0.7);
  const round = (n: number) => Math.round(n * 10) / 10;
  const y = (nano: number) => round(TOP + plotH - (max === 0 ? 0 : (nano / max) * plotH));
  const busiest = days.reduce<DaySpend | undefined>((b, d) => (d.costNano > (b?.costNano ?? 0) ? d : b), undefined);
  const first = days[0]?.day ?? "";
  const last = days.at(-1)?.day ?? "";
  const summary =
    total === 0
      ? `No spend between ${first} and ${last}.`
      : `${usd(total)} spent on ${requests} ${requests === 1 ? "request" : "requests"} between ${first} and ${last}; the most in one day was ${usd(busiest?.costNano ?? 0)} on ${busiest?.day}.`;
  return (
    <figure class="chart">
      <figcaption id="spend-title">Daily spend, last {days.length} days (UTC)</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-labelledby="spend-title spend-desc" preserveAspectRatio="xMidYMid meet">
        <desc id="spend-desc">{summary}</desc>
        <line class="axis" x1={LEFT} y1={TOP + plotH} x2={W - RIGHT} y2={TOP + plotH} />
        <line class="axis" x1={LEFT} y1={TOP} x2={W - RIGHT} y2={TOP} />
        <text x={LEFT - 6} y={TOP + plotH + 4} text-anchor="end">
          $0
        </text>
        <text x={LEFT - 6} y={TOP + 4} text-anchor="end">
          {usd(max)}
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
              <title>{`${d.day}: ${usd(d.costNano)} (${d.requests} ${d.requests === 1 ? "request" : "requests"})`}</title>
            </rect>
          ) : null,
        )}
        {days.map((d, i) =>
          (days.length - 1 - i) % 7 === 0 ? (
            <text x={round(LEFT + i * slot + slot / 2)} y={H - 8} text-anchor="middle">
              {d.day.slice(5)}
            </text>
          ) : null,
        )}
      </svg>
      <p class="muted">{summary}</p>
      <details>
        <summary>Daily spend as a table</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col" class="num">
                  Requests
                </th>
                <th scope="col" class="num">
                  Spend
                </th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr>
                  <td>{d.day}</td>
                  <td class="num">{d.requests}</td>
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
