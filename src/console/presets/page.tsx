import { Layout, type PageMeta } from "../layout/layout";
import { ErrorSummary, PostForm, SubmitOrCancel } from "../layout/forms";
import { utcDateTime } from "../layout/format";
import type { Preset, PresetVersion } from "../../db/schema";
import { PresetFields } from "./fields";
import type { PresetFormErrors, PresetFormValues } from "./preset-form";

export type PresetForm = { values: PresetFormValues; errors: PresetFormErrors; problem?: string };

const problems = (form: PresetForm | undefined) =>
  [...Object.values(form?.errors ?? {}), ...(form?.problem ? [form.problem] : [])].filter((m): m is string => !!m);

/** /settings/presets: the account's presets and the form that creates one. */
export function PresetsPage(props: {
  meta: PageMeta;
  csrf: string;
  presets: Preset[];
  form?: PresetForm;
  notice?: string;
  atMax: boolean;
  max: number;
  mayWrite: boolean; // the member's role saves presets (owners and admins); others read them
}) {
  return (
    <Layout meta={props.meta}>
      <h1>Presets</h1>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <p>
        A preset saves a model, provider preferences, parameters and a system prompt under a slug. Any of your keys uses it as{" "}
        <code>"model": "@preset/&lt;slug&gt;"</code> (the latest version) or <code>"@preset/&lt;slug&gt;@&lt;version&gt;"</code> on chat, messages and
        responses. Every save is a new version.
      </p>
      <h2 id="presets-title">Your presets</h2>
      {props.presets.length === 0 ? (
        <p>You have no presets yet. Create one below.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="presets-title" tabindex={0}>
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Slug</th>
                <th scope="col">Name</th>
                <th scope="col" class="num">
                  Version
                </th>
                <th scope="col">Saved</th>
              </tr>
            </thead>
            <tbody>
              {props.presets.map((p) => (
                <tr>
                  <th scope="row">
                    <a href={`/settings/presets/${p.slug}`}>{p.slug}</a>
                  </th>
                  <td data-label="Name">{p.name}</td>
                  <td class="num" data-label="Version">
                    {p.latestVersion}
                  </td>
                  <td data-label="Saved">{utcDateTime(p.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {props.mayWrite && <h2 id="create-title">Create a preset</h2>}
      <ErrorSummary messages={problems(props.form)} />
      {!props.mayWrite ? (
        <p>Owners and admins of this account create and change presets.</p>
      ) : props.atMax ? (
        <p>You have {props.max} presets, the most an account can have. Delete one to create another.</p>
      ) : (
        <PostForm action="/settings/presets" csrf={props.csrf} class="stack" aria-label="Create a preset">
          <PresetFields idPrefix="new" withSlug values={props.form?.values ?? {}} errors={props.form?.errors ?? {}} />
          <div class="actions">
            <button type="submit">Create preset</button>
          </div>
        </PostForm>
      )}
    </Layout>
  );
}

/** /settings/presets/<slug>: the latest version, the form that saves a new one, every version, and deletion. */
export function PresetPage(props: {
  meta: PageMeta;
  csrf: string;
  preset: Preset;
  versions: PresetVersion[];
  form: PresetForm;
  notice?: string;
  mayWrite: boolean;
}) {
  const p = props.preset;
  return (
    <Layout meta={props.meta}>
      <h1>Preset “{p.slug}”</h1>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <p>
        Used as <code>"model": "@preset/{p.slug}"</code> (version {p.latestVersion}, the latest) or <code>"@preset/{p.slug}@&lt;version&gt;"</code>.
        {p.description && <> {p.description}</>}
      </p>
      {props.mayWrite && (
        <>
          <h2>Save a new version</h2>
          <ErrorSummary messages={problems(props.form)} />
          <PostForm action={`/settings/presets/${p.slug}`} csrf={props.csrf} class="stack" aria-label={`Save a new version of ${p.slug}`}>
            <PresetFields idPrefix="edit" withSlug={false} values={props.form.values} errors={props.form.errors} />
            <SubmitOrCancel submit={`Save as version ${p.latestVersion + 1}`} cancelHref="/settings/presets" />
          </PostForm>
        </>
      )}
      <h2 id="versions-title">Versions</h2>
      <ol reversed class="versions" aria-labelledby="versions-title">
        {[...props.versions].reverse().map((v) => (
          <li value={v.version}>
            <h3>
              Version {v.version} <span class="muted">{utcDateTime(v.createdAt)}</span>
            </h3>
            <pre>
              <code>{JSON.stringify(JSON.parse(v.config), null, 2)}</code>
            </pre>
            {v.systemPrompt !== null && (
              <p>
                System prompt: <q>{v.systemPrompt}</q>
              </p>
            )}
          </li>
        ))}
      </ol>
      {props.mayWrite && (
        <>
          <h2>Delete</h2>
          <PostForm action={`/settings/presets/${p.slug}/delete`} csrf={props.csrf} aria-label={`Delete preset ${p.slug}`}>
            <p>Requests naming it are refused with 404 once it is deleted. Its records keep its slug and version.</p>
            <button type="submit" class="danger">
              Delete preset {p.slug}
            </button>
          </PostForm>
        </>
      )}
    </Layout>
  );
}
