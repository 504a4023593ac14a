import { Layout, type PageMeta } from "../layout/layout";
import { ErrorSummary, Field, PostForm, SelectField } from "../layout/forms";
import { utcDateTime } from "../layout/format";
import type { ByokKey } from "../../db/schema";

export type ByokFormValues = { provider?: string; mode?: string; allow_fallback?: string };
export type ByokForm = { values: ByokFormValues; errors: Partial<Record<"provider" | "key" | "mode", string>>; problem?: string };
export type Carrier = { slug: string; name: string };

const MODES = [
  { value: "first", label: "First: my key, then the platform's (see below)" },
  { value: "only", label: "Only: my key, never the platform's" },
] as const;

const problems = (form: ByokForm | undefined) =>
  [...Object.values(form?.errors ?? {}), ...(form?.problem ? [form.problem] : [])].filter((m): m is string => !!m);

/**
 * /settings/byok: the account's own carrier keys (docs/byok.md) — one row per carrier it has a key for,
 * showing only the key's last four characters, its mode, fallback and the carrier's last refusal of it;
 * the form that adds or replaces a key; a form per key that removes it.
 */
export function ByokPage(props: { meta: PageMeta; csrf: string; keys: ByokKey[]; carriers: Carrier[]; form?: ByokForm; notice?: string; enabled: boolean }) {
  const nameOf = (slug: string) => props.carriers.find((c) => c.slug === slug)?.name ?? slug;
  return (
    <Layout meta={props.meta}>
      <h1>Your carrier keys (BYOK)</h1>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <p>
        Requests of your API keys to a carrier you keep a key for are sent with your key and billed only a fee on what the carrier charged you. A key is stored
        encrypted and never shown again: only its last four characters.
      </p>
      <h2 id="byok-title">Keys</h2>
      {props.keys.length === 0 ? (
        <p>You have no carrier keys. Add one below.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="byok-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Carrier</th>
                <th scope="col">Key</th>
                <th scope="col">Mode</th>
                <th scope="col">Platform key on refusal</th>
                <th scope="col">Last error</th>
                <th scope="col">Remove</th>
              </tr>
            </thead>
            <tbody>
              {props.keys.map((k) => (
                <tr>
                  <th scope="row">{nameOf(k.provider)}</th>
                  <td data-label="Key">
                    <code>…{k.last4}</code>
                  </td>
                  <td data-label="Mode">{k.mode === "only" ? "Only" : "First"}</td>
                  <td data-label="Platform key on refusal">{k.mode === "first" && k.allowFallback ? "Yes" : "No"}</td>
                  <td data-label="Last error">{k.lastError === null ? "None" : `${k.lastError} (${utcDateTime(k.lastErrorAt ?? 0)})`}</td>
                  <td data-label="Remove">
                    <PostForm action={`/settings/byok/${k.id}/delete`} csrf={props.csrf} aria-label={`Remove the ${nameOf(k.provider)} key`}>
                      <button type="submit" class="danger">
                        Remove {nameOf(k.provider)} key
                      </button>
                    </PostForm>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Add or replace a key</h2>
      <ErrorSummary messages={problems(props.form)} />
      {props.enabled ? (
        <PostForm action="/settings/byok" csrf={props.csrf} class="stack" aria-label="Add or replace a carrier key">
          <SelectField
            id="byok-provider"
            name="provider"
            label="Carrier"
            options={props.carriers.map((c) => ({ value: c.slug, label: c.name }))}
            value={props.form?.values.provider}
            error={props.form?.errors.provider}
          />
          <Field
            id="byok-key"
            name="key"
            label="API key"
            type="password"
            autocomplete="off"
            required
            hint="A key you already keep for this carrier is replaced."
            error={props.form?.errors.key}
          />
          <SelectField id="byok-mode" name="mode" label="Use" options={MODES} value={props.form?.values.mode ?? "first"} error={props.form?.errors.mode} />
          <div class="field">
            <label>
              <input type="checkbox" name="allow_fallback" value="on" checked={props.form?.values.allow_fallback === "on"} /> With “First”: use the platform's
              key when the carrier refuses mine (401, 403, 429), billed in full
            </label>
          </div>
          <div class="actions">
            <button type="submit">Save key</button>
          </div>
        </PostForm>
      ) : (
        <p>Carrier keys are not enabled on this deployment.</p>
      )}
    </Layout>
  );
}
