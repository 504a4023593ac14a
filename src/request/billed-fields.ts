import type { ChatRequest } from "./chat-request";
import { MEDIA_MODALITIES, PART_MODALITY, type PartCounts } from "../catalog/modalities";

/**
 * The request fields that bound what a carrier may bill for it, read one way for the hold, the fit and
 * the stream's accounting (docs/money.md, the hold).
 */

/** Media parts of the request's messages by kind (`image_url`, `file`, `input_audio`, `video_url`, …): each is billed as many tokens. */
export function countParts(body: ChatRequest): PartCounts {
  const counts = Object.fromEntries(MEDIA_MODALITIES.map((m) => [m, 0])) as PartCounts;
  for (const m of body.messages)
    if (Array.isArray(m.content))
      for (const part of m.content) {
        const kind = PART_MODALITY[part.type];
        if (kind) counts[kind]++;
      }
  return counts;
}

/** The completion cap a carrier may apply per choice: the larger of `max_completion_tokens` and `max_tokens` (a carrier may read only one), null when neither is set. */
export function completionCap(body: ChatRequest): number | null {
  const caps = [body.max_completion_tokens, body.max_tokens].filter((c): c is number => typeof c === "number");
  return caps.length ? Math.max(...caps) : null;
}

/** The field that sets `completionCap` as a chat request names it: `max_completion_tokens` when it is the larger (or only) one, else `max_tokens`. */
export function completionCapField(body: ChatRequest): "max_tokens" | "max_completion_tokens" {
  const { max_completion_tokens: mct, max_tokens: mt } = body;
  return typeof mct === "number" && (typeof mt !== "number" || mct >= mt) ? "max_completion_tokens" : "max_tokens";
}

/** The choices the caller gets back: `n`, at least 1. */
export function returnedChoices(body: ChatRequest): number {
  return positiveInt((body as { n?: unknown }).n) ?? 1;
}

/** The completions a carrier generates and bills: `n`, or `best_of` when larger (it bills every candidate), at least 1. */
export function billedChoices(body: ChatRequest): number {
  return Math.max(returnedChoices(body), positiveInt((body as { best_of?: unknown }).best_of) ?? 1);
}

/** The request's reasoning budget in tokens (`reasoning.max_tokens`), null when it sets none. */
export function reasoningBudget(body: ChatRequest): number | null {
  const reasoning = (body as { reasoning?: unknown }).reasoning;
  return typeof reasoning === "object" && reasoning !== null ? positiveInt((reasoning as { max_tokens?: unknown }).max_tokens) : null;
}

function positiveInt(v: unknown): number | null {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 1 ? v : null;
}
