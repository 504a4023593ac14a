import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./keys/caller";
import { ApiError } from "./request/errors";
import { errorBody } from "./api/error-body";
import { apiCors } from "./api/cors";
import { accountRoutes } from "./api/account-routes";
import { catalogRoutes } from "./api/catalog-routes";
import { modelRoutes } from "./api/model-routes";
import { keyManagementRoutes } from "./api/key-management-routes";
import { guardrailRoutes } from "./api/guardrail-routes";
import { observabilityRoutes } from "./api/observability-routes";
import { userModelsRoutes } from "./api/user-models-routes";
import { presetRoutes } from "./api/preset-routes";
import { memberApiRoutes } from "./api/member-routes";
import { alertRoutes } from "./api/alert-routes";
import { byokRoutes } from "./api/byok-routes";
import { adminRoutes } from "./admin/admin-routes";
import { stripeWebhookRoutes } from "./api/stripe-webhook-routes";
import { consoleApp } from "./console/console-app";
import { drainUnreadBody } from "./http/drain-body";
import { readSettingsOnce } from "./http/read-settings";
import { logError } from "./log-error";
import { wrongPathAnswer } from "./api/wrong-path";

/** Where the API is mounted; a wrong path's answer names the routes and base URLs under it (src/api/wrong-path.ts). */
const API_PREFIX = "/api/v1";

/** The API under /api/v1: the public catalog routes; every other route authenticates its caller itself (`requireKey`). */
const api = new Hono<AppEnv>();
api.use("*", apiCors);
api.route("/", userModelsRoutes); // before the catalog's routes: /models/user is not a model
api.route("/", catalogRoutes);
api.route("/", modelRoutes); // every inbound API registered in src/protocols/inbound/index.ts
api.route("/", accountRoutes);
api.route("/", keyManagementRoutes);
api.route("/", guardrailRoutes);
api.route("/", presetRoutes);
api.route("/", memberApiRoutes);
api.route("/", alertRoutes);
api.route("/", byokRoutes); // the account's own carrier keys (docs/byok.md)
api.route("/", observabilityRoutes); // trace export (docs/observability.md)

export const app = new Hono<AppEnv>();
app.use("*", readSettingsOnce); // first: every handler after it reads `c.var.settings`, parsed once
app.use("*", drainUnreadBody); // every answer waits until the request body is read (bounded)
app.route(API_PREFIX, api);
app.route("/admin", adminRoutes);
app.route("/", stripeWebhookRoutes); // Stripe's signed events (src/payments/stripe-events.ts)
app.route("/", consoleApp); // the web console (HTML); its 404s are HTML, the API's stay JSON

// The admin's 404 is plain; any other path no route takes (the console's pages answered theirs) is
// explained: the route and base URL meant, in the caller's style.
const wrongPath = wrongPathAnswer(API_PREFIX, api.routes);
app.notFound((c) =>
  /^\/admin(\/|$)/.test(c.req.path) ? c.json(errorBody(404, `Not found: ${c.req.method} ${new URL(c.req.url).pathname}`), 404) : wrongPath(c),
);

app.onError((err, c) => {
  if (err instanceof ApiError) return c.json(errorBody(err.status, err.message, err.metadata), err.status, err.headers);
  if (err instanceof HTTPException) return c.json(errorBody(err.status, err.message || "Request error"), err.status);
  // Never echo internals (or anything from the request) to the caller.
  logError("unhandled error", err);
  return c.json(errorBody(500, "Internal error"), 500);
});
