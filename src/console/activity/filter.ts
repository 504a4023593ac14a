import type { RecordFilter } from "../../db/record-filter";

export { DAY_MS } from "../../db/record-filter";

/** What the activity page, its breakdowns and its CSV are narrowed to (all optional): UTC days from–to (inclusive), a key, a model. */
export type ActivityFilter = RecordFilter;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const HASH = /^[0-9a-f]{64}$/;
const MODEL = /^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._:-]*$/;

/** The filter from a query string: a value that is not one of its kind is left out (never an error page). */
export function readFilter(query: (name: string) => string | undefined): ActivityFilter {
  const f: ActivityFilter = {};
  const from = query("from");
  const to = query("to");
  const key = query("key");
  const model = query("model");
  if (from && DAY.test(from) && !Number.isNaN(Date.parse(from))) f.from = from;
  if (to && DAY.test(to) && !Number.isNaN(Date.parse(to))) f.to = to;
  if (key && HASH.test(key)) f.key = key;
  if (model && model.length <= 256 && MODEL.test(model)) f.model = model;
  return f;
}

/** The day fields that were given but are no yyyy-mm-dd day, and so left out of the filter: the page names them rather than ignore them silently. */
export function unreadDays(query: (name: string) => string | undefined, f: ActivityFilter): Array<{ name: "from" | "to"; value: string }> {
  return (["from", "to"] as const).flatMap((name) => {
    const value = query(name)?.trim();
    return value && f[name] === undefined ? [{ name, value: value.slice(0, 40) }] : [];
  });
}

/** The filter as a query string (with a leading `?`, or "" when empty), for links that keep it. */
export function filterQuery(f: ActivityFilter, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, ...extra })) if (typeof v === "string" && v) q.set(k, v); // never `member`: the session sets it
  const s = q.toString();
  return s ? `?${s}` : "";
}
