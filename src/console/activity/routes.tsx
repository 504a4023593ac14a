import { Hono } from "hono";
import type { ConsoleEnv } from "../console-env";
import { accountPage } from "../http/stacks";
import { pageMeta, render } from "../layout/render";
import { activityPage, dailySpend, decodeCursor } from "./queries";
import { ActivityPage } from "./page";

/** /activity: the signed-in account's generations and daily spend, from the same D1 table the API writes. */
export const activityRoutes = new Hono<ConsoleEnv>();

const CHART_DAYS = 30;

activityRoutes.get("/activity", ...accountPage, async (c) => {
  const { accountId } = c.var.session!;
  const before = decodeCursor(c.req.query("before"));
  const after = before ? undefined : decodeCursor(c.req.query("after"));
  const [page, days] = await Promise.all([activityPage(c.env.DB, accountId, { before, after }), dailySpend(c.env.DB, accountId, CHART_DAYS)]);
  return render(
    c,
    <ActivityPage
      meta={await pageMeta(c, "Activity")}
      rows={page.rows}
      newer={page.newer}
      older={page.older}
      paged={before !== undefined || after !== undefined}
      days={days}
    />,
  );
});
