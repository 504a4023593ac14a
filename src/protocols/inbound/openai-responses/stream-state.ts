import type { AnswerFacts } from "../caller-protocol";
import type { DetailChain, Obj } from "../chunk-stream";
import type { PendingSeals } from "./reasoning-envelope";
import type { ToolOrigin } from "./tools";

/** The item being streamed: its kind, position, id and what it has gathered. */
export type Open =
  | {
      readonly kind: "reasoning";
      readonly index: number;
      readonly id: string;
      readonly text: string;
      readonly details: DetailChain;
      /** Whether its text is the model's raw reasoning (a `reasoning_text` part), not a summary: decided by its first text. */
      readonly raw: boolean;
    }
  | { readonly kind: "message"; readonly index: number; readonly id: string; readonly text: string }
  | {
      readonly kind: "function_call";
      readonly index: number;
      readonly id: string;
      readonly toolIndex: number;
      readonly callId: string;
      readonly origin: ToolOrigin;
      readonly args: string;
    };

/** What the Responses renderer knows between chunks. */
export type ResponsesState = {
  /** The next event's `sequence_number`. */
  readonly seq: number;
  /** Whether `response.created` and `response.in_progress` were sent. */
  readonly started: boolean;
  readonly open: Open | null;
  /** The output items closed so far, in their final form (the open one is not among them). */
  readonly items: readonly Obj[];
  /** Reasoning details that came when no reasoning item could take them (after other output): one more reasoning item at the end. */
  readonly late: DetailChain;
};

export const INITIAL: ResponsesState = Object.freeze({ seq: 0, started: false, open: null, items: Object.freeze([]), late: null });

/** The next state, built while one call renders (a fresh copy: the state it came from is never changed). */
export type Draft = { -readonly [K in keyof ResponsesState]: ResponsesState[K] };

/** The next state, from a field-by-field copy: cheaper than a spread on the hot path (one per chunk). */
export function draftOf(s: ResponsesState): Draft {
  return { seq: s.seq, started: s.started, open: s.open, items: s.items, late: s.late };
}

/** What the renderer needs of its stream, fixed when it starts. */
export type StreamContext = {
  readonly facts: AnswerFacts;
  /** The details to seal, when asked for (`include`): the items carry placeholders that the async step fills; null otherwise. */
  readonly seals: PendingSeals | null;
};

/** One event, with the next sequence number. */
export function emit(d: Draft, type: string, data: Obj): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: d.seq++, ...data })}\n\n`;
}

/** Where an event of the open item belongs. */
export function at(open: Open): Obj {
  return { item_id: open.id, output_index: open.index };
}
