import { describe, it, expect } from "vitest";
import { chat, debited, generation, newAccount, settled, WEATHER_TOOLS } from "../helpers";
import { readSse } from "../sse";
import { simRequests, uniqueTag } from "../sim";
import catalogJson from "../../../catalog.json";
import { Catalog, type PricedEndpoint } from "../../../src/catalog/catalog";
import { costNano } from "../../../src/catalog/money";
import { CARRIER_PROTOCOLS, carrierProtocol } from "../../../src/protocols/outbound";

// The carrier conformance suite: every carrier protocol registered in src/protocols/outbound/index.ts runs
// the same table of behaviours end to end — the app's request builder, the carrier's wire as the simulator
// plays it, the answer reader and the stream decoder — with the caller fixed (Chat Completions) and the
// request routed to one endpoint of the catalog that speaks the protocol: text, stream, tools (whole and
// streamed), a carrier error, the carrier's refusal of a request, and usage (the tokens shown are those
// recorded, priced at the endpoint's prices, and debited). A registered protocol that no catalog model is
// served in fails the suite: a new protocol is proven by a catalog entry the simulator plays.

type Json = Record<string, any>;
const catalog = Catalog.parse(catalogJson);
const nano = (usd: number) => Math.round(usd * 1e9);

/** The first endpoint of a chat model with tools that the protocol serves (no `:free` or `:batch` variant, which have limits of their own). */
function endpointSpeaking(protocol: string): { model: string; endpoint: PricedEndpoint } | undefined {
  for (const m of catalog.models) {
    if (m.id.includes(":") || !m.output_modalities.includes("text") || !m.supported_parameters.includes("tools")) continue;
    const endpoint = catalog.endpoints(m.id).find((e) => carrierProtocol(e).name === protocol);
    if (endpoint) return { model: m.id, endpoint };
  }
  return undefined;
}

describe.each(Object.keys(CARRIER_PROTOCOLS))("carrier protocol %s", (protocol) => {
  const served = endpointSpeaking(protocol);
  const { model, endpoint } = served ?? { model: "", endpoint: undefined as unknown as PricedEndpoint };
  /** A request for this protocol's endpoint only. */
  const ask = (key: string, body: Json) => chat(key, { model, max_tokens: 60, provider: { order: [endpoint.provider], allow_fallbacks: false }, ...body });

  /** The record's cost at the endpoint's prices, from the record's own tokens (cache reads and writes as it split them). */
  const priced = (g: Json) =>
    costNano(
      {
        promptTokens: g.tokens_prompt,
        completionTokens: g.tokens_completion,
        cachedTokens: g.native_tokens_cached,
        cacheWriteTokens: g.native_tokens_cache_write,
        cacheWrite1hTokens: 0,
      },
      endpoint,
    );

  it("is served by a model of the catalog, which the simulator plays", () => {
    expect(served, `no catalog model is served in ${protocol}`).toBeDefined();
  });

  it("text: the carrier is asked in its protocol; the answer's text, usage and cost are read from its wire, recorded and debited", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await ask(a.key, { messages: [{ role: "user", content: `${tag} Name three rivers [sim tokens=7 tag=${tag}]` }] });
    expect(res.status).toBe(200);
    const json = (await res.json()) as Json;
    expect(json.choices[0].message.content).toMatch(/\S/);
    expect(json.choices[0].finish_reason).toBe("stop");
    expect(json.provider).toBe(endpoint.providerEntry.name);
    const sent = await simRequests(tag);
    expect(sent.map((r) => [r.carrier, r.protocol])).toEqual([[endpoint.provider, protocol]]);
    const g = await generation(a.key, json.id);
    expect([g.tokens_prompt, g.tokens_completion]).toEqual([json.usage.prompt_tokens, json.usage.completion_tokens]);
    expect(g.tokens_completion).toBeGreaterThan(0);
    expect(nano(g.total_cost as number)).toBe(priced(g));
    expect(nano(json.usage.cost)).toBe(priced(g));
    expect(nano((await debited(a.accountId)).total_usage)).toBe(priced(g));
  });

  it("stream: its events decoded into chunks, to the end, with the usage recorded and debited", async () => {
    const a = await newAccount(10);
    const res = await ask(a.key, { stream: true, messages: [{ role: "user", content: `${uniqueTag()} Name three rivers [sim tokens=7]` }] });
    expect(res.status).toBe(200);
    const events = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.filter((e): e is Json => e !== "[DONE]");
    expect(chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join("")).toMatch(/\S/);
    expect(chunks.some((c) => c.choices?.[0]?.finish_reason === "stop")).toBe(true);
    const usage = chunks.find((c) => c.usage)!.usage;
    const g = await generation(a.key, chunks[0]!.id);
    expect([g.streamed, g.tokens_prompt, g.tokens_completion]).toEqual([true, usage.prompt_tokens, usage.completion_tokens]);
    expect(nano(g.total_cost as number)).toBe(priced(g));
    expect(nano((await debited(a.accountId)).total_usage)).toBe(priced(g));
  });

  it("tools: the request's tools reach the carrier in its protocol, and its call comes back as the caller's tool call", async () => {
    const a = await newAccount(10);
    const res = await ask(a.key, { tools: WEATHER_TOOLS, messages: [{ role: "user", content: `${uniqueTag()} Weather in Paris? [sim tool_call]` }] });
    expect(res.status).toBe(200);
    const choice = ((await res.json()) as Json).choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    const call = choice.message.tool_calls[0];
    expect([call.type, call.function.name, typeof JSON.parse(call.function.arguments)]).toEqual(["function", "get_weather", "object"]);
  });

  it("tools, streamed: the call's name and arguments decoded from its stream", async () => {
    const a = await newAccount(10);
    const res = await ask(a.key, {
      stream: true,
      tools: WEATHER_TOOLS,
      messages: [{ role: "user", content: `${uniqueTag()} Weather in Paris? [sim tool_call]` }],
    });
    expect(res.status).toBe(200);
    const chunks = (await readSse(res)).filter((e): e is Json => e !== "[DONE]");
    const calls = chunks.flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls.find((c: Json) => c.function?.name)?.function.name).toBe("get_weather");
    expect(typeof JSON.parse(calls.map((c: Json) => c.function?.arguments ?? "").join(""))).toBe("object");
    expect(chunks.some((c) => c.choices?.[0]?.finish_reason === "tool_calls")).toBe(true);
  });

  it("a carrier error: its error answer is read as a failure (502, the carrier's status named), recorded, nothing charged", async () => {
    const a = await newAccount(10);
    const res = await ask(a.key, { messages: [{ role: "user", content: `${uniqueTag()} x [sim status=500]` }] });
    expect(res.status).toBe(502);
    const body = (await res.json()) as Json;
    expect(body.error.message).toMatch(/simulated 500/);
    expect(body.error.metadata.attempts.map((x: Json) => x.status)).toEqual([500]);
    expect(await generation(a.key, res.headers.get("x-generation-id")!)).toMatchObject({ status: 502, total_cost: 0 });
    expect((await settled(a.accountId)).total_usage).toBe(0);
  });

  it("the carrier's refusal: its 400 is the caller's 400 with the carrier's reason, recorded, nothing charged", async () => {
    const a = await newAccount(10);
    const res = await ask(a.key, { messages: [{ role: "user", content: `${uniqueTag()} x [sim status=400]` }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toMatch(/rejected the request: HTTP 400: simulated 400/);
    expect(await generation(a.key, res.headers.get("x-generation-id")!)).toMatchObject({ status: 400, total_cost: 0 });
    expect((await settled(a.accountId)).total_usage).toBe(0);
  });
});
