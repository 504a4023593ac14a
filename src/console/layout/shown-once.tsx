import type { Child } from "hono/jsx";
import { CopyButton } from "./copy-button";

/**
 * A secret or one-time link on the only page that ever shows it (a new key, an invitation, a webhook's
 * signing secret): a heading, what to do with it, and the value in a read-only field with a Copy button.
 * Ids derive from `id` (`<id>-title`, `<id>-value`): tests and the copy script find the value by them.
 */
export function ShownOnce(props: { id: string; title: Child; level?: "h2" | "h3"; label: string; copyLabel: string; value: string; children: Child }) {
  const titleId = `${props.id}-title`;
  const valueId = `${props.id}-value`;
  return (
    <section class="new-key" aria-labelledby={titleId}>
      {props.level === "h3" ? <h3 id={titleId}>{props.title}</h3> : <h2 id={titleId}>{props.title}</h2>}
      {props.children}
      <div class="key-output">
        <label for={valueId} class="visually-hidden">
          {props.label}
        </label>
        <input id={valueId} type="text" readonly value={props.value} autocomplete="off" spellcheck={false} aria-describedby={titleId} />
        <CopyButton target={valueId} label={props.copyLabel} />
      </div>
    </section>
  );
}
