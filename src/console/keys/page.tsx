import { Layout, type PageMeta } from "../layout/layout";
import { ShownOnce } from "../layout/shown-once";
import { ErrorSummary, Field, PostForm } from "../layout/forms";
import { CopyScript } from "../layout/copy-button";
import { usd } from "../layout/format";
import type { ApiKey } from "../../db/schema";
import { Expiry, KeyRowEnd, Limit, type KeyRow } from "./key-cells";
import { KeySettingsFields } from "./key-settings-fields";
import type { SettingsField, SettingsValues } from "./key-settings-form";
import { ManagementKeys } from "./management-keys";

export type CreateKeyState = { values?: { name?: string } & SettingsValues; errors?: Partial<Record<"name" | SettingsField, string>>; problem?: string };
export type CreatedKey = { name: string; secret: string; management: boolean };

/** Shown once, in the response to the POST that created the key; it is stored nowhere. */
function NewKey(props: CreatedKey) {
  return (
    <ShownOnce
      id="new-key"
      title={`Your new ${props.management ? "management key" : "key"} “${props.name}”`}
      label="API key"
      copyLabel="Copy the new key"
      value={props.secret}
    >
      <p>
        <strong>Copy it now: this is the only time it is shown.</strong> Switchyard keeps only a hash of it, so it cannot be shown again — not on reload, not on
        any other page. If you lose it, delete it and create another.
      </p>
    </ShownOnce>
  );
}

export function KeysPage(props: {
  meta: PageMeta;
  csrf: string;
  creationToken: string;
  rows: KeyRow[];
  managementRows: KeyRow[] | undefined; // undefined: the member's role has no management keys (the section is left out)
  created?: CreatedKey;
  form?: CreateKeyState;
  notice?: string;
  atMaxKeys: boolean;
  maxKeys: number;
  now: number;
}) {
  const form = props.form ?? {};
  const errors = form.errors ?? {};
  const messages = [form.problem, errors.name, errors.limit, errors.limit_reset, errors.expires_at].filter((m): m is string => !!m);
  return (
    <Layout meta={props.meta}>
      <h1>API keys</h1>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      {props.created && <NewKey {...props.created} />}
      <p>
        Send a key as <code>Authorization: Bearer &lt;key&gt;</code> to <code>/api/v1</code>. A disabled, expired or deleted key is refused with 401. A key with
        a credit limit is refused with 402 once its usage reaches the limit (in the current day, week or month, if the limit resets).
      </p>

      <h2 id="keys-title">Your keys</h2>
      {props.rows.length === 0 ? (
        <p>You have no keys yet. Create one below.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="keys-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col" class="num">
                  Usage
                </th>
                <th scope="col" class="num">
                  Limit
                </th>
                <th scope="col">Expires</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map(({ key, usage }) => (
                <tr>
                  <th scope="row">{key.name}</th>
                  <td data-label="Key">
                    <code>{key.label}</code>
                  </td>
                  <td class="num" data-label="Usage">
                    {usd(usage.usageNano)}
                    <br />
                    <span class="muted">{usd(usage.dailyNano)} today</span>
                    {usage.byokNano > 0 && (
                      <>
                        <br />
                        <span class="muted" title="What carriers charged the account's own keys for this key's requests">
                          {usd(usage.byokNano)} BYOK
                        </span>
                      </>
                    )}
                  </td>
                  <td class="num" data-label="Limit">
                    <Limit apiKey={key} usage={usage} />
                  </td>
                  <td data-label="Expires">
                    <Expiry ms={key.expiresAt} />
                  </td>
                  <KeyRowEnd apiKey={key} now={props.now} csrf={props.csrf} kind="key" />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2 id="create-title">Create a key</h2>
      <ErrorSummary messages={messages} />
      {props.atMaxKeys ? (
        <p>You have {props.maxKeys} keys, the most an account can have. Delete one to create another.</p>
      ) : (
        <PostForm action="/settings/keys" csrf={props.csrf} class="stack" aria-label="Create a key">
          <input type="hidden" name="creation_token" value={props.creationToken} />
          <Field
            id="key-name"
            name="name"
            label="Name"
            required
            maxlength={100}
            value={form.values?.name}
            error={errors.name}
            hint="For you to tell keys apart, e.g. the app or machine that uses it."
            autocomplete="off"
          />
          <KeySettingsFields idPrefix="key" values={form.values ?? {}} errors={errors} />
          <div>
            <button type="submit">Create key</button>
          </div>
        </PostForm>
      )}

      {props.managementRows && <ManagementKeys rows={props.managementRows} csrf={props.csrf} now={props.now} atMaxKeys={props.atMaxKeys} />}
      <CopyScript nonce={props.meta.nonce} />
    </Layout>
  );
}

export function DeleteKeyPage(props: { meta: PageMeta; csrf: string; apiKey: ApiKey }) {
  const k = props.apiKey;
  return (
    <Layout meta={props.meta}>
      <h1>Delete key “{k.name}”?</h1>
      <p>
        The key <code>{k.label}</code> will stop working at once (the API answers 401) and cannot be restored. Its past requests stay in your activity. To stop
        it only for a while, disable it instead.
      </p>
      <div class="actions">
        <PostForm action="/settings/keys/delete" csrf={props.csrf}>
          <input type="hidden" name="key" value={k.hash} />
          <button type="submit" class="danger">
            Delete key
          </button>
        </PostForm>
        <a class="button secondary-link" href="/settings/keys">
          Cancel
        </a>
      </div>
    </Layout>
  );
}
