import { Hono, type Context } from "hono";
import * as z from "zod";
import type { ConsoleEnv } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render, renderError } from "../layout/render";
import { csrfToken } from "../auth/csrf-token";
import { emailField } from "../auth/credentials-input";
import { allowed } from "../http/roles";
import { assignableRoles } from "../../members/permissions";
import { changeRole, findMember, listInvites, listMembers, removeMember } from "../../members/member-store";
import { createInvite, INVITE_PATH, revokeInvite } from "../../members/invite-store";
import { MEMBER_ROLES, type MemberRole } from "../../db/schema";
import { MembersPage, ROLE_LABELS, type InviteForm, type MembersPageProps } from "./page";
import { findGuardrail, listGuardrails } from "../../keys/guardrail-store";
import { assignMembers, memberGuardrails, unassignMembers } from "../../keys/guardrail-member-store";

/** /settings/members: the account's members, invitations by one-time link, roles (owners), removal (owners). */
export const memberRoutes = new Hono<ConsoleEnv>();

const NOTICES = {
  role: "Role changed.",
  removed: "Member removed: their sessions are ended and their keys no longer work.",
  guardrail: "Guardrails changed: they apply to every key of the member.",
  revoked: "Invitation revoked: its link no longer works.",
} as const;

const LAST_OWNER = "An account always has at least one owner: make someone else an owner first, then change or remove this one.";

type Extra = Pick<MembersPageProps, "created" | "form" | "problem" | "notice">;

async function membersPage(c: Context<ConsoleEnv>, status: 200 | 400 | 404 | 409, extra: Extra = {}) {
  const s = c.var.session!;
  const [members, invites, guardrails] = await Promise.all([
    listMembers(c.env.DB, s.accountId),
    listInvites(c.env.DB, s.accountId),
    allowed(s, "guardrails.write")
      ? Promise.all([listGuardrails(c.env.DB, s.accountId, { offset: 0, limit: 100 }), memberGuardrails(c.env.DB, s.accountId)])
      : undefined,
  ]);
  return render(
    c,
    <MembersPage
      meta={await pageMeta(c, "Members")}
      csrf={await csrfToken(s.token)}
      me={s.memberId}
      members={members}
      invites={invites}
      assignable={assignableRoles(s.role)}
      manage={allowed(s, "members.manage")}
      guardrails={guardrails && { guardrails: guardrails[0].rows, assigned: guardrails[1] }}
      {...extra}
    />,
    status,
  );
}

memberRoutes.get("/settings/members", ...accountPage, (c) => {
  const done = c.req.query("done");
  return membersPage(c, 200, { notice: done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined });
});

const roleField = z.enum(MEMBER_ROLES, "Choose one of the roles.");

/** A role the signed-in member may not hand out (an admin inviting an owner) is refused as the gate refuses: 403. */
const forbiddenRole = (c: Context<ConsoleEnv>, role: MemberRole) =>
  renderError(c, 403, "Not allowed", `Your role does not allow giving the role ${ROLE_LABELS[role]}: only owners make owners.`);

memberRoutes.post("/settings/members/invite", ...accountForm, async (c) => {
  const s = c.var.session!;
  const form = await readForm(c);
  const parsed = z.object({ email: emailField, role: roleField }).safeParse(form);
  if (!parsed.success) {
    const errors: InviteForm["errors"] = {};
    for (const i of parsed.error.issues) if ((i.path[0] === "email" || i.path[0] === "role") && !errors[i.path[0]]) errors[i.path[0]] = i.message;
    return membersPage(c, 400, { form: { email: form.email, role: form.role, errors } });
  }
  const { email, role } = parsed.data;
  if (!assignableRoles(s.role).includes(role)) return forbiddenRole(c, role);
  const [members, invites] = await Promise.all([listMembers(c.env.DB, s.accountId), listInvites(c.env.DB, s.accountId)]);
  const refuse = (problem: string) => membersPage(c, 400, { form: { email, role, problem } });
  if (members.some((m) => m.email === email)) return refuse(`${email} is a member of this account already.`);
  const max = c.var.settings.MEMBERS_PER_ACCOUNT;
  if (members.length + invites.length >= max)
    return refuse(
      `An account can have at most ${max} members and open invitations together (MEMBERS_PER_ACCOUNT); revoke an invitation or remove a member first.`,
    );
  const ttlMs = c.var.settings.MEMBER_INVITE_TTL_HOURS * 3_600_000;
  const invite = await createInvite(c.env.DB, { accountId: s.accountId, email, role, invitedBy: s.memberId }, ttlMs);
  const url = `${new URL(c.req.url).origin}${INVITE_PATH}#${invite.token}`;
  return membersPage(c, 200, { created: { email, role, url, expiresAt: invite.expiresAt } }); // the link's only copy
});

memberRoutes.post("/settings/members/invite/revoke", ...accountForm, async (c) => {
  const id = (await readForm(c)).invite ?? "";
  if (!(await revokeInvite(c.env.DB, c.var.session!.accountId, id))) return membersPage(c, 404, { problem: "There is no such open invitation." });
  return c.redirect("/settings/members?done=revoked", 303);
});

const memberField = z.string().regex(/^mem_[0-9a-f]{24}$/);

memberRoutes.post("/settings/members/role", ...accountForm, async (c) => {
  const s = c.var.session!;
  const parsed = z.object({ member: memberField, role: roleField }).safeParse(await readForm(c));
  if (!parsed.success) return membersPage(c, 400, { problem: "Choose a member and one of the roles." });
  const changed = await changeRole(c.env.DB, s.accountId, parsed.data.member, parsed.data.role);
  if (!changed.ok)
    return changed.reason === "last-owner" ? membersPage(c, 409, { problem: LAST_OWNER }) : membersPage(c, 404, { problem: "There is no such member." });
  return c.redirect("/settings/members?done=role", 303);
});

memberRoutes.post("/settings/members/remove", ...accountForm, async (c) => {
  const s = c.var.session!;
  const parsed = memberField.safeParse((await readForm(c)).member);
  if (!parsed.success) return membersPage(c, 404, { problem: "There is no such member." });
  const removed = await removeMember(c.env.DB, s.accountId, parsed.data);
  if (!removed.ok)
    return removed.reason === "last-owner" ? membersPage(c, 409, { problem: LAST_OWNER }) : membersPage(c, 404, { problem: "There is no such member." });
  if (parsed.data === s.memberId) return c.redirect("/sign-in", 303); // removed themselves: their session is gone
  return c.redirect("/settings/members?done=removed", 303);
});

/** A guardrail given to or taken off a member: both the account's, else 404 and nothing changes. */
for (const [action, change] of [
  ["assign", (d1: D1Database, a: string, g: string, m: string, by: string) => assignMembers(d1, a, g, [m], by)],
  ["unassign", (d1: D1Database, a: string, g: string, m: string) => unassignMembers(d1, a, g, [m])],
] as const)
  memberRoutes.post(`/settings/members/guardrails/${action}`, ...accountForm, async (c) => {
    const s = c.var.session!;
    const parsed = z.object({ member: memberField, guardrail: z.uuid() }).safeParse(await readForm(c));
    const [member, guardrail] = parsed.success
      ? await Promise.all([findMember(c.env.DB, s.accountId, parsed.data.member), findGuardrail(c.env.DB, s.accountId, parsed.data.guardrail.toLowerCase())])
      : [];
    if (!member || !guardrail) return membersPage(c, 404, { problem: "There is no such member or guardrail." });
    await change(c.env.DB, s.accountId, guardrail.id, member.id, s.memberId);
    return c.redirect("/settings/members?done=guardrail", 303);
  });
