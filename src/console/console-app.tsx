import { Hono } from "hono";
import type { ConsoleEnv } from "./console-env";
import { publicPage } from "./http/stacks";
import { renderError } from "./layout/render";
import { FAVICON_SVG, STYLESHEET, STYLESHEET_PATH } from "./layout/stylesheet";
import { homeRoutes } from "./home/routes";
import { modelRoutes } from "./models/routes";
import { authRoutes } from "./auth/routes";
import { keyRoutes } from "./keys/routes";
import { presetRoutes } from "./presets/routes";
import { byokConsoleRoutes } from "./byok/routes";
import { creditRoutes } from "./credits/routes";
import { activityRoutes } from "./activity/routes";
import { memberRoutes } from "./members/routes";
import { joinRoutes } from "./members/join";
import { auditRoutes } from "./members/audit-page";
import { alertRoutes } from "./alerts/routes";
import { observabilityConsoleRoutes } from "./observability/routes";
import { logError } from "../log-error";

/**
 * The web console, server-rendered at the service's origin beside the API. Mounted at "/": every
 * route lists its own middleware, so nothing here runs for /api/v1 or /admin requests.
 */
export const consoleApp = new Hono<ConsoleEnv>();

const ASSET_HEADERS = { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" };
consoleApp.get(STYLESHEET_PATH, (c) => c.body(STYLESHEET, 200, { ...ASSET_HEADERS, "content-type": "text/css; charset=utf-8" }));
consoleApp.get("/favicon.svg", (c) => c.body(FAVICON_SVG, 200, { ...ASSET_HEADERS, "content-type": "image/svg+xml" }));

consoleApp.route("/", homeRoutes);
consoleApp.route("/", modelRoutes);
consoleApp.route("/", authRoutes);
consoleApp.route("/", keyRoutes);
consoleApp.route("/", presetRoutes);
consoleApp.route("/", byokConsoleRoutes); // /settings/byok: owners and admins only once members exist
consoleApp.route("/", creditRoutes);
consoleApp.route("/", activityRoutes);
consoleApp.route("/", memberRoutes);
consoleApp.route("/", joinRoutes);
consoleApp.route("/", auditRoutes);
consoleApp.route("/", alertRoutes);
consoleApp.route("/", observabilityConsoleRoutes); // /settings/observability: trace export, owners and admins

/**
 * API and admin paths (and `/v1/…`, the API's paths without `/api`) keep the app's JSON 404, which names
 * the route meant; so does a request no page takes that no browser sent (a method other than GET without
 * text/html in its Accept: an SDK given the bare origin as its base URL). Anything else gets an HTML page.
 */
const isApiPath = (path: string) => /^\/(api|admin|v1)(\/|$)/.test(path);
const fromProgram = (method: string, accept: string | undefined) => method !== "GET" && method !== "HEAD" && !accept?.includes("text/html");

consoleApp.all("*", async (c, next) => {
  if (isApiPath(c.req.path) || fromProgram(c.req.method, c.req.header("accept"))) return c.notFound();
  await next();
});
consoleApp.all("*", ...publicPage, (c) => renderError(c, 404, "Page not found", "There is no page at this address."));

consoleApp.onError((err, c) => {
  logError("console error", err);
  return renderError(c, 500, "Something went wrong", "The page could not be shown. Try again in a moment.");
});
