import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ConsoleEnv, SignedIn } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render, renderError } from "../layout/render";
import { csrfToken } from "../auth/csrf-token";
import { ApiError } from "../../request/errors";
import type { ObservabilityDestination } from "../../db/schema";
import { listAccountKeys } from "../../keys/key-store";
import { addDestination, changeDestination, type DestinationScope } from "../../api/observability-changes";
import { destinationBox } from "../../observability/destination-secrets";
import { deleteDestination, deliveriesOf, findDestination, listDestinations } from "../../observability/destination-store";
import { parseCreate, parseUpdate, valuesOfDestination, valuesOfForm, type DestinationForm } from "./destination-form";
import { NEW_DESTINATION } from "./fields";
import { ObservabilityPage, type ObservabilityPageProps } from "./page";
import { DestinationPage } from "./destination-page";

/**
 * /settings/observability: the account's trace export destinations (docs/observability.md) — list, add (a
 * webhook's signing secret shown once), change, delete, and each one's delivery log. Checked and stored by what
 * `/api/v1/observability/destinations` uses (src/api/observability-input.ts, observability-changes.ts, the
 * destination store): the same rules, the same limits, the same sealing. Scoped to the session's account; every
 * form carries its CSRF token; the role gate (CONSOLE_ROUTES) lets owners and admins in, and audits each change.
 */
export const observabilityConsoleRoutes = new Hono<ConsoleEnv>();

const PAGE = "/settings/observability";
/** Delivery attempts shown on a destination's page, newest first (the account keeps OBSERVABILITY_DELIVERY_LOG_ROWS). */
const DELIVERIES_SHOWN = 50;
const NOTICES = { created: "Destination added.", saved: "Changes saved.", deleted: "Destination deleted." } as const;

const account = (c: Context<ConsoleEnv>): SignedIn => c.var.session!;
const noticeOf = (c: Context<ConsoleEnv>) => {
  const done = c.req.query("done");
  return done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined;
};
const notFound = (c: Context<ConsoleEnv>) => renderError(c, 404, "Destination not found", "There is no such trace export destination in your account.");
const scope = (c: Context<ConsoleEnv>): DestinationScope => ({ d1: c.env.DB, settings: c.var.settings, accountId: account(c).accountId, now: Date.now() });
/** The keys a destination can be filtered by: the account's API keys (management keys make no requests). */
const keysOf = async (c: Context<ConsoleEnv>) => (await listAccountKeys(c.env.DB, account(c).accountId)).filter((k) => !k.isManagement);
/** A refusal of the shared create or change (no sealing key, the account's limit), said above the form as submitted. */
const refusedBy = (err: ApiError, form: Record<string, string>, type?: string): { status: ContentfulStatusCode; form: DestinationForm } => ({
  status: err.status,
  form: { values: { ...valuesOfForm(form), ...(type ? { type } : {}) }, errors: {}, problem: err.message },
});

async function listPage(c: Context<ConsoleEnv>, status: ContentfulStatusCode, extra: Partial<Pick<ObservabilityPageProps, "form" | "created" | "notice">>) {
  const s = account(c);
  const max = c.var.settings.OBSERVABILITY_DESTINATIONS_PER_ACCOUNT;
  const [{ rows }, keys] = await Promise.all([listDestinations(c.env.DB, s.accountId, 0, max), keysOf(c)]);
  return render(
    c,
    <ObservabilityPage
      meta={await pageMeta(c, "Trace export")}
      csrf={await csrfToken(s.token)}
      destinations={rows}
      keys={keys}
      form={extra.form ?? { values: NEW_DESTINATION, errors: {} }}
      created={extra.created}
      notice={extra.notice}
      max={max}
      canSeal={destinationBox(c.var.settings) !== null}
    />,
    status,
  );
}

async function destinationPage(
  c: Context<ConsoleEnv>,
  d: ObservabilityDestination,
  status: ContentfulStatusCode,
  extra: { form?: DestinationForm; notice?: string },
) {
  const s = account(c);
  const [keys, deliveries] = await Promise.all([keysOf(c), deliveriesOf(c.env.DB, s.accountId, d.id, DELIVERIES_SHOWN)]);
  return render(
    c,
    <DestinationPage
      meta={await pageMeta(c, d.name)}
      csrf={await csrfToken(s.token)}
      destination={d}
      keys={keys}
      form={extra.form ?? { values: valuesOfDestination(d), errors: {} }}
      deliveries={deliveries}
      shown={DELIVERIES_SHOWN}
      notice={extra.notice}
    />,
    status,
  );
}

observabilityConsoleRoutes.get(PAGE, ...accountPage, (c) => listPage(c, 200, { notice: noticeOf(c) }));

observabilityConsoleRoutes.post(PAGE, ...accountForm, async (c) => {
  const form = await readForm(c);
  const parsed = parseCreate(form);
  if ("refused" in parsed) return listPage(c, 400, { form: parsed.refused });
  try {
    const { created, signingSecret } = await addDestination(scope(c), parsed.ok);
    // A webhook's secret is in this answer only: rendered, not redirected.
    if (signingSecret) return listPage(c, 200, { created: { destination: created, secret: signingSecret }, notice: NOTICES.created });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const refused = refusedBy(err, form);
    return listPage(c, refused.status, { form: refused.form });
  }
  return c.redirect(`${PAGE}?done=created`, 303);
});

observabilityConsoleRoutes.get(`${PAGE}/:id`, ...accountPage, async (c) => {
  const found = await findDestination(c.env.DB, account(c).accountId, c.req.param("id"));
  return found ? destinationPage(c, found, 200, { notice: noticeOf(c) }) : notFound(c);
});

observabilityConsoleRoutes.post(`${PAGE}/:id`, ...accountForm, async (c) => {
  const found = await findDestination(c.env.DB, account(c).accountId, c.req.param("id"));
  if (!found) return notFound(c);
  const form = await readForm(c);
  const parsed = parseUpdate(form, found);
  if ("refused" in parsed) return destinationPage(c, found, 400, { form: parsed.refused });
  try {
    if (!(await changeDestination(scope(c), found.id, parsed.ok))) return notFound(c); // deleted meanwhile
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const refused = refusedBy(err, form, found.type);
    return destinationPage(c, found, refused.status, { form: refused.form });
  }
  return c.redirect(`${PAGE}/${found.id}?done=saved`, 303);
});

observabilityConsoleRoutes.post(`${PAGE}/:id/delete`, ...accountForm, async (c) => {
  if (!(await deleteDestination(c.env.DB, account(c).accountId, c.req.param("id")))) return notFound(c);
  return c.redirect(`${PAGE}?done=deleted`, 303);
});
