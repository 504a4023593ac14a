import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewGeneration } from "../../src/db/schema";
import { generationSpan, spanIds } from "../../src/observability/span";
import { exportRequestJson } from "../../src/observability/otlp-json";
import { exportRequestProto } from "../../src/observability/otlp-proto";
import { decodeTraceExport } from "../../simulator/otlp/proto-read";
import { startOtlpReceiver, type OtlpReceiver } from "../../simulator/otlp/server";

// A generation record as an OTLP span (docs/observability.md): the attributes each kind of record gives, and
// the JSON and protobuf encodings of it saying the same thing — the protobuf read back by the receiver's own
// reader, written from the .proto field numbers apart from the Worker's writer.

const T0 = 1_764_000_000_123; // Unix ms
const attempt = (provider: string, providerName: string, model: string, status: number) => ({
  model,
  provider,
  providerName,
  status,
  at: T0,
  latencyMs: 80,
  tokensPerSecond: null,
});

function record(over: Partial<NewGeneration>): NewGeneration {
  return {
    id: "gen-019aa0000000aaaaaaaaaaaaaaaaaaaa",
    accountId: "acct_1",
    keyHash: "ab".repeat(32),
    model: "openai/gpt-oss-20b",
    providerName: "Groq",
    app: null,
    streamed: false,
    createdAt: T0,
    latencyMs: 80,
    generationTimeMs: 250,
    tokensPrompt: 120,
    tokensCompletion: 40,
    tokensReasoning: 0,
    tokensCached: 0,
    tokensCacheWrite: 0,
    costNano: 123_456,
    finishReason: "stop",
    status: 200,
    errorMessage: null,
    upstreamId: "chatcmpl-up",
    inboundApi: "chat",
    providerResponses: JSON.stringify([attempt("groq", "Groq", "openai/gpt-oss-20b", 200)]),
    strategy: "direct",
    ...over,
  };
}

type Attrs = Record<string, unknown>;
/** A span's attributes by key, each value as OTLP/JSON holds it. */
const attrsOf = (span: { attributes: Array<{ key: string; value: unknown }> }): Attrs => Object.fromEntries(span.attributes.map((a) => [a.key, a.value]));

const cases: Array<{ name: string; record: NewGeneration; label?: string; want: Attrs; absent: string[]; spanName: string; status: object; end: string }> = [
  {
    name: "a served chat completion",
    record: record({}),
    label: "sk-sy-v1-abc...xyz",
    spanName: "chat openai/gpt-oss-20b",
    want: {
      "gen_ai.operation.name": { stringValue: "chat" },
      "gen_ai.provider.name": { stringValue: "groq" },
      "gen_ai.request.model": { stringValue: "openai/gpt-oss-20b" },
      "gen_ai.response.model": { stringValue: "openai/gpt-oss-20b" },
      "gen_ai.response.id": { stringValue: "gen-019aa0000000aaaaaaaaaaaaaaaaaaaa" },
      "gen_ai.response.finish_reasons": { arrayValue: { values: [{ stringValue: "stop" }] } },
      "gen_ai.usage.input_tokens": { intValue: "120" },
      "gen_ai.usage.output_tokens": { intValue: "40" },
      "switchyard.cost.nano_usd": { intValue: "123456" },
      "switchyard.cost.usd": { doubleValue: 0.000123456 },
      "switchyard.carrier": { stringValue: "Groq" },
      "switchyard.key.label": { stringValue: "sk-sy-v1-abc...xyz" },
      "switchyard.time_to_first_token_ms": { intValue: "80" },
      "switchyard.status": { intValue: "200" },
      "switchyard.streamed": { boolValue: false },
      "switchyard.inbound_api": { stringValue: "chat" },
    },
    absent: ["error.type", "switchyard.preset"],
    status: {},
    end: String((T0 + 250) * 1_000_000),
  },
  {
    name: "a streamed Messages request through a preset, after a fallback, with cache reads and writes",
    record: record({
      streamed: true,
      inboundApi: "messages",
      model: "anthropic/claude-sonnet-4.5",
      providerName: "Anthropic",
      providerResponses: JSON.stringify([
        attempt("bedrock", "Amazon Bedrock", "anthropic/claude-sonnet-4.5", 503),
        attempt("anthropic", "Anthropic", "anthropic/claude-sonnet-4.5", 200),
      ]),
      tokensCached: 100,
      tokensCacheWrite: 20,
      tokensReasoning: 12,
      preset: "support-bot",
      presetId: "3f1e…",
      presetVersion: 3,
      strategy: "fallback",
    }),
    spanName: "chat anthropic/claude-sonnet-4.5",
    want: {
      "gen_ai.provider.name": { stringValue: "anthropic" },
      "gen_ai.usage.cache_read.input_tokens": { intValue: "100" },
      "gen_ai.usage.cache_creation.input_tokens": { intValue: "20" },
      "gen_ai.usage.reasoning.output_tokens": { intValue: "12" },
      "switchyard.preset": { stringValue: "support-bot" },
      "switchyard.preset.version": { intValue: "3" },
      "switchyard.streamed": { boolValue: true },
      "switchyard.inbound_api": { stringValue: "messages" },
      "switchyard.strategy": { stringValue: "fallback" },
    },
    absent: ["switchyard.key.label", "error.type"],
    status: {},
    end: String((T0 + 250) * 1_000_000),
  },
  {
    name: "a request no carrier served (all down): an error span, nothing charged",
    record: record({
      providerName: null,
      providerResponses: JSON.stringify([attempt("groq", "Groq", "openai/gpt-oss-20b", 503)]),
      status: 503,
      errorMessage: "No endpoint is available",
      finishReason: null,
      tokensPrompt: 0,
      tokensCompletion: 0,
      costNano: 0,
      latencyMs: null,
      generationTimeMs: 1000,
    }),
    spanName: "chat openai/gpt-oss-20b",
    want: { "error.type": { stringValue: "503" }, "switchyard.cost.nano_usd": { intValue: "0" }, "switchyard.status": { intValue: "503" } },
    absent: ["gen_ai.provider.name", "gen_ai.response.model", "gen_ai.response.finish_reasons", "switchyard.carrier", "switchyard.time_to_first_token_ms"],
    status: { code: 2, message: "No endpoint is available" },
    end: String((T0 + 1000) * 1_000_000),
  },
  {
    name: "an embeddings request",
    record: record({ inboundApi: "embeddings", model: "openai/text-embedding-3-small", finishReason: null, tokensCompletion: 0 }),
    spanName: "embeddings openai/text-embedding-3-small",
    want: { "gen_ai.operation.name": { stringValue: "embeddings" }, "gen_ai.request.model": { stringValue: "openai/text-embedding-3-small" } },
    absent: ["gen_ai.response.finish_reasons"],
    status: {},
    end: String((T0 + 250) * 1_000_000),
  },
];

