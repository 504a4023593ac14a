import { Field, SelectField } from "../layout/forms";
import { RESET_OPTIONS, type SettingsField, type SettingsValues } from "./key-settings-form";

/** The limit, reset, BYOK and expiry fields of the create and edit forms (`key-settings-form.ts` reads them). */
export function KeySettingsFields(props: { idPrefix: string; values: SettingsValues; errors: Partial<Record<SettingsField, string>> }) {
  const { values, errors } = props;
  const byokId = `${props.idPrefix}-byok`;
  return (
    <>
      <Field
        id={`${props.idPrefix}-limit`}
        name="limit"
        label="Credit limit in USD (optional)"
        inputmode="decimal"
        value={values.limit}
        error={errors.limit}
        hint="The most this key may spend (in each period, if the limit resets). Leave empty for no limit."
        autocomplete="off"
      />
      <SelectField
        id={`${props.idPrefix}-reset`}
        name="limit_reset"
        label="Limit resets"
        options={RESET_OPTIONS}
        value={values.limit_reset}
        error={errors.limit_reset}
        hint="With a reset, the limit applies to the usage of the current UTC day, week (from Monday) or month."
      />
      <div class="field">
        <label for={byokId}>
          <input
            type="checkbox"
            id={byokId}
            name="include_byok_in_limit"
            value="on"
            checked={values.include_byok_in_limit === "on"}
            aria-describedby={errors.include_byok_in_limit ? `${byokId}-hint ${byokId}-error` : `${byokId}-hint`}
            aria-invalid={errors.include_byok_in_limit ? "true" : undefined}
          />{" "}
          Count what carriers charge your own carrier keys (BYOK) in this limit
        </label>
        <p class="hint" id={`${byokId}-hint`}>
          Unchecked, the limit counts what the key's requests cost your credits (BYOK fees included), not the carrier's own bill.
        </p>
        {errors.include_byok_in_limit && (
          <p class="field-error" id={`${byokId}-error`}>
            {errors.include_byok_in_limit}
          </p>
        )}
      </div>
      <Field
        id={`${props.idPrefix}-expires`}
        name="expires_at"
        label="Expires (UTC, optional)"
        placeholder="yyyy-mm-dd hh:mm"
        value={values.expires_at}
        error={errors.expires_at}
        hint="A date and time in UTC, written yyyy-mm-dd hh:mm, like 2027-12-31 23:59. From then on the API refuses the key with 401. Leave empty for never."
        autocomplete="off"
      />
    </>
  );
}
