import { Layout, type PageMeta } from "../layout/layout";
import { ErrorSummary, Field, PostForm, SubmitOrCancel } from "../layout/forms";
import { KeyRowEnd, type KeyRow } from "./key-cells";

const WHAT_IT_IS = (
  <p>
    A management key manages this account's API keys through the API (<code>/api/v1/keys</code>: list, create, change and delete them). It cannot run
    completions, and it cannot see, change or delete management keys. Anyone who has it can create keys that spend your credits: keep it as secret as your
    password.
  </p>
);

/** The keys page's own section for management keys: what they are, the list, and the way to create one. */
export function ManagementKeys(props: { rows: KeyRow[]; csrf: string; now: number; atMaxKeys: boolean }) {
  return (
    <section aria-labelledby="management-title">
      <h2 id="management-title">Management keys</h2>
      {WHAT_IT_IS}
      {props.rows.length === 0 ? (
        <p>You have no management keys.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="management-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map(({ key }) => (
                <tr>
                  <th scope="row">{key.name}</th>
                  <td data-label="Key">
                    <code>{key.label}</code>
                  </td>
                  <KeyRowEnd apiKey={key} now={props.now} csrf={props.csrf} kind="management key" />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!props.atMaxKeys && (
        <p>
          <a class="button secondary-link" href="/settings/keys/management">
            Create a management key…
          </a>
        </p>
      )}
    </section>
  );
}

/** The form that creates a management key; the key itself is shown once, on the keys page the POST answers with. */
export function NewManagementKeyPage(props: { meta: PageMeta; csrf: string; creationToken: string; name?: string; error?: string; problem?: string }) {
  const messages = [props.problem, props.error].filter((m): m is string => !!m);
  return (
    <Layout meta={props.meta}>
      <h1>Create a management key</h1>
      {WHAT_IT_IS}
      <ErrorSummary messages={messages} />
      <PostForm action="/settings/keys/management" csrf={props.csrf} class="stack" aria-label="Create a management key">
        <input type="hidden" name="creation_token" value={props.creationToken} />
        <Field
          id="management-key-name"
          name="name"
          label="Name"
          required
          maxlength={100}
          value={props.name}
          error={props.error}
          hint="For you to tell keys apart, e.g. the system that provisions keys."
          autocomplete="off"
        />
        <SubmitOrCancel submit="Create management key" cancelHref="/settings/keys" />
      </PostForm>
    </Layout>
  );
}
