import { Field, TextArea } from "../layout/forms";
import type { PresetFormErrors, PresetFormValues } from "./preset-form";

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
