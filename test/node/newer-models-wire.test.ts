import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog, type PricedEndpoint } from "../../src/catalog/catalog";
import { chatRequestSchema } from "../../src/request/chat-request";
import { anthropicMessages } from "../../src/protocols/outbound/anthropic";
import { openAiChat } from "../../src/protocols/outbound/openai-chat";
import { gemini } from "../../src/protocols/outbound/gemini";
import { chatFromMessages } from "../../src/protocols/inbound/anthropic-messages/request";
import { contentBlocks } from "../../src/protocols/inbound/anthropic-messages/answer";
import type { CarrierProtocol } from "../../src/protocols/outbound/carrier-protocol";

// What the newer reasoning models changed on the wire (Claude Opus 5.5 / Fable 5.1, GPT-6 Astra / 6.1 Sol,
// Gemini 2.5 Pro / 3.x), as the catalog declares it per endpoint and each carrier adapter writes it:
// thinking that cannot be turned off, forced tool use refused while thinking, signed thinking bound to the
// model that made it. Table tests of the adapters' pure functions.
const catalog = Catalog.parse(catalogJson);
type Json = Record<string, any>;
const sonnet = catalog.endpoints("anthropic/claude-sonnet-4.5")[0]!;
/** Claude Opus 5.5 as its page describes it (the catalog's entry carries the same three fields). */
const opus55: PricedEndpoint = {
  ...sonnet,
  upstream_model: "claude-opus-5-5",
  thinking_always_on: true,
  refuses_forced_tool_choice: true,
  thinking_bound_to_model: true,
};
const gpt5 = catalog.endpoints("openai/gpt-5")[0]!;
/** A GPT-6 model without effort `none` (GPT-6 Astra, 6.1 Sol). */
const gpt6: PricedEndpoint = { ...gpt5, upstream_model: "gpt-6.1-sol", thinking_always_on: true, refuses_forced_tool_choice: true };
const geminiPro = catalog.endpoints("google/gemini-2.5-pro")[0]!;
const geminiFlash = catalog.endpoints("google/gemini-2.5-flash")[0]!;

const req = (json: Json) => chatRequestSchema.parse({ model: "x/y", max_tokens: 4000, messages: [{ role: "user", content: "hi" }], ...json });
const sent = (protocol: CarrierProtocol, json: Json, endpoint: PricedEndpoint) => JSON.parse(protocol.bodies(req(json), false, null)(endpoint)) as Json;
const tools = [{ type: "function", function: { name: "f", parameters: { type: "object" } } }];

