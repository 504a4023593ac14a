import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatRequestSchema } from "../../src/request/chat-request";
import { Untranslatable } from "../../src/request/errors";
import { readUsage } from "../../src/request/usage";
import { gemini } from "../../src/protocols/outbound/gemini";
import { carrierProtocol } from "../../src/protocols/outbound";
import { carrierHeaders } from "../../src/carriers/carrier-headers";

// The Gemini carrier adapter, both directions, from wire fixtures in Gemini's documented shapes.
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("google/gemini-2.5-flash")[0]!;
type Json = Record<string, any>;
const body = (json: Json) => chatRequestSchema.parse({ model: "google/gemini-2.5-flash", ...json });
const wire = (json: Json) => JSON.parse(gemini.bodies(body(json), false, "hash")(endpoint)) as Json;
const ask = body({ messages: [{ role: "user", content: "x" }] });

describe("Gemini carrier: the request", () => {
  it("is the protocol of the google-ai-studio carrier, with its URLs and its key header", () => {
    expect(carrierProtocol(endpoint)).toBe(gemini);
    expect(gemini.url("https://generativelanguage.googleapis.com", endpoint, false)).toBe(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
    );
    expect(gemini.url("https://g.test/", endpoint, true)).toBe("https://g.test/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(carrierHeaders(endpoint, "gk")).toEqual({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "x-goog-api-key": "gk",
    });
  });

  it.each([
    {
      name: "system → systemInstruction; sampling, stops, n and the cap → generationConfig; no user field",
      req: {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
        ],
        max_tokens: 50,
        temperature: 0.3,
        top_p: 0.9,
        top_k: 20,
        stop: ["END"],
        n: 2,
        seed: 7,
        user: "ada",
      },
      want: {
        contents: [{ role: "user", parts: [{ text: "hi" }] }],
        systemInstruction: { parts: [{ text: "Be brief." }] },
        generationConfig: { maxOutputTokens: 50, temperature: 0.3, topP: 0.9, topK: 20, seed: 7, candidateCount: 2, stopSequences: ["END"] },
      },
    },
    {
      name: "tool use: functionCall parts with their thought signatures; functionResponse named from the call; the user's text beside it kept after",
      req: {
        messages: [
          { role: "user", content: "Weather in Paris and Rome?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
              { id: "call_b", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
            ],
            reasoning_details: [{ type: "reasoning.encrypted", data: "CiQB+/sig==", id: "call_a", format: "google-gemini-v1", index: 0 }],
          },
          { role: "tool", tool_call_id: "call_a", content: '{"temp":18}' },
          { role: "tool", tool_call_id: "call_b", content: "sunny" },
          { role: "user", content: "Tomorrow?" },
        ],
        tools: [{ type: "function", function: { name: "weather", description: "Weather", parameters: { type: "object" } } }],
        tool_choice: { type: "function", function: { name: "weather" } },
      },
      want: {
        contents: [
          { role: "user", parts: [{ text: "Weather in Paris and Rome?" }] },
          {
            role: "model",
            parts: [
              { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "CiQB+/sig==" },
              { functionCall: { name: "weather", args: { city: "Rome" } } },
            ],
          },
          {
            role: "user",
            parts: [
              { functionResponse: { name: "weather", response: { temp: 18 } } },
              { functionResponse: { name: "weather", response: { content: "sunny" } } },
              { text: "Tomorrow?" },
            ],
          },
        ],
        tools: [{ functionDeclarations: [{ name: "weather", description: "Weather", parameters: { type: "object" } }] }],
        toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["weather"] } },
      },
    },
    {
      name: "images: data URL → inlineData, https → fileData; audio → inlineData",
      req: {
        messages: [
          {
            role: "user",
            content: [
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBO" } },
              { type: "image_url", image_url: { url: "https://x.test/cat.webp" } },
              { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
            ],
          },
        ],
      },
      want: {
        contents: [
          {
            role: "user",
            parts: [
              { inlineData: { mimeType: "image/png", data: "iVBO" } },
              { fileData: { mimeType: "image/webp", fileUri: "https://x.test/cat.webp" } },
              { inlineData: { mimeType: "audio/wav", data: "UklG" } },
            ],
          },
        ],
      },
    },
    {
      name: "structured output: json_schema → responseMimeType and responseJsonSchema; reasoning effort → a thinking budget",
      req: {
        messages: [{ role: "user", content: "x" }],
        max_tokens: 1000,
        reasoning: { effort: "high" },
        response_format: { type: "json_schema", json_schema: { name: "a", schema: { type: "object", properties: { a: { type: "number" } } } } },
      },
      want: {
        contents: [{ role: "user", parts: [{ text: "x" }] }],
        generationConfig: {
          maxOutputTokens: 1000,
          responseMimeType: "application/json",
          responseJsonSchema: { type: "object", properties: { a: { type: "number" } } },
          thinkingConfig: { thinkingBudget: 800, includeThoughts: true },
        },
      },
    },
    {
      name: "reasoning off → thinkingBudget 0; json_object → responseMimeType; tool_choice required → ANY",
      req: { messages: [{ role: "user", content: "x" }], reasoning: { enabled: false }, response_format: { type: "json_object" }, tool_choice: "required" },
      want: {
        contents: [{ role: "user", parts: [{ text: "x" }] }],
        generationConfig: { responseMimeType: "application/json", thinkingConfig: { thinkingBudget: 0 } },
        toolConfig: { functionCallingConfig: { mode: "ANY" } },
      },
    },
    {
      name: "reasoning enabled without effort → Gemini's dynamic budget; exclude → no thoughts returned",
      req: { messages: [{ role: "user", content: "x" }], reasoning: { enabled: true, exclude: true } },
      want: { contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { thinkingConfig: { thinkingBudget: -1, includeThoughts: false } } },
    },
  ])("$name", ({ req, want }) => {
    expect(wire(req)).toEqual(want);
  });

  it.each([
    [{ messages: [{ role: "tool", tool_call_id: "nope", content: "x" }] }, /answers no tool call/],
    [
      { messages: [{ role: "assistant", content: "", tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "1" } }] }] },
      /not a JSON object/,
    ],
    [{ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x" } }] }] }, /data: URL/],
    [{ messages: [{ role: "function", content: "x" }] }, /no equivalent/],
  ])("refuses what it cannot express (%#)", (req, message) => {
    expect(() => wire(req)).toThrow(Untranslatable);
    expect(() => wire(req)).toThrow(message);
  });
});

