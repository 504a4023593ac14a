import { utcDateTime } from "../layout/format";
import type { AlertEvent, FiredAlert } from "../../alerts/events";
import type { AlertDelivery, ApiKey } from "../../db/schema";

/** What an alert said, in words. */
function describe(e: AlertEvent, keys: ApiKey[]): string {
  if (e.type === "key.budget_threshold") {
    const key = keys.find((k) => k.hash === e.data.key_hash);
    const name = key ? `${key.name} (${key.label})` : "a deleted key";
    return `Key ${name} reached ${e.data.threshold_percent} % of its $${e.data.limit_usd} limit: $${e.data.usage_usd} spent${e.data.window_start ? ` since ${e.data.window_start}` : ""}.`;
  }
  if (e.type === "account.balance_below") return `The balance fell below $${e.data.threshold_usd}: $${e.data.balance_usd} left.`;
  return e.data.message;
}

/** The newest alerts fired, newest first. */
export function FiredList(props: { fired: FiredAlert[]; keys: ApiKey[] }) {
  return (
    <>
      <h2 id="fired-title">Alerts fired</h2>
      {props.fired.length === 0 ? (
        <p>No alert has fired yet.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="fired-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Fired (UTC)</th>
                <th scope="col">Alert</th>
                <th scope="col">Event</th>
              </tr>
            </thead>
            <tbody>
              {props.fired.map(({ event, sentAt }) => (
                <tr>
                  <th scope="row">{utcDateTime(event.created * 1000)}</th>
                  <td data-label="Alert">{describe(event, props.keys)}</td>
                  <td data-label="Event">
                    <code>{event.type}</code> <span class="muted">{event.id}</span>
                    {sentAt === null && <span class="muted"> (not yet sent)</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** The newest delivery attempts, newest first. */
export function DeliveryLog(props: { deliveries: AlertDelivery[] }) {
  return (
    <>
      <h2 id="deliveries-title">Delivery log</h2>
      {props.deliveries.length === 0 ? (
        <p>Nothing delivered yet.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="deliveries-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">When (UTC)</th>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col" class="num">
                  Attempt
                </th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {props.deliveries.map((d) => (
                <tr>
                  <th scope="row">{utcDateTime(d.at)}</th>
                  <td data-label="Event">
                    <code>{d.eventType}</code> <span class="muted">{d.eventId}</span>
                  </td>
                  <td data-label="Endpoint">{d.url}</td>
                  <td class="num" data-label="Attempt">
                    {d.attempt}
                  </td>
                  <td data-label="Outcome">
                    {d.outcome}
                    {d.status !== null && ` (${d.status})`}
                    {d.error !== null && <span class="muted"> — {d.error}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
