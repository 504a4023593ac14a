import { PostForm } from "../layout/forms";
import { usd, utcDate, utcDateTime } from "../layout/format";
import type { ApiKey } from "../../db/schema";
import type { KeyUsage } from "../../ledger/contract";
import { limitRemainingNano } from "../../keys/key-budget";

/** Table cells of the keys page, shared by its API key and management key tables. */

export type KeyRow = { key: ApiKey; usage: KeyUsage };

const PERIOD = { daily: ["per day", "today"], weekly: ["per week", "this week"], monthly: ["per month", "this month"] } as const;

/** The limit, whether it counts BYOK usage, and what is left of it in its current window (the same rule as the API's limit_remaining). */
export function Limit(props: { apiKey: ApiKey; usage: KeyUsage }) {
  const { limitNano, limitReset } = props.apiKey;
  const left = limitRemainingNano(props.apiKey, props.usage);
  if (limitNano === null || left === null) return <span class="muted">None</span>;
  const [per, window] = limitReset ? PERIOD[limitReset] : [null, null];
  return (
    <>
      {usd(limitNano)}
      {per && ` ${per}`}
      <br />
      {props.apiKey.includeByokInLimit && (
        <>
          <span class="muted">counts BYOK usage</span>
          <br />
        </>
      )}
      <span class="muted">
        {usd(left)} left{window && ` ${window}`}
      </span>
    </>
  );
}

export function Expiry(props: { ms: number | null }) {
  if (props.ms === null) return <span class="muted">Never</span>;
  return <time datetime={new Date(props.ms).toISOString()}>{utcDateTime(props.ms)}</time>;
}

export function KeyStatus(props: { apiKey: ApiKey; now: number }) {
  const k = props.apiKey;
  if (k.disabled) return <span class="status-bad">Disabled</span>;
  if (k.expiresAt !== null && k.expiresAt <= props.now) return <span class="status-bad">Expired</span>;
  return <span class="status-ok">Active</span>;
}

/** Disable or enable, and delete (both kinds of key); edit (API keys: their limit, reset and expiry). */
export function KeyActions(props: { apiKey: ApiKey; csrf: string; kind: string }) {
  const k = props.apiKey;
  return (
    <div class="actions">
      {!k.isManagement && (
        <a class="button secondary-link" href={`/settings/keys/edit?key=${k.hash}`} aria-label={`Edit ${props.kind} ${k.name}…`}>
          Edit…
        </a>
      )}
      <PostForm action={k.disabled ? "/settings/keys/enable" : "/settings/keys/disable"} csrf={props.csrf}>
        <input type="hidden" name="key" value={k.hash} />
        <button type="submit" class="secondary" aria-label={`${k.disabled ? "Enable" : "Disable"} ${props.kind} ${k.name}`}>
          {k.disabled ? "Enable" : "Disable"}
        </button>
      </PostForm>
      <a class="button danger-link" href={`/settings/keys/delete?key=${k.hash}`} aria-label={`Delete ${props.kind} ${k.name}…`}>
        Delete…
      </a>
    </div>
  );
}

/** The last cells of a key's row in both tables: its status, when it was made, and what can be done with it. */
export function KeyRowEnd(props: { apiKey: ApiKey; now: number; csrf: string; kind: string }) {
  return (
    <>
      <td data-label="Status">
        <KeyStatus apiKey={props.apiKey} now={props.now} />
      </td>
      <td data-label="Created">
        <time datetime={new Date(props.apiKey.createdAt).toISOString()}>{utcDate(props.apiKey.createdAt)}</time>
      </td>
      <td>
        <KeyActions apiKey={props.apiKey} csrf={props.csrf} kind={props.kind} />
      </td>
    </>
  );
}
