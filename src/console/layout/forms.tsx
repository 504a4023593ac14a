import type { Child } from "hono/jsx";

/** One labelled form field with its hint and error, wired for screen readers. */
export function Field(props: {
  id: string;
  name: string;
  label: string;
  type?: "text" | "email" | "password" | "search" | "number";
  value?: string;
  autocomplete?: string;
  inputmode?: "numeric" | "decimal" | "email" | "text";
  required?: boolean;
  hint?: string;
  error?: string;
  maxlength?: number;
  minlength?: number;
  pattern?: string;
  placeholder?: string;
  step?: number;
}) {
  return (
    <FieldFrame {...props}>
      {(describedBy) => (
        <input
          id={props.id}
          name={props.name}
          type={props.type ?? "text"}
          value={props.value}
          autocomplete={props.autocomplete}
          inputmode={props.inputmode}
          required={props.required}
          maxlength={props.maxlength}
          minlength={props.minlength}
          pattern={props.pattern}
          placeholder={props.placeholder}
          step={props.step}
          aria-describedby={describedBy}
          aria-invalid={props.error ? "true" : undefined}
        />
      )}
    </FieldFrame>
  );
}

/** A labelled textarea with its hint and error, wired as `Field` wires an input. */
export function TextArea(props: { id: string; name: string; label: string; value?: string; hint: string; error?: string; rows: number }) {
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

/** One labelled drop-down with its hint and error, wired like `Field`. */
export function SelectField(props: {
  id: string;
  name: string;
  label: string;
  options: readonly { value: string; label: string }[];
  value?: string;
  hint?: string;
  error?: string;
}) {
  return (
    <FieldFrame {...props}>
      {(describedBy) => (
        <select id={props.id} name={props.name} aria-describedby={describedBy} aria-invalid={props.error ? "true" : undefined}>
          {props.options.map((o) => (
            <option value={o.value} selected={o.value === (props.value ?? "")}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </FieldFrame>
  );
}

/** A field's label, hint and error around its control, which gets the ids to describe itself by. */
function FieldFrame(props: { id: string; label: string; hint?: string; error?: string; children: (describedBy: string | undefined) => Child }) {
  const hintId = props.hint ? `${props.id}-hint` : undefined;
  const errorId = props.error ? `${props.id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(" ") || undefined;
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.hint && (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
      {props.children(describedBy)}
      {props.error && (
        <p class="field-error" id={errorId}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** The list of what is wrong with a submitted form, announced when the page loads. */
export function ErrorSummary(props: { title?: string; messages: readonly string[]; children?: Child }) {
  if (props.messages.length === 0) return null;
  return (
    <div class="error-summary" role="alert" aria-labelledby="error-summary-title">
      <h2 id="error-summary-title">{props.title ?? "There is a problem"}</h2>
      <ul>
        {props.messages.map((m) => (
          <li>{m}</li>
        ))}
      </ul>
      {props.children}
    </div>
  );
}

/** A POST form of the signed-in account (its CSRF token included). */
export function PostForm(props: { action: string; csrf: string; class?: string; children?: Child; "aria-label"?: string }) {
  return (
    <form method="post" action={props.action} class={props.class} aria-label={props["aria-label"]}>
      <input type="hidden" name="_csrf" value={props.csrf} />
      {props.children}
    </form>
  );
}

/** A form's submit button and the link back that cancels it. */
export function SubmitOrCancel(props: { submit: string; cancelHref: string }) {
  return (
    <div class="actions">
      <button type="submit">{props.submit}</button>
      <a class="button secondary-link" href={props.cancelHref}>
        Cancel
      </a>
    </div>
  );
}
