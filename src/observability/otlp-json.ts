import { RESOURCE_ATTRIBUTES, SCOPE, type Attr, type AttrValue, type GenAiSpan } from "./span";

/**
 * Spans as OTLP/HTTP JSON (`Content-Type: application/json`): an ExportTraceServiceRequest in the protobuf
 * JSON mapping with OTLP's exceptions — trace and span ids as hex, enums as integers — and 64-bit integers
 * as decimal strings (the mapping's form, exact beyond 2^53).
 */
export type JsonAnyValue =
  { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean } | { arrayValue: { values: JsonAnyValue[] } };
export type JsonKeyValue = { key: string; value: JsonAnyValue };
export type JsonSpan = {
  traceId: string;
  spanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: JsonKeyValue[];
  status: { code?: number; message?: string };
};
export type ExportTraceServiceRequestJson = {
  resourceSpans: Array<{
    resource: { attributes: JsonKeyValue[] };
    scopeSpans: Array<{ scope: { name: string; version: string }; spans: JsonSpan[] }>;
  }>;
};

function anyValue(v: AttrValue): JsonAnyValue {
  switch (v.kind) {
    case "string":
      return { stringValue: v.value };
    case "int":
      return { intValue: v.value.toString() };
    case "double":
      return { doubleValue: v.value };
    case "bool":
      return { boolValue: v.value };
    case "strings":
      return { arrayValue: { values: v.value.map((s) => ({ stringValue: s })) } };
  }
}

const keyValues = (attrs: Attr[]): JsonKeyValue[] => attrs.map((a) => ({ key: a.key, value: anyValue(a.value) }));

export function jsonSpan(s: GenAiSpan): JsonSpan {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: s.startTimeUnixNano.toString(),
    endTimeUnixNano: s.endTimeUnixNano.toString(),
    attributes: keyValues(s.attributes),
    // Proto3 JSON leaves defaults out: an UNSET status is `{}`.
    status: { ...(s.status.code !== 0 ? { code: s.status.code } : {}), ...(s.status.message ? { message: s.status.message } : {}) },
  };
}

export function exportRequestJson(spans: GenAiSpan[]): ExportTraceServiceRequestJson {
  return { resourceSpans: [{ resource: { attributes: keyValues(RESOURCE_ATTRIBUTES) }, scopeSpans: [{ scope: { ...SCOPE }, spans: spans.map(jsonSpan) }] }] };
}
