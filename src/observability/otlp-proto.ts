import { ProtoWriter, hexBytes } from "./protobuf-writer";
import { RESOURCE_ATTRIBUTES, SCOPE, type Attr, type AttrValue, type GenAiSpan } from "./span";

/**
 * Spans as OTLP/HTTP protobuf (`Content-Type: application/x-protobuf`): an ExportTraceServiceRequest. Field
 * numbers from opentelemetry-proto: collector/trace/v1 (ExportTraceServiceRequest), trace/v1 (ResourceSpans,
 * ScopeSpans, Span, Status), common/v1 (AnyValue, ArrayValue, KeyValue, InstrumentationScope), resource/v1.
 */
const F = {
  request: { resourceSpans: 1 },
  resourceSpans: { resource: 1, scopeSpans: 2 },
  resource: { attributes: 1 },
  scopeSpans: { scope: 1, spans: 2 },
  scope: { name: 1, version: 2 },
  span: { traceId: 1, spanId: 2, name: 5, kind: 6, start: 7, end: 8, attributes: 9, status: 15 },
  status: { message: 2, code: 3 },
  keyValue: { key: 1, value: 2 },
  anyValue: { string: 1, bool: 2, int: 3, double: 4, array: 5 },
  arrayValue: { values: 1 },
} as const;

function anyValue(w: ProtoWriter, v: AttrValue): void {
  switch (v.kind) {
    case "string":
      w.string(F.anyValue.string, v.value);
      return;
    case "int":
      w.uintAlways(F.anyValue.int, v.value);
      return;
    case "double":
      w.double(F.anyValue.double, v.value);
      return;
    case "bool":
      w.uintAlways(F.anyValue.bool, v.value ? 1 : 0);
      return;
    case "strings":
      w.message(F.anyValue.array, (a) => {
        for (const s of v.value) a.message(F.arrayValue.values, (x) => x.string(F.anyValue.string, s));
      });
      return;
  }
}

function keyValues(w: ProtoWriter, field: number, attrs: Attr[]): void {
  for (const a of attrs)
    w.message(field, (kv) => {
      kv.string(F.keyValue.key, a.key);
      kv.message(F.keyValue.value, (v) => anyValue(v, a.value));
    });
}

function span(w: ProtoWriter, s: GenAiSpan): void {
  w.bytesField(F.span.traceId, hexBytes(s.traceId))
    .bytesField(F.span.spanId, hexBytes(s.spanId))
    .string(F.span.name, s.name)
    .uint(F.span.kind, s.kind)
    .fixed64(F.span.start, s.startTimeUnixNano)
    .fixed64(F.span.end, s.endTimeUnixNano);
  keyValues(w, F.span.attributes, s.attributes);
  w.message(F.span.status, (st) => {
    if (s.status.message) st.string(F.status.message, s.status.message);
    st.uint(F.status.code, s.status.code);
  });
}

export function exportRequestProto(spans: GenAiSpan[]): Uint8Array<ArrayBuffer> {
  return new ProtoWriter()
    .message(F.request.resourceSpans, (rs) => {
      rs.message(F.resourceSpans.resource, (r) => keyValues(r, F.resource.attributes, RESOURCE_ATTRIBUTES));
      rs.message(F.resourceSpans.scopeSpans, (ss) => {
        ss.message(F.scopeSpans.scope, (sc) => sc.string(F.scope.name, SCOPE.name).string(F.scope.version, SCOPE.version));
        for (const s of spans) ss.message(F.scopeSpans.spans, (x) => span(x, s));
      });
    })
    .finish();
}
