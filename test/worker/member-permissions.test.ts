import { describe, it, expect } from "vitest";
import { PERMISSIONS, assignableRoles, can, type Action } from "../../src/members/permissions";
import { MEMBER_ROLES } from "../../src/db/schema";
import { gate } from "../../src/members/role-gate";

// The permission matrix, written out here on its own (not derived from the code): o = owner, a = admin, m = member, b = billing.
const EXPECTED: Record<Action, string> = {
  "keys.own": "oam",
  "keys.all": "oa",
  "keys.management": "oa",
  "guardrails.read": "oa",
  "guardrails.write": "oa",
  "presets.read": "oam",
  "presets.write": "oa",
  "activity.own": "oamb",
  "activity.all": "oab",
  "credits.read": "oab",
  "credits.buy": "ob",
  "members.read": "oa",
  "members.invite": "oa",
  "members.manage": "o",
  "audit.read": "oa",
  "alerts.read": "oa",
  "alerts.write": "oa",
  "byok.read": "oa",
  "byok.write": "oa",
  "observability.read": "oa",
  "observability.write": "oa",
  "account.self": "oamb",
};

describe("the permission table", () => {
  it("has exactly the actions of the written-out matrix", () => {
    expect(Object.keys(PERMISSIONS).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [action, letters] of Object.entries(EXPECTED) as [Action, string][])
    for (const role of MEMBER_ROLES)
      it(`${action}: ${role} ${letters.includes(role[0]!) ? "may" : "may not"}`, () => {
        expect(can(role, action)).toBe(letters.includes(role[0]!));
      });

  it("owners hand out every role; admins every role but owner; members and billing none", () => {
    expect(assignableRoles("owner")).toEqual(["owner", "admin", "member", "billing"]);
    expect(assignableRoles("admin")).toEqual(["admin", "member", "billing"]);
    expect(assignableRoles("member")).toEqual([]);
    expect(assignableRoles("billing")).toEqual([]);
  });

  it("the gate refuses a route missing from its table, whatever the role", () => {
    const table = { "GET /known": "keys.own" } as const;
    expect(gate(table, "GET", "/known", "member")).toEqual({ ok: true, action: "keys.own" });
    expect(gate(table, "HEAD", "/known", "member")).toEqual({ ok: true, action: "keys.own" });
    expect(gate(table, "POST", "/known", "owner").ok).toBe(false);
    expect(gate(table, "GET", "/unknown", "owner").ok).toBe(false);
    const refused = gate(table, "GET", "/known", "billing");
    expect(refused).toMatchObject({ ok: false, action: "keys.own" });
    expect(!refused.ok && refused.message).toBe("Your role does not allow this: you are a billing member, and keys.own is for owner, admin, member.");
  });
});
