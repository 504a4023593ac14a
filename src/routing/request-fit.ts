import type { PricedEndpoint } from "../catalog/catalog";
import type { ChatRequest } from "../request/chat-request";
import { estimatePromptTokens } from "../request/token-estimate";
import { completionCap, countParts } from "../request/billed-fields";
import { MEDIA_MODALITIES, PART_MODALITY, type MediaModality, type PartCounts, type PartTokens } from "../catalog/modalities";

/** Request fields an endpoint must support to serve the request as asked: tool use and output formats. */
const FEATURES = ["tools", "tool_choice", "response_format"] as const;

/**
 * What a request needs of a model's endpoints: its media kinds, room for its prompt and completion cap,
 * features, and the output modalities it asks for (`modalities`).
 */
export type Need = { parts: PartCounts; promptTokens: number; completionTokens: number; features: string[]; outputs: readonly string[] };

export type TooLong = { modelId: string; contextLength: number; need: Need };
/** A model that does not take a kind of part the request carries. */
export type Unsupported = { modelId: string; modality: MediaModality; count: number; modalities: readonly string[] };
/** A model that cannot produce an output modality the request asks for (its `output_modalities`). */
export type Unproducible = { modelId: string; missing: string[]; modalities: readonly string[] };
/** A model none of whose endpoints returns as many completion tokens as the request's cap (`max_completion_tokens` per endpoint). */
export type CapTooHigh = { modelId: string; cap: number; maxOutput: number };
/** An endpoint left out because its maximum output is below the request's completion cap. */
export type Capped = { endpoint: PricedEndpoint; maxOutput: number };
export type Fit =
  | { endpoints: PricedEndpoint[]; capped: Capped[] }
  | { tooLong: TooLong }
  | { unsupported: Unsupported }
  | { unproducible: Unproducible }
  | { capTooHigh: CapTooHigh };

/** The request's needs at one model (its allowances price media parts into the prompt estimate). */
export function requestNeed(body: ChatRequest, partTokens: PartTokens): Need {
  return {
    parts: countParts(body),
    promptTokens: estimatePromptTokens(body, partTokens),
    completionTokens: completionCap(body) ?? 0,
    features: FEATURES.filter((f) => body[f] != null),
    outputs: body.modalities ?? [],
  };
}

/** The most completion tokens an endpoint returns: its `max_completion_tokens`, else its context. */
export function maxOutput(e: PricedEndpoint): number {
  return e.max_completion_tokens ?? e.context_length;
}

/**
 * The model's endpoints the request fits: none when the model does not take a kind of part the request
 * carries (`unsupported`: its `input_modalities`) or cannot produce an output modality it asks for
 * (`unproducible`: its `output_modalities`); those whose maximum output is at least the requested completion
 * cap (the others `capped`, never sent a cap they would refuse; none left: `capTooHigh`); the estimated
 * prompt plus that cap within the endpoint's context (none fitting: `tooLong`); then, when the request uses tools,
 * tool_choice or response_format, the endpoints that support them — unless none does, then all that
 * fit (a carrier may still cope; `provider.require_parameters` makes that a hard filter).
 */
export function fitRequest(endpoints: PricedEndpoint[], need: Need): Fit {
  const modalities = endpoints[0]?.inputModalities ?? [];
  const missing = MEDIA_MODALITIES.find((m) => need.parts[m] > 0 && !modalities.includes(m));
  if (missing) return { unsupported: { modelId: endpoints[0]!.modelId, modality: missing, count: need.parts[missing], modalities } };
  const outputs = endpoints[0]?.outputModalities ?? [];
  const unproduced = need.outputs.filter((m) => !outputs.includes(m));
  if (unproduced.length) return { unproducible: { modelId: endpoints[0]!.modelId, missing: unproduced, modalities: outputs } };
  const roomy = endpoints.filter((e) => maxOutput(e) >= need.completionTokens);
  const capped = endpoints.filter((e) => maxOutput(e) < need.completionTokens).map((e) => ({ endpoint: e, maxOutput: maxOutput(e) }));
  if (roomy.length === 0)
    return { capTooHigh: { modelId: endpoints[0]?.modelId ?? "", cap: need.completionTokens, maxOutput: Math.max(0, ...capped.map((c) => c.maxOutput)) } };
  const room = need.promptTokens + need.completionTokens;
  const fitting = roomy.filter((e) => room <= e.context_length);
  if (fitting.length === 0)
    return { tooLong: { modelId: endpoints[0]?.modelId ?? "", contextLength: Math.max(0, ...roomy.map((e) => e.context_length)), need } };
  if (need.features.length === 0) return { endpoints: fitting, capped };
  const able = fitting.filter((e) => need.features.every((f) => e.supportedParameters.includes(f)));
  return { endpoints: able.length ? able : fitting, capped };
}

/** The 400 message when no candidate model has room for the request; `capField` is the caller's name of its completion cap. */
export function contextTooLongMessage(tooLong: TooLong[], capField = "max_tokens"): string {
  const need = tooLong[0]!.need;
  const total = need.promptTokens + need.completionTokens;
  const models = tooLong.map((t) => `${t.modelId} (${t.contextLength} tokens)`).join(", ");
  const completion = need.completionTokens ? ` + ${need.completionTokens} completion (${capField})` : "";
  return `The request needs about ${total} tokens (${need.promptTokens} prompt, estimated${completion}), more than the largest context of ${models}. Shorten the messages or lower ${capField}.`;
}

/**
 * The 400 message when no endpoint of any candidate model returns as many completion tokens as asked,
 * naming the caller's own field (`capField`: max_tokens, max_completion_tokens, max_output_tokens) and the maximum.
 */
export function capTooHighMessage(capped: CapTooHigh[], capField: string): string {
  const { cap } = capped[0]!;
  const most = Math.max(...capped.map((c) => c.maxOutput));
  const models = capped.map((c) => `${c.modelId} (at most ${c.maxOutput})`).join(", ");
  return `${capField}: ${cap} is more than any endpoint of ${models} returns. Set ${capField} to at most ${most}.`;
}

/** The 400 message when no candidate model produces an output modality the request asks for (`modalities`). */
export function unproducibleMessage(unproducible: Unproducible[]): string {
  const missing = [...new Set(unproducible.flatMap((u) => u.missing))];
  const models = unproducible.map((u) => `${u.modelId} (output modalities: ${u.modalities.join(", ")})`).join(", ");
  return `modalities: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not an output modality of ${models}. Ask for its output modalities only, or send the request to a model whose output_modalities include ${missing.join(" and ")} (GET /api/v1/models?output_modalities=${missing.join(",")}).`;
}

/** The 400 message when no candidate model takes a kind of part the request carries. */
export function unsupportedPartsMessage(unsupported: Unsupported[]): string {
  const { modality, count } = unsupported[0]!;
  const types = Object.keys(PART_MODALITY).filter((t) => PART_MODALITY[t] === modality);
  const models = unsupported.map((u) => `${u.modelId} (input modalities: ${u.modalities.join(", ")})`);
  const who = models.length === 1 ? `${models[0]} does not take` : `none of ${models.join(", ")} takes`;
  return `The request carries ${count} ${modality} part${count === 1 ? "" : "s"} (${types.join(" or ")}), but ${who} ${modality} input. Send it to a model whose input_modalities include ${modality} (GET /api/v1/models), or remove those parts.`;
}
