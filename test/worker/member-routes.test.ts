import { describe, it, expect, beforeAll } from "vitest";
import { env } from "cloudflare:test";
import { CONSOLE_ROUTES, API_ROUTES } from "../../src/members/route-actions";
import { can } from "../../src/members/permissions";
import { MEMBER_ROLES, type MemberRole } from "../../src/db/schema";
import { consoleApp } from "../../src/console/console-app";
import { csrfOf, createKeyViaConsole, uniqueEmail } from "./console-helpers";
import { accountState, invite, managementKeyOf, setRole, team } from "./member-helpers";
import { call } from "./helpers";

// Every console route and every management API route of src/members/route-actions.ts, with every role: a role the
// route's action does not allow gets 403 (a page, or OpenRouter's JSON error) and the account is exactly as before,
// although the request names real things to change; a role it allows gets past the gate (any answer but 403), asked
// with inputs that change nothing (unknown ids, empty forms), so the rows stay for the next case.

type Fixture = {
  accountId: string;
  ownerKeyHash: string;
  guardrailId: string;
  slug: string;
  inviteId: string;
  memberId: string;
  billingId: string;
  endpointId: string;
  byokId: string;
  destinationId: string;
};
type Req = { path: string; fields?: Record<string, string>; body?: unknown };

const token43 = () => "t".repeat(11) + crypto.randomUUID().replace(/-/g, "");
const NO_HASH = "0".repeat(64);
const NO_UUID = "00000000-0000-4000-8000-000000000000";

