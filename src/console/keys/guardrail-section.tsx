import { Field, PostForm } from "../layout/forms";
import type { ApiKey, Guardrail } from "../../db/schema";

/** What the create form was sent, and what was wrong with it (server-side validation). */
export type GuardrailFormState = { values?: Record<string, string>; problem?: string };

/** A guardrail's rules in a few words. */
export function rulesOf(g: Guardrail): string {
  const zdr = [g.zdrAnthropic, g.zdrOpenai, g.zdrGoogle, g.zdrXai, g.zdrOther];
  const parts = [
    g.allowedModels && `models: ${g.allowedModels.join(", ")}`,
    g.ignoredModels && `never models: ${g.ignoredModels.join(", ")}`,
    g.allowedProviders && `carriers: ${g.allowedProviders.join(", ")}`,
    g.ignoredProviders && `never carriers: ${g.ignoredProviders.join(", ")}`,
    zdr.every(Boolean) ? "zero data retention only" : zdr.some(Boolean) && "zero data retention for some authors",
    g.maxPromptNano !== null && `prompt at most $${g.maxPromptNano / 1000} per 1M tokens`,
    g.maxCompletionNano !== null && `completion at most $${g.maxCompletionNano / 1000} per 1M tokens`,
  ].filter(Boolean);
  return parts.length ? parts.join("; ") : "no rules (allows everything)";
}

/**
 * The guardrails section of a key's page: those it carries (each can be taken off), those it carries through
 * its member (shown: they are the member's, set through the API), the account's others to assign, and a small
 * form that creates one and assigns it to this key. A request must satisfy all of them.
 */
export function KeyGuardrails(props: {
  csrf: string;
  apiKey: ApiKey;
  carried: Guardrail[];
  viaMember: Guardrail[];
  others: Guardrail[];
  form?: GuardrailFormState;
}) {
  const k = props.apiKey;
  const v = props.form?.values ?? {};
  return (
    <section aria-labelledby="guardrails-title" class="stack">
      <h2 id="guardrails-title">Guardrails</h2>
      <p>
        What this key may use. A request must satisfy every guardrail the key carries; one they forbid is refused with 403, naming the guardrail and the rule,
        and nothing is charged.
      </p>
      {props.carried.length === 0 && props.viaMember.length === 0 ? (
        <p>This key carries no guardrail: it may use every model and carrier.</p>
      ) : props.carried.length === 0 ? null : (
        <ul>
          {props.carried.map((g) => (
            <li>
              <strong>{g.name}</strong> — {rulesOf(g)}
              <PostForm action="/settings/keys/guardrails/unassign" csrf={props.csrf} aria-label={`Remove guardrail ${g.name}`}>
                <input type="hidden" name="key" value={k.hash} />
                <input type="hidden" name="guardrail" value={g.id} />
                <button type="submit" class="secondary">
                  Remove from this key
                </button>
              </PostForm>
            </li>
          ))}
        </ul>
      )}
      {props.viaMember.length > 0 && (
        <>
          <h3>Through its member</h3>
          <p>Guardrails assigned to the member who made this key apply to every key of theirs ({"POST /api/v1/guardrails/{id}/assignments/members"}).</p>
          <ul>
            {props.viaMember.map((g) => (
              <li>
                <strong>{g.name}</strong> — {rulesOf(g)}
              </li>
            ))}
          </ul>
        </>
      )}
      {props.others.length > 0 && (
        <PostForm action="/settings/keys/guardrails/assign" csrf={props.csrf} class="stack" aria-label="Add a guardrail">
          <input type="hidden" name="key" value={k.hash} />
          <label for="assign-guardrail">Add one of your guardrails</label>
          <select id="assign-guardrail" name="guardrail">
            {props.others.map((g) => (
              <option value={g.id}>{`${g.name} — ${rulesOf(g)}`}</option>
            ))}
          </select>
          <button type="submit">Add to this key</button>
        </PostForm>
      )}
      <h3>Create a guardrail for this key</h3>
      {props.form?.problem && (
        <p class="field-error" role="alert">
          {props.form.problem}
        </p>
      )}
      <PostForm action="/settings/keys/guardrails/create" csrf={props.csrf} class="stack" aria-label="Create a guardrail">
        <input type="hidden" name="key" value={k.hash} />
        <Field id="guardrail-name" name="name" label="Name" value={v.name} maxlength={200} autocomplete="off" />
        <Field
          id="guardrail-models"
          name="allowed_models"
          label="Allowed models (optional)"
          value={v.allowed_models}
          hint="Model ids or patterns, comma-separated, like anthropic/*, openai/gpt-5. Empty: every model."
          autocomplete="off"
        />
        <Field
          id="guardrail-providers"
          name="allowed_providers"
          label="Allowed carriers (optional)"
          value={v.allowed_providers}
          hint="Carrier slugs, comma-separated, like groq, anthropic. Empty: every carrier."
          autocomplete="off"
        />
        <Field
          id="guardrail-prompt"
          name="max_prompt"
          label="Most USD per 1M prompt tokens (optional)"
          inputmode="decimal"
          value={v.max_prompt}
          autocomplete="off"
        />
        <Field
          id="guardrail-completion"
          name="max_completion"
          label="Most USD per 1M completion tokens (optional)"
          inputmode="decimal"
          value={v.max_completion}
          autocomplete="off"
        />
        <div class="field">
          <label>
            <input type="checkbox" name="zdr" value="on" checked={v.zdr === "on"} /> Zero data retention only (never a carrier that retains or trains on
            prompts)
          </label>
        </div>
        <button type="submit">Create and add to this key</button>
      </PostForm>
    </section>
  );
}
