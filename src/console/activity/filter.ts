import { and, eq, gte, lt, type SQL } from "drizzle-orm";
import { generations } from "../../db/schema";

/** A UTC day, ms. */
export const DAY_MS = 86_400_000;

/** What the activity page, its breakdowns and its CSV are narrowed to (all optional): UTC days from–to (inclusive), a key, a model. */
export type ActivityFilter = { from?: string; to?: string; key?: string; model?: string };

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

/** The account's generations within the filter: the SQL condition every activity query uses. */
export function filterWhere(accountId: string, f: ActivityFilter): SQL {
  const parts: SQL[] = [eq(generations.accountId, accountId)];
  if (f.from) parts.push(gte(generations.createdAt, Date.parse(f.from)));
  if (f.to) parts.push(lt(generations.createdAt, Date.parse(f.to) + DAY_MS));
  if (f.key) parts.push(eq(generations.keyHash, f.key));
  if (f.model) parts.push(eq(generations.model, f.model));
  return and(...parts)!;
}

/** The filter as a query string (with a leading `?`, or "" when empty), for links that keep it. */
export function filterQuery(f: ActivityFilter, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, ...extra })) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}
