import { PostForm, SelectField } from "../layout/forms";
import { rulesOf } from "../keys/guardrail-section";
import type { Guardrail, Member } from "../../db/schema";

export type MemberGuardrailsProps = {
  csrf: string;
  members: Member[];
  guardrails: Guardrail[]; // the account's (the choices)
  assigned: { memberId: string; guardrail: Guardrail }[];
};

/**
 * The Members page's guardrails: a guardrail assigned to a member applies to every key of theirs, beside each
 * key's own (docs/teams.md). Owners and admins (guardrails.write) see it; each assignment can be taken off.
 */
export function MemberGuardrails(props: MemberGuardrailsProps) {
  const email = new Map(props.members.map((m) => [m.id, m.email]));
  return (
    <section aria-labelledby="member-guardrails-title" class="stack">
      <h2 id="member-guardrails-title">Guardrails of members</h2>
      <p>A guardrail given to a member applies to every key of theirs, those they make later too, beside each key's own guardrails.</p>
      {props.assigned.length === 0 ? (
        <p>No member carries a guardrail.</p>
      ) : (
        <ul>
          {props.assigned.map((a) => (
            <li>
              <strong>{email.get(a.memberId) ?? a.memberId}</strong>: {a.guardrail.name} — {rulesOf(a.guardrail)}
              <PostForm
                action="/settings/members/guardrails/unassign"
                csrf={props.csrf}
                class="inline"
                aria-label={`Remove guardrail ${a.guardrail.name} from ${email.get(a.memberId) ?? a.memberId}`}
              >
                <input type="hidden" name="member" value={a.memberId} />
                <input type="hidden" name="guardrail" value={a.guardrail.id} />
                <button type="submit" class="secondary">
                  Remove
                </button>
              </PostForm>
            </li>
          ))}
        </ul>
      )}
      {props.guardrails.length === 0 ? (
        <p>The account has no guardrail yet: create one on a key's page or through the API.</p>
      ) : (
        <PostForm action="/settings/members/guardrails/assign" csrf={props.csrf} class="stack" aria-label="Give a member a guardrail">
          <SelectField id="guardrail-member" name="member" label="Member" options={props.members.map((m) => ({ value: m.id, label: m.email }))} />
          <SelectField
            id="guardrail-choice"
            name="guardrail"
            label="Guardrail"
            options={props.guardrails.map((g) => ({ value: g.id, label: `${g.name} — ${rulesOf(g)}` }))}
          />
          <div>
            <button type="submit">Give the guardrail</button>
          </div>
        </PostForm>
      )}
    </section>
  );
}