/** What each console route is sent: `harm` (real targets) for roles it must refuse, `safe` for roles it lets through. Routes not listed get their path bare. */
const CONSOLE_INPUT: Record<string, (f: Fixture) => { harm: Req; safe: Req }> = {
  "GET /settings/keys/edit": (f) => ({ harm: { path: `/settings/keys/edit?key=${f.ownerKeyHash}` }, safe: { path: `/settings/keys/edit?key=${NO_HASH}` } }),
  "GET /settings/keys/delete": (f) => ({
    harm: { path: `/settings/keys/delete?key=${f.ownerKeyHash}` },
    safe: { path: `/settings/keys/delete?key=${NO_HASH}` },
  }),
  "POST /settings/keys": () => ({
    harm: { path: "/settings/keys", fields: { name: "sneaky", creation_token: token43() } },
    safe: { path: "/settings/keys", fields: {} },
  }),
  "POST /settings/keys/edit": (f) => ({
    harm: { path: "/settings/keys/edit", fields: { key: f.ownerKeyHash, limit: "1" } },
    safe: { path: "/settings/keys/edit", fields: { key: NO_HASH } },
  }),
  "POST /settings/keys/disable": (f) => ({
    harm: { path: "/settings/keys/disable", fields: { key: f.ownerKeyHash } },
    safe: { path: "/settings/keys/disable", fields: { key: NO_HASH } },
  }),
  "POST /settings/keys/enable": (f) => ({
    harm: { path: "/settings/keys/enable", fields: { key: f.ownerKeyHash } },
    safe: { path: "/settings/keys/enable", fields: { key: NO_HASH } },
  }),
  "POST /settings/keys/delete": (f) => ({
    harm: { path: "/settings/keys/delete", fields: { key: f.ownerKeyHash } },
    safe: { path: "/settings/keys/delete", fields: { key: NO_HASH } },
  }),
  "POST /settings/keys/management": () => ({
    harm: { path: "/settings/keys/management", fields: { name: "sneaky", creation_token: token43() } },
    safe: { path: "/settings/keys/management", fields: {} },
  }),
  "POST /settings/keys/guardrails/assign": (f) => ({
    harm: { path: "/settings/keys/guardrails/assign", fields: { key: f.ownerKeyHash, guardrail: f.guardrailId } },
    safe: { path: "/settings/keys/guardrails/assign", fields: { key: NO_HASH, guardrail: NO_UUID } },
  }),
  "POST /settings/keys/guardrails/unassign": (f) => ({
    harm: { path: "/settings/keys/guardrails/unassign", fields: { key: f.ownerKeyHash, guardrail: f.guardrailId } },
    safe: { path: "/settings/keys/guardrails/unassign", fields: { key: NO_HASH, guardrail: NO_UUID } },
  }),
  "POST /settings/keys/guardrails/create": (f) => ({
    harm: { path: "/settings/keys/guardrails/create", fields: { key: f.ownerKeyHash, name: "sneaky" } },
    safe: { path: "/settings/keys/guardrails/create", fields: { key: NO_HASH } },
  }),
  "POST /settings/presets": () => ({
    harm: { path: "/settings/presets", fields: { slug: "sneaky", config: "{}" } },
    safe: { path: "/settings/presets", fields: {} },
  }),
  "GET /settings/presets/:slug": (f) => ({ harm: { path: `/settings/presets/${f.slug}` }, safe: { path: `/settings/presets/${f.slug}` } }),
  "POST /settings/presets/:slug": (f) => ({
    harm: { path: `/settings/presets/${f.slug}`, fields: { config: "{}" } },
    safe: { path: "/settings/presets/nope", fields: {} },
  }),
  "POST /settings/presets/:slug/delete": (f) => ({
    harm: { path: `/settings/presets/${f.slug}/delete`, fields: {} },
    safe: { path: "/settings/presets/nope/delete", fields: {} },
  }),
  "POST /settings/credits": () => ({
    harm: { path: "/settings/credits", fields: { amount: "10" } },
    safe: { path: "/settings/credits", fields: { amount: "1" } },
  }),
  "POST /settings/members/invite": () => ({
    harm: { path: "/settings/members/invite", fields: { email: uniqueEmail(), role: "member" } },
    safe: { path: "/settings/members/invite", fields: {} },
  }),
  "POST /settings/members/invite/revoke": (f) => ({
    harm: { path: "/settings/members/invite/revoke", fields: { invite: f.inviteId } },
    safe: { path: "/settings/members/invite/revoke", fields: { invite: "inv_0" } },
  }),
  "POST /settings/members/role": (f) => ({
    harm: { path: "/settings/members/role", fields: { member: f.memberId, role: "owner" } },
    safe: { path: "/settings/members/role", fields: { member: "mem_0", role: "owner" } },
  }),
  "POST /settings/members/guardrails/assign": (f) => ({
    harm: { path: "/settings/members/guardrails/assign", fields: { member: f.billingId, guardrail: f.guardrailId } },
    safe: { path: "/settings/members/guardrails/assign", fields: { member: "mem_0", guardrail: NO_UUID } },
  }),
  "POST /settings/members/guardrails/unassign": (f) => ({
    harm: { path: "/settings/members/guardrails/unassign", fields: { member: f.memberId, guardrail: f.guardrailId } },
    safe: { path: "/settings/members/guardrails/unassign", fields: { member: "mem_0", guardrail: NO_UUID } },
  }),
  "POST /settings/members/remove": (f) => ({
    harm: { path: "/settings/members/remove", fields: { member: f.billingId } },
    safe: { path: "/settings/members/remove", fields: { member: "mem_0" } },
  }),
  "POST /settings/observability": () => ({
    harm: { path: "/settings/observability", fields: { type: "otel-collector", name: "sneaky", endpoint: "https://otlp.example.test", enabled: "on" } },
    safe: { path: "/settings/observability", fields: {} },
  }),
  "GET /settings/observability/:id": (f) => ({
    harm: { path: `/settings/observability/${f.destinationId}` },
    safe: { path: `/settings/observability/${NO_UUID}` },
  }),
  "POST /settings/observability/:id": (f) => ({
    harm: { path: `/settings/observability/${f.destinationId}`, fields: { name: "renamed", endpoint: "https://hooks.example.test/traces" } },
    safe: { path: `/settings/observability/${NO_UUID}`, fields: { name: "renamed", endpoint: "https://hooks.example.test/traces" } },
  }),
  "POST /settings/observability/:id/delete": (f) => ({
    harm: { path: `/settings/observability/${f.destinationId}/delete` },
    safe: { path: `/settings/observability/${NO_UUID}/delete` },
  }),
  "POST /settings/byok": () => ({
    harm: { path: "/settings/byok", fields: { provider: "groq", key: "gsk_sneaky_0000", mode: "first" } },
    safe: { path: "/settings/byok", fields: {} },
  }),
  "POST /settings/byok/:id/delete": (f) => ({ harm: { path: `/settings/byok/${f.byokId}/delete` }, safe: { path: `/settings/byok/${NO_UUID}/delete` } }),
  "POST /settings/alerts/balance": () => ({
    harm: { path: "/settings/alerts/balance", fields: { thresholds: "5" } },
    safe: { path: "/settings/alerts/balance", fields: { thresholds: "not a number" } },
  }),
  "POST /settings/alerts/keys/:hash": (f) => ({
    harm: { path: `/settings/alerts/keys/${f.ownerKeyHash}`, fields: { thresholds: "50" } },
    safe: { path: `/settings/alerts/keys/${NO_HASH}`, fields: { thresholds: "not a number" } },
  }),
  "POST /settings/alerts/endpoints": () => ({
    harm: { path: "/settings/alerts/endpoints", fields: { url: "https://hooks.example.test/sneaky" } },
    safe: { path: "/settings/alerts/endpoints", fields: { url: "" } },
  }),
  "POST /settings/alerts/endpoints/:id/test": (f) => ({
    harm: { path: `/settings/alerts/endpoints/${f.endpointId}/test` },
    safe: { path: "/settings/alerts/endpoints/nope/test" },
  }),
  "POST /settings/alerts/endpoints/:id/remove": (f) => ({
    harm: { path: `/settings/alerts/endpoints/${f.endpointId}/remove` },
    safe: { path: "/settings/alerts/endpoints/nope/remove" },
  }),
  "POST /settings/password": () => ({ harm: { path: "/settings/password", fields: {} }, safe: { path: "/settings/password", fields: {} } }),
};

