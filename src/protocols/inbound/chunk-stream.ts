import type { ChunkJson } from "./caller-protocol";

export type { Obj } from "./request-checks";
import type { Obj } from "./request-checks";

/**
 * A caller stream in a protocol other than chat, rendered from canonical chat chunks: its opening events
 * (`start`: "" once sent), then the events of each delta of the first choice — those protocols answer one
 * choice. `draft` is the renderer's fresh copy of its state for this chunk (the next state), which
 * `start` and `delta` update; `ctx` what they need of the stream, never changed.
 */
export function firstChoiceText<C, D>(
  ctx: C,
  draft: D,
  json: ChunkJson | null,
  start: (ctx: C, draft: D) => string,
  delta: (ctx: C, draft: D, delta: Obj) => string,
): string {
  let out = start(ctx, draft);
  const choices = json?.choices;
  for (const choice of Array.isArray(choices) ? (choices as unknown[]) : []) {
    if (typeof choice !== "object" || choice === null || ((choice as Obj).index ?? 0) !== 0) continue;
    out += delta(ctx, draft, ((choice as Obj).delta ?? {}) as Obj);
  }
  return out;
}

/**
 * Reasoning details gathered as a stream goes, newest first: appending is one small object, never a
 * copy of what came before (a thinking stream sends a fragment with nearly every chunk).
 */
export type DetailChain = { readonly last: Obj; readonly before: DetailChain } | null;

/** `chain` with `details` after it. */
export function appendDetails(chain: DetailChain, details: readonly Obj[]): DetailChain {
  for (const last of details) chain = { last, before: chain };
  return chain;
}

/** The details of a chain, oldest first. */
export function chainedDetails(chain: DetailChain): Obj[] {
  const out: Obj[] = [];
  for (let c = chain; c !== null; c = c.before) out.push(c.last);
  return out.reverse();
}

/** A delta's reasoning text, whichever field the carrier used. */
export function reasoningText(delta: Obj): string {
  return typeof delta.reasoning === "string" ? delta.reasoning : typeof delta.reasoning_content === "string" ? delta.reasoning_content : "";
}

/**
 * Streamed `reasoning_details` fragments joined into whole details: fragments of one `index` are one
 * detail, their `text` concatenated and any other field (signature, data, format) as last sent.
 */
export function joinDetails(fragments: Obj[]): Obj[] {
  const byIndex = new Map<unknown, Obj>();
  const out: Obj[] = [];
  for (const f of fragments) {
    const key = typeof f.index === "number" ? f.index : Symbol();
    const seen = byIndex.get(key);
    if (!seen || seen.type !== f.type) {
      const whole = { ...f };
      byIndex.set(key, whole);
      out.push(whole);
      continue;
    }
    for (const [k, v] of Object.entries(f)) {
      if (k === "text" && typeof v === "string") seen.text = (typeof seen.text === "string" ? seen.text : "") + v;
      else if (v !== undefined && v !== null && v !== "") seen[k] = v;
    }
  }
  return out;
}
