import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { env } from "cloudflare:test";
import bundled from "../../catalog.json";
import type { CatalogFile } from "../../src/catalog/schema";
import { CATALOG_KV_KEY, forgetCatalogMemo } from "../../src/catalog/load";
import { call, chat, newAccount } from "./helpers";
import { simRequests, uniqueTag } from "./sim";

// Signed thinking across turns and carriers (issue 37, part 4), and the newer models' wire rules as the
// simulator plays them (simulator/model-rules.ts): Claude Opus 5.5 always thinks (its 400 for
// `thinking.type.disabled`), refuses a forced tool choice while thinking, and verifies only the signatures
// it made itself (Anthropic's "Invalid `signature` in `thinking` block" otherwise).

type Json = Record<string, any>;
const OPUS = "anthropic/claude-opus-5.5";
const SONNET = "anthropic/claude-sonnet-4.5";
const SONNET_UPSTREAM = "claude-sonnet-4-5-20250929";
const GEMINI3 = "google/gemini-3-pro-preview";
const TOOLS = [{ name: "lookup", description: "Looks a word up.", input_schema: { type: "object", properties: { query: { type: "string" } } } }];

/** The bundled catalog plus Claude Opus 5.5 with the capabilities its page names (the fixture a test catalog gives it). */
function withOpus(): CatalogFile {
  const file = bundled as unknown as CatalogFile;
  const sonnet = file.models.find((m) => m.id === SONNET)!;
  const endpoint = {
    ...sonnet.endpoints[0]!,
    upstream_model: "claude-opus-5-5",
    input_price_per_1m: 4,
    output_price_per_1m: 20,
    thinking_always_on: true,
    refuses_forced_tool_choice: true,
    thinking_bound_to_model: true,
  };
  const pro = file.models.find((m) => m.id === "google/gemini-2.5-pro")!;
  const gemini3 = { ...pro.endpoints[0]!, upstream_model: "gemini-3-pro-preview", thinking_always_on: true, thinking_bound_to_model: true };
  return {
    ...file,
    models: [
      ...file.models,
      { ...sonnet, id: OPUS, canonical_slug: OPUS, name: "Anthropic: Claude Opus 5.5", endpoints: [endpoint] },
      { ...pro, id: GEMINI3, canonical_slug: GEMINI3, name: "Google: Gemini 3 Pro", endpoints: [gemini3] },
    ],
  };
}

beforeAll(async () => {
  // A request with an empty KV seeds it with the bundled catalog in waitUntil: let that land before ours.
  await call("/api/v1/providers");
  for (let i = 0; i < 100 && (await env.CATALOG.get(CATALOG_KV_KEY)) === null; i++) await new Promise((r) => setTimeout(r, 10));
  await env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(withOpus()));
  forgetCatalogMemo();
});

afterAll(async () => {
  await env.CATALOG.delete(CATALOG_KV_KEY);
  forgetCatalogMemo();
});

const headers = (key: string, extra: Record<string, string> = {}) => ({
  "x-api-key": key,
  "anthropic-version": "2023-06-01",
  "content-type": "application/json",
  ...extra,
});

async function messages(key: string, body: Json, extra: Record<string, string> = {}) {
  const res = await call("/api/v1/messages", { method: "POST", headers: headers(key, extra), body: JSON.stringify(body) });
  return { res, json: (await res.json()) as Json };
}

/** A /messages turn that asks for a tool: its answer (thinking first, then tool_use). */
async function toolTurn(key: string, model: string, extra: Json = {}) {
  const first = { role: "user", content: "look it up [sim tokens=12 tool_call]" };
  const { res, json } = await messages(key, { model, max_tokens: 4000, tools: TOOLS, messages: [first], ...extra });
  expect(res.status).toBe(200);
  return { first, json };
}

/** The next turn of a tool loop: the assistant's blocks back as they came, the tool's result, tagged at the simulator. */
function nextTurn(first: Json, answer: Json, tag: string) {
  const call = answer.content.find((b: Json) => b.type === "tool_use");
  return [
    first,
    { role: "assistant", content: answer.content },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: call.id, content: "a word" },
        { type: "text", text: `go on [sim tokens=3 tag=${tag}]` },
      ],
    },
  ];
}

