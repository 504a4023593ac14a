import { Hono, type Context } from "hono";
import { allowed } from "../http/roles";
import { listAccountKeys } from "../../keys/key-store";
import type { ActivityFilter } from "./filter";
import type { ConsoleEnv } from "../console-env";
import { accountPage } from "../http/stacks";
import { pageMeta, render } from "../layout/render";
import { accountKeys, activityPage, breakdowns, decodeCursor, PAGE_SIZE, spendSeries, withPending, type View } from "./queries";
import { ledgerFor } from "../../ledger/ledger";
import { readFilter, unreadDays } from "./filter";
import { activityCsv } from "./csv";
import { recordStores } from "../../generations/record-pages";
import { loadCatalog } from "../../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../../protocols/outbound";
import { ActivityPage } from "./page";
import { readMetric } from "./spend-chart";

/** /activity: the signed-in account's generations and their spend, requests and tokens over time, from the same records the API writes (D1, then the R2 archive). */
export const activityRoutes = new Hono<ConsoleEnv>();

/**
 * The filter of the query string; for a role without "activity.all" (a member), narrowed to the records of
 * the member's own keys (docs/teams.md), and the key choices to those keys.
 */
async function scopedFilter(c: Context<ConsoleEnv>): Promise<{ filter: ActivityFilter; keys: Array<{ hash: string; name: string }> }> {
  const s = c.var.session!;
  const filter = readFilter((name) => c.req.query(name));
  const keys = await accountKeys(c.env.DB, s.accountId);
  if (allowed(s, "activity.all")) return { filter, keys };
  const own = await listAccountKeys(c.env.DB, s.accountId, { memberId: s.memberId });
  const hashes = new Set(own.map((k) => k.hash));
  return { filter: { ...filter, member: { memberId: s.memberId, hashes } }, keys: keys.filter((k) => hashes.has(k.hash)) };
}

activityRoutes.get("/activity", ...accountPage, async (c) => {
  const { accountId } = c.var.session!;
  const before = decodeCursor(c.req.query("before"));
  const after = before ? undefined : decodeCursor(c.req.query("after"));
  const { filter, keys } = await scopedFilter(c);
  const view: View = c.req.query("view") === "hour" ? "hour" : "day";
  const metric = readMetric(c.req.query("metric"));
  // The newest page also shows what the account's ledger holds, not yet stored (an unreachable ledger: without it).
  const newest = before === undefined && after === undefined;
  const [stored, pending, days, sums, catalog] = await Promise.all([
    activityPage(recordStores(c.env, c.var.settings), accountId, { before, after }, filter),
    newest
      ? ledgerFor(c.env, accountId)
          .pendingRecords(PAGE_SIZE)
          .catch(() => [])
      : [],
    spendSeries(c.env.DB, accountId, view, Date.now(), filter),
    breakdowns(c.env.DB, accountId, filter),
    loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p)),
  ]);
  const page = newest ? withPending(stored, pending, accountId, filter) : stored;
  return render(
    c,
    <ActivityPage
      meta={await pageMeta(c, "Activity")}
      rows={page.rows}
      newer={page.newer}
      older={page.older}
      paged={before !== undefined || after !== undefined}
      days={days}
      view={view}
      metric={metric}
      filter={filter}
      unreadDays={unreadDays((name) => c.req.query(name), filter)}
      keys={keys}
      models={catalog.file.models.map((m) => m.id)}
      breakdowns={sums}
    />,
  );
});

/** The filtered requests as CSV (only the signed-in account's), streamed a page at a time from the archive and D1. */
activityRoutes.get("/activity.csv", ...accountPage, async (c) => {
  const { accountId } = c.var.session!;
  const { filter } = await scopedFilter(c);
  return new Response(activityCsv(recordStores(c.env, c.var.settings), accountId, filter), {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="switchyard-activity${filter.from ? `-${filter.from}` : ""}${filter.to ? `-to-${filter.to}` : ""}.csv"`,
      "cache-control": "no-store",
    },
  });
});