describe("Gemini carrier: the answer", () => {
  const response = (candidates: Json[], usageMetadata?: Json) => ({
    candidates,
    ...(usageMetadata ? { usageMetadata } : {}),
    modelVersion: "gemini-2.5-flash",
    responseId: "resp1",
  });
  const read = (json: unknown) => {
    const r = gemini.answer(json, ask);
    if (!("answer" in r)) throw new Error(r.unusable);
    return r.answer as Json;
  };

  it("text, thoughts and usage with cached tokens counted once (promptTokenCount includes them)", () => {
    const a = read(
      response([{ index: 0, finishReason: "STOP", content: { role: "model", parts: [{ text: "plan", thought: true }, { text: "Hello" }] } }], {
        promptTokenCount: 1000,
        cachedContentTokenCount: 600,
        candidatesTokenCount: 5,
        thoughtsTokenCount: 20,
        totalTokenCount: 1025,
      }),
    );
    expect(a.id).toBe("resp1");
    expect(a.choices).toEqual([
      {
        index: 0,
        message: {
          role: "assistant",
          content: "Hello",
          reasoning: "plan",
          reasoning_details: [{ type: "reasoning.text", text: "plan", format: "google-gemini-v1", index: 0 }],
        },
        finish_reason: "stop",
      },
    ]);
    expect(readUsage(a.usage)).toEqual({
      promptTokens: 1000,
      completionTokens: 25,
      reasoningTokens: 20,
      cachedTokens: 600,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
    });
  });

  it("function calls → tool_calls with stable ids, their signatures in reasoning_details, finish_reason tool_calls", () => {
    const a = read(
      response([
        {
          finishReason: "STOP",
          content: {
            role: "model",
            parts: [
              { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "sig1" },
              { functionCall: { name: "weather", args: { city: "Rome" } } },
            ],
          },
        },
      ]),
    );
    expect(a.choices[0]).toEqual({
      index: 0,
      message: {
        role: "assistant",
        content: null,
        reasoning_details: [{ type: "reasoning.encrypted", data: "sig1", id: "call_resp1_0_0", format: "google-gemini-v1", index: 0 }],
        tool_calls: [
          { id: "call_resp1_0_0", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
          { id: "call_resp1_0_1", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      finish_reason: "tool_calls",
    });
    expect(a).not.toHaveProperty("usage");
    // The signature goes back with its call, byte for byte.
    const next = wire({
      messages: [
        { role: "user", content: "q" },
        a.choices[0].message,
        { role: "tool", tool_call_id: "call_resp1_0_0", content: "18C" },
        { role: "tool", tool_call_id: "call_resp1_0_1", content: "20C" },
      ],
    });
    expect(next.contents[1].parts[0]).toEqual({ functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "sig1" });
  });

  it.each([
    ["MAX_TOKENS", "length"],
    ["SAFETY", "content_filter"],
    ["RECITATION", "content_filter"],
    ["PROHIBITED_CONTENT", "content_filter"],
    ["OTHER", "stop"],
    [undefined, null],
  ])("finishReason %s → %s", (reason, want) => {
    expect(read(response([{ finishReason: reason, content: { parts: [{ text: "x" }] } }])).choices[0].finish_reason).toBe(want);
  });

  it("two candidates → two choices; a blocked prompt → content_filter", () => {
    const two = read(
      response([
        { index: 0, finishReason: "STOP", content: { parts: [{ text: "a" }] } },
        { index: 1, finishReason: "STOP", content: { parts: [{ text: "b" }] } },
      ]),
    );
    expect(two.choices.map((c: Json) => [c.index, c.message.content])).toEqual([
      [0, "a"],
      [1, "b"],
    ]);
    const blocked = read({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 } });
    expect(blocked.choices).toEqual([{ index: 0, message: { role: "assistant", content: null }, finish_reason: "content_filter" }]);
  });

  it.each([[{ error: { code: 400, message: "bad", status: "INVALID_ARGUMENT" } }], [[]], [null]])("unusable: %j", (json) => {
    expect(gemini.answer(json, ask)).toEqual({ unusable: "the carrier's answer is not a Gemini response" });
  });
});

describe("Gemini carrier: the stream", () => {
  const ev = (json: Json) => {
    const data = JSON.stringify(json);
    return { data, bytes: new TextEncoder().encode(data).byteLength };
  };
  const decode = (events: Json[], req: Json = {}) => {
    const decoder = gemini.streamDecoder(body({ messages: [{ role: "user", content: "x" }], ...req }))!;
    return events.flatMap((e) => decoder(ev(e))).map((e): Json | "[DONE]" => (e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));
  };
  const part = (parts: Json[], extra: Json = {}, usage?: Json) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: "gemini-2.5-flash",
    responseId: "r9",
  });

  it("text and thoughts as deltas with one head; finish; usage once, from the last usageMetadata; [DONE]", () => {
    const out = decode([
      part([{ text: "think", thought: true }], {}, { promptTokenCount: 10, candidatesTokenCount: 0, thoughtsTokenCount: 3 }),
      part([{ text: "Hel" }], {}, { promptTokenCount: 10, candidatesTokenCount: 1, thoughtsTokenCount: 3 }),
      part([{ text: "lo" }], { finishReason: "STOP" }, { promptTokenCount: 10, cachedContentTokenCount: 4, candidatesTokenCount: 2, thoughtsTokenCount: 3 }),
    ]);
    const chunks = out.filter((c) => c !== "[DONE]") as Json[];
    expect(new Set(chunks.map((c) => JSON.stringify([c.id, c.created, c.model]))).size).toBe(1);
    expect(chunks.filter((c) => c.choices.length).map((c) => [c.choices[0].delta, c.choices[0].finish_reason])).toEqual([
      [{ reasoning: "think", reasoning_details: [{ type: "reasoning.text", text: "think", format: "google-gemini-v1", index: 0 }] }, null],
      [{ content: "Hel" }, null],
      [{ content: "lo" }, null],
      [{}, "stop"],
    ]);
    expect(readUsage(chunks.at(-1)!.usage)).toEqual({
      promptTokens: 10,
      completionTokens: 5,
      reasoningTokens: 3,
      cachedTokens: 4,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
    });
    expect(out.at(-1)).toBe("[DONE]");
  });

  it("a function call arrives whole, with its signature; the finish is tool_calls", () => {
    const out = decode([
      part(
        [{ functionCall: { name: "f", args: { a: 1 } }, thoughtSignature: "s1" }],
        { finishReason: "STOP" },
        { promptTokenCount: 5, candidatesTokenCount: 4 },
      ),
    ]);
    expect((out[0] as Json).choices[0].delta).toEqual({
      reasoning_details: [{ type: "reasoning.encrypted", data: "s1", id: "call_r9_0_0", format: "google-gemini-v1", index: 0 }],
      tool_calls: [{ index: 0, id: "call_r9_0_0", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
    });
    expect((out[1] as Json).choices[0].finish_reason).toBe("tool_calls");
  });

  it("two candidates: usage and [DONE] only once both finished", () => {
    const two = (i: number, text: string, finish?: string) => ({
      candidates: [{ index: i, content: { parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}) }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 },
      responseId: "r",
    });
    const out = decode([two(0, "a", "STOP"), two(1, "b"), two(1, "c", "MAX_TOKENS")], { n: 2 });
    expect(out.filter((c) => c === "[DONE]")).toHaveLength(1);
    expect(out.at(-1)).toBe("[DONE]");
    expect((out.at(-3) as Json).choices[0]).toEqual({ index: 1, delta: {}, finish_reason: "length" });
  });

  it("an error event becomes an error chunk", () => {
    const out = decode([part([{ text: "a" }]), { error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } }]);
    expect(out.at(-1)).toMatchObject({ id: "r9", error: { message: "UNAVAILABLE: overloaded", code: 502 } });
  });
});
