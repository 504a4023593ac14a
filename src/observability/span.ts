import type { NewGeneration } from "../db/schema";
import type { CarrierAttempt } from "../db/carrier-attempt";
import { sha256Hex } from "../keys/sha256";

/**
 * One generation record as one OpenTelemetry span (docs/observability.md): the GenAI semantic conventions'
 * attributes (`gen_ai.*`) and the router's own under `switchyard.`. Pure: the same record gives the same span,
 * ids included, so a delivery retried or sent to two destinations is the same span everywhere.
 */

/** An attribute's value, as OTLP's AnyValue holds it: int64 kept exact as a bigint. */
export type AttrValue =
  | { kind: "string"; value: string }
  | { kind: "int"; value: bigint }
  | { kind: "double"; value: number }
  | { kind: "bool"; value: boolean }
  | { kind: "strings"; value: string[] };
export type Attr = { key: string; value: AttrValue };

/** OTLP's SpanKind CLIENT: the GenAI conventions' kind for a call to a model. */
export const SPAN_KIND_CLIENT = 3;
/** OTLP's Status codes: UNSET on success (as the conventions advise), ERROR when the caller got an error. */
export const STATUS_UNSET = 0;
export const STATUS_ERROR = 2;

export type GenAiSpan = {
  traceId: string; // 32 hex digits
  spanId: string; // 16 hex digits
  name: string;
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Attr[];
  status: { code: number; message?: string };
};

/** What the span says beside the record: the key's label (the key itself never leaves). */
export type SpanExtras = { keyLabel?: string | null };

/** The service's resource and the instrumentation scope every exported span carries. */
export const RESOURCE_ATTRIBUTES: Attr[] = [{ key: "service.name", value: { kind: "string", value: "switchyard" } }];
export const SCOPE = { name: "switchyard.generations", version: "1" };

const NANOS_PER_MS = 1_000_000n;

/** Trace and span ids from the generation id alone: hashed, so ids of any form give ids of the right length. */
export function spanIds(genId: string): { traceId: string; spanId: string } {
  return { traceId: sha256Hex(`switchyard-trace:${genId}`).slice(0, 32), spanId: sha256Hex(`switchyard-span:${genId}`).slice(0, 16) };
}

/** The attempt that served (the record keeps it last), when a carrier served. */
function servedAttempt(r: NewGeneration): CarrierAttempt | null {
  if (r.providerName == null || !r.providerResponses) return null;
  const attempts = JSON.parse(r.providerResponses) as CarrierAttempt[];
  return attempts.at(-1) ?? null;
}

const str = (key: string, value: string): Attr => ({ key, value: { kind: "string", value } });
const int = (key: string, value: number): Attr => ({ key, value: { kind: "int", value: BigInt(value) } });

export function generationSpan(r: NewGeneration, extras: SpanExtras = {}): GenAiSpan {
  const operation = r.inboundApi === "embeddings" ? "embeddings" : "chat";
  const served = servedAttempt(r);
  const cost = r.costNano;
  const attrs: Array<Attr | null> = [
    str("gen_ai.operation.name", operation),
    served ? str("gen_ai.provider.name", served.provider) : null,
    str("gen_ai.request.model", r.model),
    served ? str("gen_ai.response.model", served.model) : null,
    str("gen_ai.response.id", r.id),
    r.finishReason ? { key: "gen_ai.response.finish_reasons", value: { kind: "strings", value: [r.finishReason] } } : null,
    int("gen_ai.usage.input_tokens", r.tokensPrompt),
    int("gen_ai.usage.output_tokens", r.tokensCompletion),
    int("gen_ai.usage.cache_read.input_tokens", r.tokensCached ?? 0),
    int("gen_ai.usage.cache_creation.input_tokens", r.tokensCacheWrite ?? 0),
    int("gen_ai.usage.reasoning.output_tokens", r.tokensReasoning),
    r.status >= 400 ? str("error.type", String(r.status)) : null,
    int("switchyard.cost.nano_usd", cost),
    { key: "switchyard.cost.usd", value: { kind: "double", value: cost / 1e9 } },
    r.providerName ? str("switchyard.carrier", r.providerName) : null,
    str("switchyard.key.hash", r.keyHash),
    extras.keyLabel ? str("switchyard.key.label", extras.keyLabel) : null,
    r.preset ? str("switchyard.preset", r.preset) : null,
    r.presetVersion != null ? int("switchyard.preset.version", r.presetVersion) : null,
    str("switchyard.inbound_api", r.inboundApi ?? "chat"),
    r.latencyMs != null ? int("switchyard.time_to_first_token_ms", r.latencyMs) : null,
    r.generationTimeMs != null ? int("switchyard.generation_time_ms", r.generationTimeMs) : null,
    int("switchyard.status", r.status),
    { key: "switchyard.streamed", value: { kind: "bool", value: r.streamed } },
    r.cancelled ? { key: "switchyard.cancelled", value: { kind: "bool", value: true } } : null,
    r.strategy ? str("switchyard.strategy", r.strategy) : null,
    r.upstreamId ? str("switchyard.upstream_id", r.upstreamId) : null,
  ];
  const start = BigInt(r.createdAt) * NANOS_PER_MS;
  return {
    ...spanIds(r.id),
    name: `${operation} ${r.model}`,
    kind: SPAN_KIND_CLIENT,
    startTimeUnixNano: start,
    endTimeUnixNano: start + BigInt(r.generationTimeMs ?? 0) * NANOS_PER_MS,
    attributes: attrs.filter((a): a is Attr => a !== null),
    status: r.status >= 400 ? { code: STATUS_ERROR, message: r.errorMessage ?? `status ${r.status}` } : { code: STATUS_UNSET },
  };
}
