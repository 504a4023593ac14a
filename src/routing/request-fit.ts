import type { PricedEndpoint } from "../catalog/catalog";
import type { ChatRequest } from "../request/chat-request";
import { estimatePromptTokens } from "../request/token-estimate";
import { completionCap, countParts } from "../request/billed-fields";
import { MEDIA_MODALITIES, PART_MODALITY, type MediaModality, type PartCounts, type PartTokens } from "../catalog/modalities";

/** Request fields an endpoint must support to serve the request as asked: tool use and output formats. */
const FEATURES = ["tools", "tool_choice", "response_format"] as const;

/** What a request needs of a model's endpoints: its media kinds, room for its prompt and completion cap, and features. */
export type Need = { parts: PartCounts; promptTokens: number; completionTokens: number; features: string[] };

export type TooLong = { modelId: string; contextLength: number; need: Need };
/** A model that does not take a kind of part the request carries. */
export type Unsupported = { modelId: string; modality: MediaModality; count: number; modalities: readonly string[] };
export type Fit = { endpoints: PricedEndpoint[] } | { tooLong: TooLong } | { unsupported: Unsupported };

/** The request's needs at one model (its allowances price media parts into the prompt estimate). */
export function requestNeed(body: ChatRequest, partTokens: PartTokens): Need {
  return {
    parts: countParts(body),
    promptTokens: estimatePromptTokens(body, partTokens),
    completionTokens: completionCap(body) ?? 0,
    features: FEATURES.filter((f) => body[f] != null),
  };
}

/**
 * The model's endpoints the request fits: none when the model does not take a kind of part the request
 * carries (`unsupported`: its `input_modalities`); the estimated prompt plus the requested completion cap
 * within the endpoint's context (none fitting: `tooLong`); then, when the request uses tools,
 * tool_choice or response_format, the endpoints that support them — unless none does, then all that
 * fit (a carrier may still cope; `provider.require_parameters` makes that a hard filter).
 */
export function fitRequest(endpoints: PricedEndpoint[], need: Need): Fit {
  const modalities = endpoints[0]?.inputModalities ?? [];
  const missing = MEDIA_MODALITIES.find((m) => need.parts[m] > 0 && !modalities.includes(m));
  if (missing) return { unsupported: { modelId: endpoints[0]!.modelId, modality: missing, count: need.parts[missing], modalities } };
  const room = need.promptTokens + need.completionTokens;
  const fitting = endpoints.filter((e) => room <= e.context_length);
  if (fitting.length === 0)
    return { tooLong: { modelId: endpoints[0]?.modelId ?? "", contextLength: Math.max(0, ...endpoints.map((e) => e.context_length)), need } };
  if (need.features.length === 0) return { endpoints: fitting };
  const able = fitting.filter((e) => need.features.every((f) => e.supportedParameters.includes(f)));
  return { endpoints: able.length ? able : fitting };
}

/** The 400 message when no candidate model has room for the request. */
export function contextTooLongMessage(tooLong: TooLong[]): string {
  const need = tooLong[0]!.need;
  const total = need.promptTokens + need.completionTokens;
  const models = tooLong.map((t) => `${t.modelId} (${t.contextLength} tokens)`).join(", ");
  const completion = need.completionTokens ? ` + ${need.completionTokens} completion (max_tokens)` : "";
  return `The request needs about ${total} tokens (${need.promptTokens} prompt, estimated${completion}), more than the largest context of ${models}. Shorten the messages or lower max_tokens.`;
}

/** The 400 message when no candidate model takes a kind of part the request carries. */
export function unsupportedPartsMessage(unsupported: Unsupported[]): string {
  const { modality, count } = unsupported[0]!;
  const types = Object.keys(PART_MODALITY).filter((t) => PART_MODALITY[t] === modality);
  const models = unsupported.map((u) => `${u.modelId} (input modalities: ${u.modalities.join(", ")})`);
  const who = models.length === 1 ? `${models[0]} does not take` : `none of ${models.join(", ")} takes`;
  return `The request carries ${count} ${modality} part${count === 1 ? "" : "s"} (${types.join(" or ")}), but ${who} ${modality} input. Send it to a model whose input_modalities include ${modality} (GET /api/v1/models), or remove those parts.`;
}
