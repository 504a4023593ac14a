import type { ChatRequest } from "../request/chat-request";
import { enforcesZdr, type GuardrailRules } from "../guardrails/rules";

/**
 * Why a chat-family request's answer is never taken from the cache nor stored in it, or null when it may be
 * (docs/caching.md, "Never cached"). Each reason is what the answer's `X-Switchyard-Cache-Reason` says.
 */
export function notCacheable(body: ChatRequest): string | null {
  const record = body as Record<string, unknown>;
  const n = typeof record.n === "number" ? record.n : 1;
  const bestOf = typeof record.best_of === "number" ? record.best_of : 1;
  // Several samples of one prompt ask for variety: the same samples again are not what was asked.
  if (n > 1 || bestOf > 1) return "n>1: several samples are asked for";
  // The carrier stores the completion on its side (OpenAI's stored completions): a side effect a replay would skip.
  if (record.store === true) return "store: the carrier keeps the completion";
  // A search's results change with the world; its answer is not the request's alone.
  if (record.web_search_options !== undefined) return "web_search_options: the answer depends on a search";
  if (body.messages.some((m) => mediaByUrl(m.content))) return "media by URL: the key cannot cover what the URL holds";
  return null;
}

/** A content part naming media by URL (not inline `data:`): what it holds can change while the request's text does not. */
function mediaByUrl(content: unknown): boolean {
  if (!Array.isArray(content)) return false;
  return content.some((part) => hasRemoteUrl(part, 0));
}

function hasRemoteUrl(v: unknown, depth: number): boolean {
  if (typeof v !== "object" || v === null || depth > 4) return false;
  for (const [k, x] of Object.entries(v)) {
    if ((k === "url" || k === "file_url" || k === "image_url") && typeof x === "string" && !x.startsWith("data:")) return true;
    if (typeof x === "object" && hasRemoteUrl(x, depth + 1)) return true;
  }
  return false;
}

/**
 * Why the caller's key may not have its answers kept, or null: a guardrail of the key enforcing zero data
 * retention on a model the request may be served by — keeping the answer is retention, at the router.
 */
export function retentionRefused(
  guardrails: readonly Pick<GuardrailRules, "zdrAnthropic" | "zdrOpenai" | "zdrGoogle" | "zdrXai" | "zdrOther">[],
  models: string[],
): string | null {
  const model = models.find((m) => guardrails.some((g) => enforcesZdr(g, m)));
  return model === undefined ? null : `zero data retention: a guardrail of this key enforces it on ${model}`;
}
