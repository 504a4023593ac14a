import { Field } from "../layout/forms";
import type { PresetFormErrors, PresetFormValues } from "./preset-form";

/** A labelled textarea with its hint and error, wired as `Field` wires an input. */
function TextArea(props: { id: string; name: string; label: string; value?: string; hint: string; error?: string; rows: number }) {
  const hintId = `${props.id}-hint`;
  const errorId = props.error ? `${props.id}-error` : undefined;
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <p class="hint" id={hintId}>
        {props.hint}
      </p>
      <textarea
        id={props.id}
        name={props.name}
        rows={props.rows}
        spellcheck={false}
        aria-describedby={[hintId, errorId].filter(Boolean).join(" ")}
        aria-invalid={props.error ? "true" : undefined}
      >
        {props.value ?? ""}
      </textarea>
      {props.error && (
        <p class="field-error" id={errorId}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** The fields of a preset version: name, description, config (JSON) and system prompt; the slug only when creating. */
export function PresetFields(props: { idPrefix: string; withSlug: boolean; values: PresetFormValues; errors: PresetFormErrors }) {
  const { idPrefix: p, values, errors } = props;
  return (
    <>
      {props.withSlug && (
        <Field
          id={`${p}-slug`}
          name="slug"
          label="Slug"
          required
          maxlength={64}
          value={values.slug}
          error={errors.slug}
          hint='Lowercase letters, digits and hyphens. Requests name the preset as "model": "@preset/<slug>".'
          autocomplete="off"
        />
      )}
      <Field id={`${p}-name`} name="name" label="Name (optional)" maxlength={100} value={values.name} error={errors.name} autocomplete="off" />
      <Field
        id={`${p}-description`}
        name="description"
        label="Description (optional)"
        maxlength={1000}
        value={values.description}
        error={errors.description}
        autocomplete="off"
      />
      <TextArea
        id={`${p}-config`}
        name="config"
        label="Config (JSON)"
        rows={8}
        value={values.config}
        error={errors.config}
        hint='model or models, provider preferences and parameters, e.g. {"model": "openai/gpt-oss-20b", "temperature": 0.2, "provider": {"sort": "price"}}. Fields a request sets itself win.'
      />
      <TextArea
        id={`${p}-system`}
        name="system_prompt"
        label="System prompt (optional)"
        rows={4}
        value={values.system_prompt}
        error={errors.system_prompt}
        hint="Put first as a system message when the request has none of its own."
      />
    </>
  );
}