describe("signed thinking round-trips on the model that signed it", () => {
  it("/messages, a two-turn tool loop on Claude Opus 5.5: the carrier gets its own signature back byte for byte", async () => {
    const { key } = await newAccount(10);
    const { first, json } = await toolTurn(key, OPUS, { thinking: { type: "adaptive" } });
    const thinking = json.content.find((b: Json) => b.type === "thinking");
    expect(thinking).toBeDefined();
    expect(json.content.map((b: Json) => b.type)).toEqual(["thinking", "tool_use"]);

    const tag = uniqueTag();
    const next = await messages(key, { model: OPUS, max_tokens: 4000, tools: TOOLS, thinking: { type: "adaptive" }, messages: nextTurn(first, json, tag) });
    expect(next.res.status).toBe(200);
    const [sent] = await simRequests(tag);
    const block = sent!.body.messages[1].content[0];
    expect(block).toEqual({ type: "thinking", thinking: thinking.thinking, signature: expect.any(String) });
    // The caller's copy names its signer before the carrier's bytes, which come back unchanged.
    expect(thinking.signature.endsWith(`.${block.signature}`)).toBe(true);
    expect(sent!.body.thinking).toEqual({ type: "adaptive", display: "summarized" });
  });

  it("/messages streamed: the signature_delta carries the same signature, and goes back the same way", async () => {
    const { key } = await newAccount(10);
    const first = { role: "user", content: "look it up [sim tokens=12 tool_call]" };
    const res = await call("/api/v1/messages", {
      method: "POST",
      headers: headers(key),
      body: JSON.stringify({ model: OPUS, max_tokens: 4000, tools: TOOLS, stream: true, messages: [first] }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as Json);
    const signature = events.find((e) => e.delta?.type === "signature_delta")!.delta.signature as string;
    const toolStart = events.find((e) => e.content_block?.type === "tool_use")!.content_block;
    const args = events
      .filter((e) => e.delta?.type === "input_json_delta")
      .map((e) => e.delta.partial_json)
      .join("");
    const answer = {
      content: [
        { type: "thinking", thinking: "", signature },
        { type: "tool_use", id: toolStart.id, name: toolStart.name, input: JSON.parse(args) },
      ],
    };
    const tag = uniqueTag();
    const next = await messages(key, { model: OPUS, max_tokens: 4000, tools: TOOLS, messages: nextTurn(first, answer, tag) });
    expect(next.res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(signature.endsWith(`.${sent!.body.messages[1].content[0].signature}`)).toBe(true);
  });

  it("/chat/completions: reasoning_details name their signer and go back to the same model byte for byte", async () => {
    const { key } = await newAccount(10);
    const tools = [{ type: "function", function: { name: "lookup", parameters: TOOLS[0]!.input_schema } }];
    const first = { role: "user", content: "look it up [sim tokens=12 tool_call]" };
    const res = await chat(key, { model: OPUS, max_tokens: 4000, reasoning: { effort: "low" }, tools, messages: [first] });
    expect(res.status).toBe(200);
    const message = ((await res.json()) as Json).choices[0].message;
    const signed = message.reasoning_details.find((d: Json) => d.signature);
    expect(signed).toMatchObject({ type: "reasoning.text", format: "anthropic-claude-v1", signed_by: "claude-opus-5-5" });
    const tag = uniqueTag();
    const next = await chat(key, {
      model: OPUS,
      max_tokens: 4000,
      reasoning: { effort: "low" },
      tools,
      messages: [first, message, { role: "tool", tool_call_id: message.tool_calls[0].id, content: "a word" }, { role: "user", content: `[sim tag=${tag}]` }],
    });
    expect(next.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.messages[1].content[0]).toEqual({ type: "thinking", thinking: signed.text, signature: signed.signature });
  });
});

describe("/responses: the sealed reasoning envelope keeps the signer", () => {
  const ask = (model: string) => ({ model, reasoning: { effort: "low" }, include: ["reasoning.encrypted_content"], max_output_tokens: 4000 });
  const responses = (key: string, body: Json) =>
    call("/api/v1/responses", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const thinkingOf = (body: Json) =>
    (body.messages as Json[]).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b: Json) => b.type === "thinking");

  it("Opus 5.5's signed thinking goes back to Opus 5.5 byte for byte, and to Sonnet 4.5 only as text", async () => {
    const { key } = await newAccount(10);
    const first = await responses(key, { ...ask(OPUS), input: "Think first [sim tokens=6]" });
    expect(first.status).toBe(200);
    const output = ((await first.json()) as Json).output as Json[];
    const summary = output.find((i) => i.type === "reasoning")!.summary[0].text as string;
    const again = (model: string, tag: string) =>
      responses(key, {
        ...ask(model),
        input: [{ role: "user", content: "Think first" }, ...output, { role: "user", content: `Go on [sim tokens=3 tag=${tag}]` }],
      });

    const same = uniqueTag();
    expect((await again(OPUS, same)).status).toBe(200);
    const [toOpus] = await simRequests(same);
    expect(thinkingOf(toOpus!.body)).toEqual({ type: "thinking", thinking: summary, signature: expect.any(String) });

    const other = uniqueTag();
    expect((await again(SONNET, other)).status).toBe(200);
    const [toSonnet] = await simRequests(other);
    expect(thinkingOf(toSonnet!.body)).toBeUndefined();
    expect(JSON.stringify(toSonnet!.body)).not.toContain(thinkingOf(toOpus!.body).signature);
    expect(toSonnet!.body.messages[1].content).toContainEqual({ type: "text", text: summary });
  });
});

describe("a conversation that moves to another model never sends it a signature it cannot verify", () => {
  it("/messages, Opus 5.5's thinking then Sonnet 4.5: the turn succeeds and Sonnet never sees Opus's signature", async () => {
    const { key } = await newAccount(10);
    const { first, json } = await toolTurn(key, OPUS);
    const signature = json.content.find((b: Json) => b.type === "thinking").signature as string;
    const tag = uniqueTag();
    const next = await messages(key, { model: SONNET, max_tokens: 4000, tools: TOOLS, messages: nextTurn(first, json, tag) });
    expect(next.res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(JSON.stringify(sent!.body)).not.toContain(signature.slice(signature.lastIndexOf(".") + 1));
    // Its thinking was shown empty (Opus 5.5's default display): nothing readable to carry, so it is left out.
    expect(sent!.body.messages[1].content.map((b: Json) => b.type)).toEqual(["tool_use"]);
  });

  it("/messages, Sonnet 4.5's readable thinking then Opus 5.5: its text goes as plain text, the signature stays behind", async () => {
    const { key } = await newAccount(10);
    const { first, json } = await toolTurn(key, SONNET, { thinking: { type: "enabled", budget_tokens: 1024 } });
    const thinking = json.content.find((b: Json) => b.type === "thinking");
    expect(thinking.thinking.length).toBeGreaterThan(0);
    const tag = uniqueTag();
    const next = await messages(key, { model: OPUS, max_tokens: 4000, tools: TOOLS, messages: nextTurn(first, json, tag) });
    expect(next.res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.messages[1].content).toEqual([{ type: "text", text: thinking.thinking }, expect.objectContaining({ type: "tool_use" })]);
    expect(JSON.stringify(sent!.body)).not.toContain('"thinking","thinking"');
  });

  it("/chat/completions through a fallback: Opus 5.5's turn, Opus failing, Sonnet 4.5 serves without Opus's signature", async () => {
    const { key } = await newAccount(10);
    const tools = [{ type: "function", function: { name: "lookup", parameters: TOOLS[0]!.input_schema } }];
    const first = { role: "user", content: "look it up [sim tokens=12 tool_call]" };
    const res = await chat(key, { model: OPUS, max_tokens: 4000, tools, messages: [first] });
    const message = ((await res.json()) as Json).choices[0].message;
    const signature = message.reasoning_details.find((d: Json) => d.signature).signature as string;
    const tag = uniqueTag();
    // Opus's carrier fails this turn (an outage of one request), so `models` falls back to Sonnet 4.5.
    const next = await chat(key, {
      models: [OPUS, SONNET],
      max_tokens: 4000,
      tools,
      messages: [
        first,
        message,
        { role: "tool", tool_call_id: message.tool_calls[0].id, content: "a word" },
        { role: "user", content: `[sim tag=${tag} outage requests=1 status=503]` },
      ],
    });
    expect(next.status).toBe(200);
    expect(((await next.json()) as Json).model).toBe(SONNET);
    const attempts = await simRequests(tag);
    expect(attempts.map((a) => a.body.model)).toEqual(["claude-opus-5-5", SONNET_UPSTREAM]);
    // Opus got its own signature back; Sonnet, which could not verify it, never saw it.
    expect(attempts[0]!.body.messages[1].content[0].signature).toBe(signature);
    expect(JSON.stringify(attempts[1]!.body)).not.toContain(signature);
  });
});

describe("a tool loop that moves to Gemini 3 (which requires its own thought signature on a turn's calls)", () => {
  it("Opus 5.5's turn then Gemini 3: the call goes with Google's skip-validation signature, never Anthropic's, and the turn succeeds", async () => {
    const { key } = await newAccount(10);
    const tools = [{ type: "function", function: { name: "lookup", parameters: TOOLS[0]!.input_schema } }];
    const first = { role: "user", content: "look it up [sim tokens=12 tool_call]" };
    const res = await chat(key, { model: OPUS, max_tokens: 4000, tools, messages: [first] });
    const message = ((await res.json()) as Json).choices[0].message;
    const signature = message.reasoning_details.find((d: Json) => d.signature).signature as string;
    const tag = uniqueTag();
    const next = await chat(key, {
      model: GEMINI3,
      max_tokens: 4000,
      tools,
      messages: [
        first,
        message,
        { role: "tool", tool_call_id: message.tool_calls[0].id, content: "a word" },
        { role: "user", content: `[sim tokens=3 tag=${tag}]` },
      ],
    });
    expect(next.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.contents[1].parts).toEqual([
      { functionCall: { name: "lookup", args: expect.any(Object) }, thoughtSignature: "skip_thought_signature_validator" },
    ]);
    expect(JSON.stringify(sent!.body)).not.toContain(signature);
  });
});

describe("Claude Opus 5.5's other wire rules, adapted", () => {
  it("thinking disabled goes as adaptive at the lowest effort (not the carrier's 400), named in the metadata", async () => {
    const { key } = await newAccount(10);
    const tag = uniqueTag();
    const { res, json } = await messages(
      key,
      { model: OPUS, max_tokens: 4000, thinking: { type: "disabled" }, messages: [{ role: "user", content: `hi [sim tokens=3 tag=${tag}]` }] },
      { "x-openrouter-metadata": "enabled" },
    );
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.thinking).toEqual({ type: "adaptive" });
    expect(sent!.body.output_config).toEqual({ effort: "low" });
    expect(json.openrouter_metadata.params.dropped_parameters).toEqual(["reasoning"]);
  });

  it("a forced tool choice goes as auto (not the carrier's 400), named in the metadata", async () => {
    const { key } = await newAccount(10);
    const tag = uniqueTag();
    const body = {
      model: OPUS,
      max_tokens: 4000,
      tools: TOOLS,
      tool_choice: { type: "any" },
      messages: [{ role: "user", content: `x [sim tokens=3 tag=${tag}]` }],
    };
    const { res, json } = await messages(key, body, { "x-openrouter-metadata": "enabled" });
    expect(res.status).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.tool_choice).toEqual({ type: "auto" });
    expect(json.openrouter_metadata.params.dropped_parameters).toEqual(["tool_choice"]);
  });

  it("under provider.require_parameters the adapting carrier is left out: a clear 404 naming why, nothing sent", async () => {
    const { key } = await newAccount(10);
    const tag = uniqueTag();
    for (const ask of [{ tool_choice: { type: "any" } }, { thinking: { type: "disabled" } }]) {
      const { res, json } = await messages(key, {
        model: OPUS,
        max_tokens: 4000,
        tools: TOOLS,
        provider: { require_parameters: true },
        messages: [{ role: "user", content: `x [sim tokens=3 tag=${tag}]` }],
        ...ask,
      });
      expect(res.status).toBe(404);
      expect(json.error.message).toMatch(/always thinks takes no reasoning off, and one may refuse a forced tool_choice/);
    }
    // Strictness about something the carrier takes as asked changes nothing.
    const plain = await messages(key, {
      model: OPUS,
      max_tokens: 4000,
      provider: { require_parameters: true },
      messages: [{ role: "user", content: `x [sim tokens=3 tag=${tag}]` }],
    });
    expect(plain.res.status).toBe(200);
    expect(await simRequests(tag)).toHaveLength(1);
  });

  it("the simulator plays the carrier: what the adapters avoid is its 400", async () => {
    const url = `${env.CARRIER_BASE_URL_OVERRIDE}/anthropic/v1/messages`;
    const post = (body: Json) =>
      fetch(url, {
        method: "POST",
        headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const base = { model: "claude-opus-5-5", max_tokens: 4000, messages: [{ role: "user", content: "hi" }] };
    const disabled = await post({ ...base, thinking: { type: "disabled" } });
    expect(disabled.status).toBe(400);
    expect(((await disabled.json()) as Json).error.message).toMatch(/"thinking.type.disabled" is not supported for this model/);
    const forced = await post({ ...base, tools: TOOLS, tool_choice: { type: "any" } });
    expect(forced.status).toBe(400);
    const foreign = await post({
      ...base,
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "", signature: "not-its-own" },
            { type: "text", text: "ok" },
          ],
        },
        { role: "user", content: "and?" },
      ],
    });
    expect(foreign.status).toBe(400);
    expect(((await foreign.json()) as Json).error.message).toMatch(/Invalid `signature` in `thinking` block/);
  });
});
