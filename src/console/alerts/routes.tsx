import { Hono, type Context } from "hono";
import type { ConsoleEnv, SignedIn } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render, renderError } from "../layout/render";
import { csrfToken } from "../auth/csrf-token";
import { ledgerFor } from "../../ledger/ledger";
import { listAccountKeys, findAccountKey } from "../../keys/key-store";
import { addEndpoint, findEndpoint, listDeliveries, listEndpoints, removeEndpoint } from "../../alerts/endpoint-store";
import { parseBalanceAmounts, parseEndpointUrl, parsePercents, splitList } from "../../alerts/alert-input";
import { endpointSecretBox } from "../../alerts/alerts-queue";
import { testEvent, type AlertMessage } from "../../alerts/events";
import { AlertsPage, type AlertsPageProps } from "./page";

/**
 * /settings/alerts: the account's budget alerts (docs/teams.md, "Budget alerts") — balance and per-key
 * thresholds (kept in the account's ledger, where crossing is detected), webhook endpoints (the secret
 * shown once), a test event, the alerts fired and the delivery log. Everything is scoped to the session's
 * account; every form carries its CSRF token. One sub-app, mounted with one line (console-app.tsx), so
 * the role a page needs can be required where it is mounted.
 */
export const alertRoutes = new Hono<ConsoleEnv>();

const NOTICES = {
  balance: "Balance thresholds saved.",
  key: "Key thresholds saved.",
  removed: "Endpoint removed.",
  test: "Test event queued: it shows in the delivery log once sent.",
} as const;
/** Rows of the fired list and the delivery log shown. */
const SHOWN = 50;
const account = (c: Context<ConsoleEnv>): SignedIn => c.var.session!;
const noticeOf = (c: Context<ConsoleEnv>) => {
  const done = c.req.query("done");
  return done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined;
};
const notFound = (c: Context<ConsoleEnv>) => renderError(c, 404, "Endpoint not found", "There is no such webhook endpoint in your account.");

async function alertsPage(c: Context<ConsoleEnv>, status: 200 | 400, extra: Pick<AlertsPageProps, "refused" | "created" | "notice"> = {}) {
  const s = account(c);
  const ledger = ledgerFor(c.env, s.accountId);
  const [keys, rules, fired, endpoints, deliveries] = await Promise.all([
    listAccountKeys(c.env.DB, s.accountId),
    ledger.alertRules(),
    ledger.alertsFired(SHOWN),
    listEndpoints(c.env.DB, s.accountId),
    listDeliveries(c.env.DB, s.accountId, SHOWN),
  ]);
  return render(
    c,
    <AlertsPage
      meta={await pageMeta(c, "Budget alerts")}
      csrf={await csrfToken(s.token)}
      keys={keys}
      rules={rules}
      fired={fired}
      endpoints={endpoints}
      deliveries={deliveries}
      maxEndpoints={c.var.settings.ALERT_ENDPOINTS_PER_ACCOUNT}
      canSeal={endpointSecretBox(c.var.settings) !== null}
      {...extra}
    />,
    status,
  );
}

alertRoutes.get("/settings/alerts", ...accountPage, (c) => alertsPage(c, 200, { notice: noticeOf(c) }));

alertRoutes.post("/settings/alerts/balance", ...accountForm, async (c) => {
  const value = (await readForm(c)).thresholds ?? "";
  const parsed = parseBalanceAmounts(splitList(value), c.var.settings.ALERT_THRESHOLDS_PER_RULE);
  if ("error" in parsed) return alertsPage(c, 400, { refused: { form: "balance", value, error: parsed.error } });
  await ledgerFor(c.env, account(c).accountId).setAlertThresholds(null, parsed.ok);
  return c.redirect("/settings/alerts?done=balance", 303);
});

alertRoutes.post("/settings/alerts/keys/:hash", ...accountForm, async (c) => {
  const s = account(c);
  const hash = c.req.param("hash");
  if (!(await findAccountKey(c.env.DB, s.accountId, hash))) return renderError(c, 404, "Key not found", "There is no such key in your account.");
  const value = (await readForm(c)).thresholds ?? "";
  const parsed = parsePercents(splitList(value), c.var.settings.ALERT_THRESHOLDS_PER_RULE);
  if ("error" in parsed) return alertsPage(c, 400, { refused: { form: `key:${hash}`, value, error: parsed.error } });
  await ledgerFor(c.env, s.accountId).setAlertThresholds(hash, parsed.ok);
  return c.redirect("/settings/alerts?done=key", 303);
});

alertRoutes.post("/settings/alerts/endpoints", ...accountForm, async (c) => {
  const value = (await readForm(c)).url ?? "";
  const box = endpointSecretBox(c.var.settings);
  const parsed = parseEndpointUrl(value);
  if ("error" in parsed || box === null)
    return alertsPage(c, 400, {
      refused: { form: "endpoint", value, error: "error" in parsed ? parsed.error : "This deployment cannot store signing secrets." },
    });
  const added = await addEndpoint(c.env.DB, box, account(c).accountId, parsed.ok, c.var.settings.ALERT_ENDPOINTS_PER_ACCOUNT, Date.now());
  if ("error" in added) return alertsPage(c, 400, { refused: { form: "endpoint", value, error: added.error } });
  // Rendered, not redirected: the secret is in this answer only.
  return alertsPage(c, 200, { created: added, notice: "Endpoint added." });
});

alertRoutes.post("/settings/alerts/endpoints/:id/test", ...accountForm, async (c) => {
  const s = account(c);
  const endpoint = await findEndpoint(c.env.DB, s.accountId, c.req.param("id"));
  if (!endpoint) return notFound(c);
  // Through the queue like every alert: nothing here waits for the endpoint.
  const message: AlertMessage = { v: 1, kind: "deliver", endpointId: endpoint.id, event: testEvent(s.accountId, Date.now()) };
  await c.env.ALERTS_QUEUE.send(message);
  return c.redirect("/settings/alerts?done=test", 303);
});

alertRoutes.post("/settings/alerts/endpoints/:id/remove", ...accountForm, async (c) => {
  if (!(await removeEndpoint(c.env.DB, account(c).accountId, c.req.param("id")))) return notFound(c);
  return c.redirect("/settings/alerts?done=removed", 303);
});