describe("thinking that cannot be turned off", () => {
  it.each([
    { name: "nothing asked: adaptive, the carrier's default effort", ask: {}, want: { thinking: { type: "adaptive" } }, named: [] },
    {
      name: "an effort: adaptive with the text shown, the effort as output_config",
      ask: { reasoning: { effort: "high" } },
      want: { thinking: { type: "adaptive", display: "summarized" }, output_config: { effort: "high" } },
      named: [],
    },
    {
      name: "minimal (not Anthropic's): its lowest, low",
      ask: { reasoning: { effort: "minimal" } },
      want: { thinking: { type: "adaptive", display: "summarized" }, output_config: { effort: "low" } },
      named: [],
    },
    {
      name: "reasoning off: the lowest effort instead of disabled (its 400), named",
      ask: { reasoning: { enabled: false } },
      want: { thinking: { type: "adaptive" }, output_config: { effort: "low" } },
      named: ["reasoning"],
    },
    {
      name: "effort none: the same",
      ask: { reasoning_effort: "none" },
      want: { thinking: { type: "adaptive" }, output_config: { effort: "low" } },
      named: ["reasoning"],
    },
    {
      name: "a fixed budget: not sent (budget_tokens is a 400), named",
      ask: { reasoning: { max_tokens: 2000 } },
      want: { thinking: { type: "adaptive", display: "summarized" } },
      named: ["reasoning.max_tokens"],
    },
    {
      name: "excluded reasoning: thought, not shown",
      ask: { reasoning: { effort: "medium", exclude: true } },
      want: { thinking: { type: "adaptive" }, output_config: { effort: "medium" } },
      named: [],
    },
  ])("Anthropic (Opus 5.5): $name", ({ ask, want, named }) => {
    const body = sent(anthropicMessages, ask, opus55);
    expect({ thinking: body.thinking, ...(body.output_config ? { output_config: body.output_config } : {}) }).toEqual(want);
    expect(anthropicMessages.leftOut(req(ask), opus55)).toEqual(named);
  });

  it("Anthropic, a model that can turn it off (Sonnet 4.5): a budget when asked, nothing when off, as before", () => {
    expect(sent(anthropicMessages, { reasoning: { effort: "low" } }, sonnet).thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(sent(anthropicMessages, { reasoning: { enabled: false } }, sonnet)).not.toHaveProperty("thinking");
    expect(anthropicMessages.leftOut(req({ reasoning: { enabled: false } }), sonnet)).toEqual([]);
  });

  it.each([
    { ask: { reasoning: { effort: "none" } }, want: "low" },
    { ask: { reasoning_effort: "none" }, want: "low" },
    { ask: { reasoning: { enabled: false } }, want: "low" },
    { ask: { reasoning: { effort: "high" } }, want: "high" },
  ])("OpenAI (GPT-6.1 Sol, no effort none): $ask → reasoning_effort $want", ({ ask, want }) => {
    expect(sent(openAiChat, ask, gpt6).reasoning_effort).toBe(want);
    expect(openAiChat.leftOut(req(ask), gpt6)).toEqual(want === "low" ? ["reasoning"] : []);
  });

  it("OpenAI, a model that can turn it off (GPT-5): off is minimal, nothing named, as before", () => {
    expect(sent(openAiChat, { reasoning: { effort: "none" } }, gpt5).reasoning_effort).toBe("minimal");
    expect(openAiChat.leftOut(req({ reasoning: { effort: "none" } }), gpt5)).toEqual([]);
  });

  it("Gemini: reasoning off on 2.5 Pro (it only works thinking) is its least budget, named; 2.5 Flash turns it off", () => {
    expect(sent(gemini, { reasoning: { enabled: false } }, geminiPro).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 128, includeThoughts: false });
    expect(gemini.leftOut(req({ reasoning: { enabled: false } }), geminiPro)).toEqual(["reasoning"]);
    expect(sent(gemini, { reasoning: { enabled: false } }, geminiFlash).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
  });
});

describe("forced tool use refused while thinking", () => {
  it.each([
    { name: "required, always thinking", endpoint: opus55, ask: { tool_choice: "required" }, want: { type: "auto" }, named: ["tool_choice"] },
    {
      name: "a named tool, always thinking",
      endpoint: opus55,
      ask: { tool_choice: { type: "function", function: { name: "f" } } },
      want: { type: "auto" },
      named: ["tool_choice"],
    },
    { name: "auto stays auto", endpoint: opus55, ask: { tool_choice: "auto" }, want: { type: "auto" }, named: [] },
    { name: "none stays none", endpoint: opus55, ask: { tool_choice: "none" }, want: { type: "none" }, named: [] },
    {
      name: "required with reasoning asked (Sonnet 4.5)",
      endpoint: sonnet,
      ask: { tool_choice: "required", reasoning: { effort: "low" } },
      want: { type: "auto" },
      named: ["tool_choice"],
    },
    { name: "required without reasoning (Sonnet 4.5): forced, as asked", endpoint: sonnet, ask: { tool_choice: "required" }, want: { type: "any" }, named: [] },
    {
      name: "parallel calls off kept on the relaxed choice",
      endpoint: opus55,
      ask: { tool_choice: "required", parallel_tool_calls: false },
      want: { type: "auto", disable_parallel_tool_use: true },
      named: ["tool_choice"],
    },
  ])("Anthropic: $name", ({ endpoint, ask, want, named }) => {
    expect(sent(anthropicMessages, { tools, ...ask }, endpoint).tool_choice).toEqual(want);
    expect(anthropicMessages.leftOut(req({ tools, ...ask }), endpoint)).toEqual(named);
  });

  it("OpenAI and Gemini read the same capability", () => {
    expect(sent(openAiChat, { tools, tool_choice: "required" }, gpt6).tool_choice).toBe("auto");
    expect(openAiChat.leftOut(req({ tools, tool_choice: "required" }), gpt6)).toEqual(["tool_choice"]);
    expect(sent(openAiChat, { tools, tool_choice: "required" }, gpt5).tool_choice).toBe("required");
    const refusing: PricedEndpoint = { ...geminiPro, refuses_forced_tool_choice: true };
    expect(sent(gemini, { tools, tool_choice: "required" }, refusing).toolConfig).toEqual({ functionCallingConfig: { mode: "AUTO" } });
    expect(sent(gemini, { tools, tool_choice: "required" }, geminiPro).toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });
  });
});

