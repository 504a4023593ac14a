import type { Action } from "./permissions";

/**
 * Every signed-in console route and every management API route, each with the action it needs
 * (src/members/permissions.ts says which roles may). The role gate (src/members/role-gate.ts) looks the
 * matched route up here, and refuses one that is not listed: a new route is one line here, and
 * `test/worker/member-routes.test.ts` drives every line with every role.
 *
 * Keys of "keys.own" routes are narrowed to the member's own keys when the role lacks "keys.all".
 */
export const CONSOLE_ROUTES = {
  "GET /settings/keys": "keys.own",
  "POST /settings/keys": "keys.own",
  "GET /settings/keys/edit": "keys.own",
  "POST /settings/keys/edit": "keys.own",
  "POST /settings/keys/disable": "keys.own",
  "POST /settings/keys/enable": "keys.own",
  "GET /settings/keys/delete": "keys.own",
  "POST /settings/keys/delete": "keys.own",
  "GET /settings/keys/management": "keys.management",
  "POST /settings/keys/management": "keys.management",
  "POST /settings/keys/guardrails/assign": "guardrails.write",
  "POST /settings/keys/guardrails/unassign": "guardrails.write",
  "POST /settings/keys/guardrails/create": "guardrails.write",
  "GET /settings/alerts": "alerts.read",
  "POST /settings/alerts/balance": "alerts.write",
  "POST /settings/alerts/keys/:hash": "alerts.write",
  "POST /settings/alerts/endpoints": "alerts.write",
  "POST /settings/alerts/endpoints/:id/test": "alerts.write",
  "POST /settings/alerts/endpoints/:id/remove": "alerts.write",
  "GET /settings/observability": "observability.read",
  "POST /settings/observability": "observability.write",
  "GET /settings/observability/:id": "observability.read",
  "POST /settings/observability/:id": "observability.write",
  "POST /settings/observability/:id/delete": "observability.write",
  "GET /settings/byok": "byok.read",
  "POST /settings/byok": "byok.write",
  "POST /settings/byok/:id/delete": "byok.write",
  "GET /settings/presets": "presets.read",
  "POST /settings/presets": "presets.write",
  "GET /settings/presets/:slug": "presets.read",
  "POST /settings/presets/:slug": "presets.write",
  "POST /settings/presets/:slug/delete": "presets.write",
  "GET /settings/credits": "credits.read",
  "POST /settings/credits": "credits.buy",
  "GET /activity": "activity.own",
  "GET /activity.csv": "activity.own",
  "GET /settings/members": "members.read",
  "POST /settings/members/invite": "members.invite",
  "POST /settings/members/invite/revoke": "members.invite",
  "POST /settings/members/role": "members.manage",
  "POST /settings/members/remove": "members.manage",
  "POST /settings/members/guardrails/assign": "guardrails.write",
  "POST /settings/members/guardrails/unassign": "guardrails.write",
  "GET /settings/audit": "audit.read",
  "GET /settings/password": "account.self",
  "POST /settings/password": "account.self",
  "POST /sign-out": "account.self",
} as const satisfies Record<string, Action>;

/** The management API's routes (under /api/v1), for management keys acting with their member's current role. */
export const API_ROUTES = {
  "GET /keys": "keys.own",
  "POST /keys": "keys.own",
  "GET /keys/:hash": "keys.own",
  "PATCH /keys/:hash": "keys.own",
  "DELETE /keys/:hash": "keys.own",
  "GET /guardrails": "guardrails.read",
  "POST /guardrails": "guardrails.write",
  "GET /guardrails/assignments/keys": "guardrails.read",
  "GET /guardrails/:id": "guardrails.read",
  "PATCH /guardrails/:id": "guardrails.write",
  "DELETE /guardrails/:id": "guardrails.write",
  "GET /guardrails/:id/assignments/keys": "guardrails.read",
  "POST /guardrails/:id/assignments/keys": "guardrails.write",
  "POST /guardrails/:id/assignments/keys/remove": "guardrails.write",
  "GET /guardrails/assignments/members": "guardrails.read",
  "GET /guardrails/:id/assignments/members": "guardrails.read",
  "POST /guardrails/:id/assignments/members": "guardrails.write",
  "POST /guardrails/:id/assignments/members/remove": "guardrails.write",
  "GET /presets": "presets.read",
  "POST /presets": "presets.write",
  "GET /presets/:slug": "presets.read",
  "PATCH /presets/:slug": "presets.write",
  "PUT /presets/:slug": "presets.write",
  "DELETE /presets/:slug": "presets.write",
  "GET /presets/:slug/versions": "presets.read",
  "GET /presets/:slug/versions/:version": "presets.read",
  "GET /organization/members": "members.read",
  "GET /audit": "audit.read",
  "GET /observability/destinations": "observability.read",
  "POST /observability/destinations": "observability.write",
  "GET /observability/destinations/:id": "observability.read",
  "PATCH /observability/destinations/:id": "observability.write",
  "DELETE /observability/destinations/:id": "observability.write",
  "GET /observability/destinations/:id/deliveries": "observability.read",
  "GET /byok": "byok.read",
  "POST /byok": "byok.write",
  "GET /byok/:id": "byok.read",
  "PATCH /byok/:id": "byok.write",
  "DELETE /byok/:id": "byok.write",
  "GET /alerts/rules": "alerts.read",
  "PUT /alerts/rules/balance": "alerts.write",
  "PUT /alerts/rules/keys/:hash": "alerts.write",
  "GET /alerts": "alerts.read",
  "GET /alerts/deliveries": "alerts.read",
  "GET /alerts/endpoints": "alerts.read",
  "POST /alerts/endpoints": "alerts.write",
  "DELETE /alerts/endpoints/:id": "alerts.write",
  "POST /alerts/endpoints/:id/test": "alerts.write",
} as const satisfies Record<string, Action>;

export type ConsoleRoute = keyof typeof CONSOLE_ROUTES;
export type ApiRoute = keyof typeof API_ROUTES;

/** The action a matched route needs, or undefined when the route is not listed (the gate then refuses it). */
export function actionOf(table: Readonly<Record<string, Action>>, method: string, routePath: string): Action | undefined {
  return table[`${method === "HEAD" ? "GET" : method} ${routePath}`];
}