/** The same for the management API (paths under /api/v1). */
const API_INPUT: Record<string, (f: Fixture) => { harm: Req; safe: Req }> = {
  "POST /keys": () => ({ harm: { path: "/keys", body: { name: "sneaky" } }, safe: { path: "/keys", body: {} } }),
  "GET /keys/:hash": (f) => ({ harm: { path: `/keys/${f.ownerKeyHash}` }, safe: { path: `/keys/${NO_HASH}` } }),
  "PATCH /keys/:hash": (f) => ({
    harm: { path: `/keys/${f.ownerKeyHash}`, body: { disabled: true } },
    safe: { path: `/keys/${NO_HASH}`, body: { disabled: true } },
  }),
  "DELETE /keys/:hash": (f) => ({ harm: { path: `/keys/${f.ownerKeyHash}` }, safe: { path: `/keys/${NO_HASH}` } }),
  "POST /guardrails": () => ({ harm: { path: "/guardrails", body: { name: "sneaky" } }, safe: { path: "/guardrails", body: {} } }),
  "GET /guardrails/:id": (f) => ({ harm: { path: `/guardrails/${f.guardrailId}` }, safe: { path: `/guardrails/${NO_UUID}` } }),
  "PATCH /guardrails/:id": (f) => ({
    harm: { path: `/guardrails/${f.guardrailId}`, body: { name: "renamed" } },
    safe: { path: `/guardrails/${NO_UUID}`, body: { name: "x" } },
  }),
  "DELETE /guardrails/:id": (f) => ({ harm: { path: `/guardrails/${f.guardrailId}` }, safe: { path: `/guardrails/${NO_UUID}` } }),
  "GET /guardrails/:id/assignments/keys": (f) => ({
    harm: { path: `/guardrails/${f.guardrailId}/assignments/keys` },
    safe: { path: `/guardrails/${NO_UUID}/assignments/keys` },
  }),
  "POST /guardrails/:id/assignments/keys": (f) => ({
    harm: { path: `/guardrails/${f.guardrailId}/assignments/keys`, body: { key_hashes: [f.ownerKeyHash] } },
    safe: { path: `/guardrails/${NO_UUID}/assignments/keys`, body: { key_hashes: [NO_HASH] } },
  }),
  "POST /guardrails/:id/assignments/keys/remove": (f) => ({
    harm: { path: `/guardrails/${f.guardrailId}/assignments/keys/remove`, body: { key_hashes: [f.ownerKeyHash] } },
    safe: { path: `/guardrails/${NO_UUID}/assignments/keys/remove`, body: { key_hashes: [NO_HASH] } },
  }),
  "GET /guardrails/:id/assignments/members": (f) => ({
    harm: { path: `/guardrails/${f.guardrailId}/assignments/members` },
    safe: { path: `/guardrails/${NO_UUID}/assignments/members` },
  }),
  "POST /guardrails/:id/assignments/members": (f) => ({
    harm: { path: `/guardrails/${f.guardrailId}/assignments/members`, body: { member_user_ids: [f.billingId] } },
    safe: { path: `/guardrails/${NO_UUID}/assignments/members`, body: { member_user_ids: ["mem_0"] } },
  }),
  "POST /guardrails/:id/assignments/members/remove": (f) => ({
    harm: { path: `/guardrails/${f.guardrailId}/assignments/members/remove`, body: { member_user_ids: [f.memberId] } },
    safe: { path: `/guardrails/${NO_UUID}/assignments/members/remove`, body: { member_user_ids: ["mem_0"] } },
  }),
  "POST /presets": () => ({ harm: { path: "/presets", body: { slug: "sneaky", config: {} } }, safe: { path: "/presets", body: {} } }),
  "POST /observability/destinations": () => ({
    harm: { path: "/observability/destinations", body: { type: "webhook", name: "sneaky", config: { url: "https://hooks.example.test/sneaky" } } },
    safe: { path: "/observability/destinations", body: {} },
  }),
  "GET /observability/destinations/:id": (f) => ({
    harm: { path: `/observability/destinations/${f.destinationId}` },
    safe: { path: `/observability/destinations/${NO_UUID}` },
  }),
  "PATCH /observability/destinations/:id": (f) => ({
    harm: { path: `/observability/destinations/${f.destinationId}`, body: { enabled: false } },
    safe: { path: `/observability/destinations/${NO_UUID}`, body: { enabled: false } },
  }),
  "DELETE /observability/destinations/:id": (f) => ({
    harm: { path: `/observability/destinations/${f.destinationId}` },
    safe: { path: `/observability/destinations/${NO_UUID}` },
  }),
  "GET /observability/destinations/:id/deliveries": (f) => ({
    harm: { path: `/observability/destinations/${f.destinationId}/deliveries` },
    safe: { path: `/observability/destinations/${NO_UUID}/deliveries` },
  }),
  "POST /byok": () => ({ harm: { path: "/byok", body: { provider: "deepinfra", key: "sneaky_0000" } }, safe: { path: "/byok", body: {} } }),
  "GET /byok/:id": (f) => ({ harm: { path: `/byok/${f.byokId}` }, safe: { path: `/byok/${NO_UUID}` } }),
  "PATCH /byok/:id": (f) => ({ harm: { path: `/byok/${f.byokId}`, body: { disabled: true } }, safe: { path: `/byok/${NO_UUID}`, body: { disabled: true } } }),
  "DELETE /byok/:id": (f) => ({ harm: { path: `/byok/${f.byokId}` }, safe: { path: `/byok/${NO_UUID}` } }),
  "PUT /alerts/rules/balance": () => ({
    harm: { path: "/alerts/rules/balance", body: { thresholds_usd: [5] } },
    safe: { path: "/alerts/rules/balance", body: { thresholds_usd: "x" } },
  }),
  "PUT /alerts/rules/keys/:hash": (f) => ({
    harm: { path: `/alerts/rules/keys/${f.ownerKeyHash}`, body: { percents: [50] } },
    safe: { path: `/alerts/rules/keys/${NO_HASH}`, body: { percents: "x" } },
  }),
  "POST /alerts/endpoints": () => ({
    harm: { path: "/alerts/endpoints", body: { url: "https://hooks.example.test/sneaky" } },
    safe: { path: "/alerts/endpoints", body: {} },
  }),
  "DELETE /alerts/endpoints/:id": (f) => ({ harm: { path: `/alerts/endpoints/${f.endpointId}` }, safe: { path: "/alerts/endpoints/nope" } }),
  "POST /alerts/endpoints/:id/test": (f) => ({ harm: { path: `/alerts/endpoints/${f.endpointId}/test` }, safe: { path: "/alerts/endpoints/nope/test" } }),
  "GET /presets/:slug": (f) => ({ harm: { path: `/presets/${f.slug}` }, safe: { path: "/presets/nope" } }),
  "PATCH /presets/:slug": (f) => ({ harm: { path: `/presets/${f.slug}`, body: { config: {} } }, safe: { path: "/presets/nope", body: { config: {} } } }),
  "PUT /presets/:slug": (f) => ({ harm: { path: `/presets/${f.slug}`, body: { config: {} } }, safe: { path: "/presets/nope", body: { config: {} } } }),
  "DELETE /presets/:slug": (f) => ({ harm: { path: `/presets/${f.slug}` }, safe: { path: "/presets/nope" } }),
  "GET /presets/:slug/versions": (f) => ({ harm: { path: `/presets/${f.slug}/versions` }, safe: { path: "/presets/nope/versions" } }),
  "GET /presets/:slug/versions/:version": (f) => ({ harm: { path: `/presets/${f.slug}/versions/1` }, safe: { path: "/presets/nope/versions/1" } }),
};

