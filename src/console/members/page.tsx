import { Layout, type PageMeta } from "../layout/layout";
import { ShownOnce } from "../layout/shown-once";
import { ErrorSummary, Field, PostForm, SelectField } from "../layout/forms";
import { CopyScript } from "../layout/copy-button";
import { utcDateTime } from "../layout/format";
import type { Member, MemberInvite, MemberRole } from "../../db/schema";
import { MemberGuardrails, type MemberGuardrailsProps } from "./guardrails-section";

export const ROLE_LABELS: Record<MemberRole, string> = { owner: "Owner", admin: "Admin", member: "Member", billing: "Billing" };

const ROLE_WORDS: Record<MemberRole, string> = {
  owner: "everything, including members and roles",
  admin: "every key, guardrails, presets, alerts, carrier keys, trace export, all activity, invitations and the audit log",
  member: "their own keys and the activity of their own keys; reads presets",
  billing: "credits, payments and spend; no keys",
};

export type InviteForm = { email?: string; role?: string; errors?: { email?: string; role?: string }; problem?: string };

export type MembersPageProps = {
  meta: PageMeta;
  csrf: string;
  me: string; // the signed-in member's id
  members: Member[];
  invites: Omit<MemberInvite, "tokenHash">[];
  assignable: readonly MemberRole[]; // roles the signed-in member may invite with
  manage: boolean; // may change roles and remove members (owners)
  guardrails?: Omit<MemberGuardrailsProps, "csrf" | "members">; // shown to who may change guardrails
  created?: { email: string; role: MemberRole; url: string; expiresAt: number };
  form?: InviteForm;
  problem?: string;
  notice?: string;
};

/** /settings/members: the account's members and open invitations; invite by a one-time link (shown once). */
export function MembersPage(props: MembersPageProps) {
  const form = props.form ?? {};
  const problems = [...Object.values(form.errors ?? {}), ...(form.problem ? [form.problem] : []), ...(props.problem ? [props.problem] : [])];
  return (
    <Layout meta={props.meta}>
      <h1>Members</h1>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <ErrorSummary messages={problems.filter((m): m is string => !!m)} />
      {props.created && <NewInvite {...props.created} />}
      <p>Everyone here signs in with their own email and password and works on this account's balance. What each role may do:</p>
      <ul>
        {(Object.keys(ROLE_WORDS) as MemberRole[]).map((r) => (
          <li>
            <strong>{ROLE_LABELS[r]}</strong>: {ROLE_WORDS[r]}.
          </li>
        ))}
      </ul>
      <h2 id="members-title">People</h2>
      <div class="table-wrap" role="region" aria-labelledby="members-title" tabindex={0}>
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Since</th>
              {props.manage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {props.members.map((m) => (
              <tr>
                <th scope="row">
                  {m.email}
                  {m.id === props.me ? " (you)" : ""}
                </th>
                <td data-label="Role">{ROLE_LABELS[m.role]}</td>
                <td data-label="Since">{utcDateTime(m.createdAt)}</td>
                {props.manage && (
                  <td data-label="Actions">
                    <div class="actions">
                      <PostForm action="/settings/members/role" csrf={props.csrf} class="inline" aria-label={`Role of ${m.email}`}>
                        <input type="hidden" name="member" value={m.id} />
                        <select name="role" aria-label={`New role for ${m.email}`}>
                          {props.assignable.map((r) => (
                            <option value={r} selected={r === m.role}>
                              {ROLE_LABELS[r]}
                            </option>
                          ))}
                        </select>{" "}
                        <button type="submit" class="secondary">
                          Change role
                        </button>
                      </PostForm>
                      <PostForm action="/settings/members/remove" csrf={props.csrf} class="inline" aria-label={`Remove ${m.email}`}>
                        <input type="hidden" name="member" value={m.id} />
                        <button type="submit" class="danger">
                          Remove
                        </button>
                      </PostForm>
                    </div>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {props.guardrails && <MemberGuardrails csrf={props.csrf} members={props.members} {...props.guardrails} />}
      <h2 id="invites-title">Open invitations</h2>
      {props.invites.length === 0 ? (
        <p>No open invitations.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="invites-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Expires (UTC)</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {props.invites.map((i) => (
                <tr>
                  <th scope="row">{i.email}</th>
                  <td data-label="Role">{ROLE_LABELS[i.role]}</td>
                  <td data-label="Expires (UTC)">{utcDateTime(i.expiresAt)}</td>
                  <td data-label="Actions">
                    <PostForm action="/settings/members/invite/revoke" csrf={props.csrf} class="inline" aria-label={`Revoke the invitation of ${i.email}`}>
                      <input type="hidden" name="invite" value={i.id} />
                      <button type="submit" class="secondary">
                        Revoke
                      </button>
                    </PostForm>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Invite someone</h2>
      <p>The invitation is a link, shown once, that works once and expires. Send it to the person yourself; opening it, they choose a password and sign in.</p>
      <PostForm action="/settings/members/invite" csrf={props.csrf} class="stack" aria-label="Invite someone">
        <Field id="invite-email" name="email" label="Email" type="email" value={form.email} autocomplete="off" required error={form.errors?.email} />
        <SelectField
          id="invite-role"
          name="role"
          label="Role"
          value={form.role ?? "member"}
          error={form.errors?.role}
          options={props.assignable.map((r) => ({ value: r, label: ROLE_LABELS[r] }))}
        />
        <div>
          <button type="submit">Create invitation link</button>
        </div>
      </PostForm>
      <CopyScript nonce={props.meta.nonce} />
    </Layout>
  );
}

function NewInvite(props: { email: string; role: MemberRole; url: string; expiresAt: number }) {
  return (
    <ShownOnce id="new-invite" title={`Invitation for ${props.email}`} label="Invitation link" copyLabel="Copy the invitation link" value={props.url}>
      <p>
        Send this link to {props.email} ({ROLE_LABELS[props.role]}). It is shown only now, works once, and expires {utcDateTime(props.expiresAt)}.
      </p>
    </ShownOnce>
  );
}