describe("a generation record as an OTLP span", () => {
  for (const c of cases)
    it(c.name, () => {
      const json = exportRequestJson([generationSpan(c.record, { keyLabel: c.label ?? null })]);
      const rs = json.resourceSpans[0]!;
      expect(rs.resource.attributes).toEqual([{ key: "service.name", value: { stringValue: "switchyard" } }]);
      const span = rs.scopeSpans[0]!.spans[0]!;
      expect(span.name).toBe(c.spanName);
      expect(span.kind).toBe(3); // CLIENT
      expect(span.startTimeUnixNano).toBe(String(T0 * 1_000_000));
      expect(span.endTimeUnixNano).toBe(c.end);
      expect(span.status).toEqual(c.status);
      const attrs = attrsOf(span);
      for (const [k, v] of Object.entries(c.want)) expect(attrs[k], k).toEqual(v);
      for (const k of c.absent) expect(attrs, k).not.toHaveProperty(k);
      // The key itself is never in a span: only its hash, and its masked label when given.
      expect(JSON.stringify(json)).not.toMatch(/sk-sy-v1-[0-9a-f]{20}/);
      // Protobuf says exactly what JSON says.
      expect(decodeTraceExport(exportRequestProto([generationSpan(c.record, { keyLabel: c.label ?? null })]))).toEqual(json);
    });

  it("derives the trace and span ids from the generation id alone: a redelivery is the same span", () => {
    const a = spanIds("gen-019aa0000000aaaaaaaaaaaaaaaaaaaa");
    expect(a).toEqual(spanIds("gen-019aa0000000aaaaaaaaaaaaaaaaaaaa"));
    expect(a.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.spanId).toMatch(/^[0-9a-f]{16}$/);
    const b = spanIds("gen-019aa0000000aaaaaaaaaaaaaaaaaaab");
    expect(b.traceId).not.toBe(a.traceId);
    expect(b.spanId).not.toBe(a.spanId);
    expect(spanIds("gen-" + "c".repeat(24)).traceId).toMatch(/^[0-9a-f]{32}$/); // an id of the older form too
  });

  it("writes int64 beyond 2^53 and several spans in one export exactly", () => {
    const big = record({ costNano: 2 ** 53 + 2 });
    const spans = [generationSpan(big), generationSpan(record({ id: "gen-019aa0000000bbbbbbbbbbbbbbbbbbbb" }))];
    const json = exportRequestJson(spans);
    expect(attrsOf(json.resourceSpans[0]!.scopeSpans[0]!.spans[0]!)["switchyard.cost.nano_usd"]).toEqual({ intValue: "9007199254740994" });
    expect(decodeTraceExport(exportRequestProto(spans))).toEqual(json);
  });
});

describe("the local OTLP receiver", () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => (receiver = await startOtlpReceiver()));
  afterAll(() => receiver.close());

  it("keeps the spans of JSON and protobuf exports alike, and refuses what is not OTLP", async () => {
    const spans = [generationSpan(record({}))];
    const post = (type: string, body: BodyInit) =>
      fetch(`${receiver.url}/v1/traces`, { method: "POST", headers: { "content-type": type, authorization: "Bearer t" }, body });
    expect((await post("application/json", JSON.stringify(exportRequestJson(spans)))).status).toBe(200);
    expect((await post("application/x-protobuf", exportRequestProto(spans))).status).toBe(200);
    expect((await post("text/plain", "hello")).status).toBe(415);
    expect((await post("application/x-protobuf", new Uint8Array([0x0a, 0x05, 0x01]))).status).toBe(400);
    receiver.failNext(1);
    expect((await post("application/json", JSON.stringify(exportRequestJson(spans)))).status).toBe(503);
    const listed = (await (await fetch(`${receiver.url}/_sim/spans`)).json()) as { spans: Array<{ span: unknown; encoding: string; authorization: string }> };
    expect(listed.spans.map((s) => s.encoding)).toEqual(["json", "protobuf"]);
    expect(listed.spans[0]!.span).toEqual(listed.spans[1]!.span);
    expect(listed.spans[0]!.span).toEqual(exportRequestJson(spans).resourceSpans[0]!.scopeSpans[0]!.spans[0]);
    expect(listed.spans[0]!.authorization).toBe("Bearer t");
  });
});
