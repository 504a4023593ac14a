import type { Child } from "hono/jsx";
import { Layout, type PageMeta } from "../layout/layout";
import { ErrorSummary, PostForm, SubmitOrCancel } from "../layout/forms";
import type { ApiKey } from "../../db/schema";
import { KeySettingsFields } from "./key-settings-fields";
import type { SettingsField, SettingsValues } from "./key-settings-form";

/** Changes an API key's limit, reset period and expiry; its guardrails below (`children`). */
export function EditKeyPage(props: {
  meta: PageMeta;
  csrf: string;
  apiKey: ApiKey;
  values: SettingsValues;
  errors?: Partial<Record<SettingsField, string>>;
  children?: Child;
}) {
  const k = props.apiKey;
  const errors = props.errors ?? {};
  return (
    <Layout meta={props.meta}>
      <h1>Edit key “{k.name}”</h1>
      <p>
        The key <code>{k.label}</code>. Changes apply to its requests within 10 seconds.
      </p>
      <ErrorSummary messages={Object.values(errors).filter((m): m is string => !!m)} />
      <PostForm action="/settings/keys/edit" csrf={props.csrf} class="stack" aria-label={`Edit key ${k.name}`}>
        <input type="hidden" name="key" value={k.hash} />
        <KeySettingsFields idPrefix="edit" values={props.values} errors={errors} />
        <SubmitOrCancel submit="Save" cancelHref="/settings/keys" />
      </PostForm>
      {props.children}
    </Layout>
  );
}