describe("signed thinking bound to the model that made it", () => {
  const turn = (details: Json[]) => ({
    messages: [
      { role: "user", content: "go" },
      { role: "assistant", content: null, reasoning_details: details, tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "t1", content: "done" },
    ],
    tools,
  });
  const anthropicFormat = { format: "anthropic-claude-v1", index: 0 };
  it.each([
    {
      name: "its own signature: byte for byte",
      endpoint: opus55,
      detail: { type: "reasoning.text", text: "plan", signature: "S+/=", signed_by: "claude-opus-5-5", ...anthropicFormat },
      want: [{ type: "thinking", thinking: "plan", signature: "S+/=" }],
    },
    {
      name: "its own, display omitted (empty text): byte for byte",
      endpoint: opus55,
      detail: { type: "reasoning.text", text: "", signature: "S1", signed_by: "claude-opus-5-5", ...anthropicFormat },
      want: [{ type: "thinking", thinking: "", signature: "S1" }],
    },
    {
      name: "another model's, readable: its text as plain text, no signature",
      endpoint: opus55,
      detail: { type: "reasoning.text", text: "plan", signature: "S2", signed_by: "claude-sonnet-4-5-20250929", ...anthropicFormat },
      want: [{ type: "text", text: "plan" }],
    },
    {
      name: "another model's, empty: left out",
      endpoint: sonnet,
      detail: { type: "reasoning.text", text: "", signature: "S3", signed_by: "claude-opus-5-5", ...anthropicFormat },
      want: [],
    },
    {
      name: "another model's redacted thinking: left out",
      endpoint: sonnet,
      detail: { type: "reasoning.encrypted", data: "R", signed_by: "claude-opus-5-5", ...anthropicFormat },
      want: [],
    },
    {
      name: "unknown origin on a model that binds: plain text",
      endpoint: opus55,
      detail: { type: "reasoning.text", text: "plan", signature: "S4", ...anthropicFormat },
      want: [{ type: "text", text: "plan" }],
    },
    {
      name: "unknown origin on a model that does not bind: passed on as before",
      endpoint: sonnet,
      detail: { type: "reasoning.text", text: "plan", signature: "S5", ...anthropicFormat },
      want: [{ type: "thinking", thinking: "plan", signature: "S5" }],
    },
    {
      name: "another carrier's format (a Gemini thought signature): never sent to Anthropic",
      endpoint: sonnet,
      detail: { type: "reasoning.encrypted", data: "G", format: "google-gemini-v1", id: "t1", index: 0 },
      want: [],
    },
  ])("Anthropic: $name", ({ endpoint, detail, want }) => {
    const body = sent(anthropicMessages, turn([detail]), endpoint);
    expect(body.messages[1].content).toEqual([...want, { type: "tool_use", id: "t1", name: "f", input: {} }]);
  });

  it("Gemini 3 (a signature required on a turn's calls, its own only): calls another carrier made get Google's skip-validation signature; its own go back as they came", () => {
    const gemini3: PricedEndpoint = { ...geminiPro, upstream_model: "gemini-3-pro-preview", thinking_always_on: true, thinking_bound_to_model: true };
    const anthropicTurn = turn([
      { type: "reasoning.text", text: "plan", signature: "S", signed_by: "claude-opus-5-5", format: "anthropic-claude-v1", index: 0 },
    ]);
    expect(sent(gemini, anthropicTurn, gemini3).contents[1].parts).toEqual([
      { functionCall: { name: "f", args: {} }, thoughtSignature: "skip_thought_signature_validator" },
    ]);
    // Gemini 2.5 requires none: nothing added.
    expect(sent(gemini, anthropicTurn, geminiPro).contents[1].parts).toEqual([{ functionCall: { name: "f", args: {} } }]);
    const own = turn([{ type: "reasoning.encrypted", data: "G1", id: "t1", format: "google-gemini-v1", index: 0 }]);
    expect(sent(gemini, own, gemini3).contents[1].parts).toEqual([{ functionCall: { name: "f", args: {} }, thoughtSignature: "G1" }]);
  });

  it("/messages: the signer travels with the signature its caller keeps, and is read back off it (the carrier's bytes unchanged)", () => {
    const answer = {
      choices: [
        {
          message: {
            content: "ok",
            reasoning_details: [
              { type: "reasoning.text", text: "t", signature: "S+/=", format: "anthropic-claude-v1", index: 0, signed_by: "claude-opus-5-5" },
              { type: "reasoning.encrypted", data: "G", format: "google-gemini-v1", index: 1 },
              { type: "reasoning.text", text: "u", signature: "plain", format: "anthropic-claude-v1", index: 2 },
            ],
          },
        },
      ],
    };
    const blocks = contentBlocks(answer as never);
    expect(blocks[0]).toMatchObject({ type: "thinking", thinking: "t" });
    expect(blocks[0]!.signature).toMatch(/^swyo1\.[A-Za-z0-9_-]+\.S\+\/=$/);
    expect(blocks[2]).toEqual({ type: "thinking", thinking: "u", signature: "plain" });
    const back = chatFromMessages({
      model: "m",
      max_tokens: 10,
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: blocks },
      ],
    });
    expect((back.messages as Json[])[1]!.reasoning_details).toEqual([
      { type: "reasoning.text", text: "t", signature: "S+/=", format: "anthropic-claude-v1", index: 0, signed_by: "claude-opus-5-5" },
      { type: "reasoning.encrypted", data: "G", format: "google-gemini-v1", index: 1 },
      { type: "reasoning.text", text: "u", signature: "plain", format: "anthropic-claude-v1", index: 2 },
    ]);
  });
});