const inputOf = (table: typeof CONSOLE_INPUT, route: string, f: Fixture) =>
  table[route]?.(f) ?? { harm: { path: route.split(" ")[1]! }, safe: { path: route.split(" ")[1]! } };

let t: Awaited<ReturnType<typeof team>>;
let f: Fixture;
const mgmt = {} as Record<MemberRole, string>;

beforeAll(async () => {
  t = await team();
  for (const role of MEMBER_ROLES) {
    // Each role's management key, made while its member could make one (as an admin), then acting with the member's real role.
    await setRole(t[role].memberId, role === "owner" ? "owner" : "admin");
    mgmt[role] = await managementKeyOf(t[role].client, `${role} mgmt`);
    await setRole(t[role].memberId, role);
  }
  await createKeyViaConsole(t.owner.client, "owner key");
  const ownerKeyHash = (await env.DB.prepare("SELECT hash FROM api_keys WHERE account_id = ? AND name = 'owner key'")
    .bind(t.accountId)
    .first<{ hash: string }>())!.hash;
  const api = (method: string, path: string, body?: unknown) =>
    call(`/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${mgmt.owner}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const g = (await (await api("POST", "/guardrails", { name: "rail" })).json()) as { data: { id: string } };
  await api("POST", `/guardrails/${g.data.id}/assignments/keys`, { key_hashes: [ownerKeyHash] });
  // The member carries the guardrail (so removing it is a change), the billing member does not (so assigning it is one).
  expect(await (await api("POST", `/guardrails/${g.data.id}/assignments/members`, { member_user_ids: [t.member.memberId] })).json()).toEqual({
    assigned_count: 1,
  });
  expect((await api("POST", "/presets", { slug: "shared", config: { model: "openai/gpt-oss-20b" } })).status).toBe(201);
  await invite(t.owner.client, uniqueEmail(), "member");
  const inviteId = (await env.DB.prepare("SELECT id FROM member_invites WHERE account_id = ?").bind(t.accountId).first<{ id: string }>())!.id;
  const endpoint = (await (await api("POST", "/alerts/endpoints", { url: "https://hooks.example.test/team" })).json()) as { data: { id: string } };
  const byok = await api("POST", "/byok", { provider: "groq", key: "gsk_team_key_1234" });
  expect(byok.status).toBe(201);
  const byokId = ((await byok.json()) as { data: { id: string } }).data.id;
  const destination = await api("POST", "/observability/destinations", {
    type: "webhook",
    name: "team",
    config: { url: "https://hooks.example.test/traces" },
  });
  expect(destination.status).toBe(201);
  const destinationId = ((await destination.json()) as { data: { id: string } }).data.id;
  f = {
    destinationId,
    byokId,
    accountId: t.accountId,
    ownerKeyHash,
    guardrailId: g.data.id,
    slug: "shared",
    inviteId,
    memberId: t.member.memberId,
    billingId: t.billing.memberId,
    endpointId: endpoint.data.id,
  };
});

describe("every console route × every role", () => {
  for (const [route, action] of Object.entries(CONSOLE_ROUTES)) {
    if (route === "POST /sign-out") continue; // every role may sign out (account.self); doing it would end the session the next cases use
    for (const role of MEMBER_ROLES) {
      const allowed = can(role, action);
      it(`${route} as ${role}: ${allowed ? "let through" : "403, nothing changed"}`, async () => {
        const client = t[role].client;
        const { harm, safe } = inputOf(CONSOLE_INPUT, route, f);
        const req = allowed ? safe : harm;
        const before = await accountState(t.accountId);
        const res = route.startsWith("GET ")
          ? await client.get(req.path)
          : await client.post(req.path, req.fields ?? {}, { csrf: csrfOf((await client.page("/settings/password")).html) });
        const html = await res.text();
        if (allowed) expect(res.status, html.slice(0, 300)).not.toBe(403);
        else {
          expect(res.status).toBe(403);
          expect(html).toContain("Your role does not allow this");
          expect(await accountState(t.accountId)).toBe(before);
        }
      });
    }
  }

  it("every signed-in page and form the console serves is in the route table (so a new one cannot skip the gate)", () => {
    const served = consoleApp.routes.filter((r) => /^\/(settings|activity)/.test(r.path) || r.path === "/sign-out").map((r) => `${r.method} ${r.path}`);
    expect(served.length).toBeGreaterThan(20);
    for (const route of served) expect(Object.keys(CONSOLE_ROUTES)).toContain(route);
  });
});

describe("every management API route × every role's management key", () => {
  for (const [route, action] of Object.entries(API_ROUTES))
    for (const role of MEMBER_ROLES) {
      const allowed = can(role, action);
      it(`${route} as ${role}: ${allowed ? "let through" : "403, nothing changed"}`, async () => {
        const [method] = route.split(" ");
        const { harm, safe } = inputOf(API_INPUT, route, f);
        const req = allowed ? safe : harm;
        const before = await accountState(t.accountId);
        const res = await call(`/api/v1${req.path}`, {
          method,
          headers: { authorization: `Bearer ${mgmt[role]}`, ...(req.body === undefined ? {} : { "content-type": "application/json" }) },
          body: req.body === undefined ? undefined : JSON.stringify(req.body),
        });
        const body = (await res.json()) as { error?: { code: number; message: string } };
        if (allowed) expect(res.status, JSON.stringify(body)).not.toBe(403);
        else {
          expect(res.status).toBe(403);
          expect(body.error).toMatchObject({ code: 403, message: expect.stringContaining("Your role does not allow this") });
          expect(await accountState(t.accountId)).toBe(before);
        }
      });
    }
});
