import { Hono } from "hono";
import { requireKey, requireManagementKey } from "./auth";
import type { AppEnv } from "../keys/caller";
import { parseInput } from "./key-management-input";
import { pageQuery } from "./guardrail-input";
import { listMembers } from "../members/member-store";
import { AUDIT_PAGE, auditPage } from "../members/audit-store";
import type { AuditEvent, Member } from "../db/schema";

/**
 * `GET /organization/members` (OpenRouter's path and shape, the teams contract) and `GET /audit` (ours: OpenRouter
 * has no audit API), for management keys whose member's role may read them (src/members/route-actions.ts).
 */
export const memberApiRoutes = new Hono<AppEnv>();

const managementKey = [requireKey, requireManagementKey] as const;

/**
 * The contract's member: its roles are `org:admin` and `org:member`, so owners and admins read `org:admin`,
 * members and billing members `org:member`; `switchyard_role` (ours) has the role itself. Names are not kept: null.
 */
const presentMember = (m: Member) => ({
  id: m.id,
  email: m.email,
  first_name: null,
  last_name: null,
  role: m.role === "owner" || m.role === "admin" ? "org:admin" : "org:member",
  switchyard_role: m.role,
});

memberApiRoutes.get("/organization/members", ...managementKey, async (c) => {
  const q = parseInput(pageQuery, c.req.query());
  const offset = q.offset ?? 0;
  const all = await listMembers(c.env.DB, c.get("caller").accountId);
  return c.json({ data: all.slice(offset, offset + (q.limit ?? 50)).map(presentMember), total_count: all.length });
});

const presentEvent = (e: AuditEvent) => ({
  at: new Date(e.at).toISOString(),
  actor_member_id: e.actorMemberId,
  actor_email: e.actorEmail,
  via: e.via,
  action: e.action,
  target: e.target,
  details: e.details === null ? null : (JSON.parse(e.details) as unknown),
});

memberApiRoutes.get("/audit", ...managementKey, async (c) => {
  const q = parseInput(pageQuery, c.req.query());
  const limit = Math.min(q.limit ?? AUDIT_PAGE, 100);
  const { rows, total } = await auditPage(c.env.DB, c.get("caller").accountId, q.offset ?? 0, limit);
  return c.json({ data: rows.map(presentEvent), total_count: total });
});
