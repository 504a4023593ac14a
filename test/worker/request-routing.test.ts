import { describe, it, expect } from "vitest";
import { chat, generation, newAccount, settled, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { chatWithVars } from "./with-vars";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { balanceByPrice } from "../../src/routing/price-balance";
import { routingRandom } from "../../src/routing/routing-random";
import { settings } from "../../src/settings";

// Routing that knows the request, end to end: which carriers the simulator saw, what was answered and recorded.
const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct"; // groq 131k, cerebras 32k, deepinfra 131k context
const MAVERICK = "meta-llama/llama-4-maverick"; // 1M context
const NEMO = "mistralai/mistral-nemo"; // deepinfra (cheapest) lists no tools; nebius does
const LOOKUP = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } };
type Json = Record<string, any>;

async function send(body: Json, text = "hi") {
  const a = await newAccount(10);
  const tag = uniqueTag();
  const res = await chat(a.key, { ...body, ...user(`${text} [sim tag=${tag}]`) });
  return { a, res, json: (await res.json()) as Json, carriers: async () => (await simRequests(tag)).map((r) => r.carrier) };
}

describe("context fit", () => {
  it("a request too long for every endpoint is a 400 naming the context size; nothing charged, no carrier called", async () => {
    // groq returns up to its whole context (131,072): the cap is allowed, the prompt leaves no room for it.
    const { a, res, json, carriers } = await send({ model: LLAMA, max_tokens: 131_072 });
    expect(res.status).toBe(400);
    expect(json.error.message).toMatch(/needs about \d+ tokens .*largest context of meta-llama\/llama-3\.1-8b-instruct \(131072 tokens\)/);
    expect(await carriers()).toEqual([]);
    expect((await settled(a.accountId)).total_usage).toBe(0);
    expect(await generation(a.key, res.headers.get("x-generation-id")!)).toMatchObject({ status: 400, total_cost: 0 });
  });

  it("the prompt counts too: a long prompt with a completion cap that alone would fit", async () => {
    // ~30,000 estimated prompt tokens + 8,000 completion: past cerebras's 32,768, within the others'.
    const { res, carriers } = await send({ model: LLAMA, max_tokens: 8000, provider: { order: ["cerebras"] } }, "word ".repeat(24_000));
    expect(res.status).toBe(200);
    expect((await carriers())[0]).not.toBe("cerebras");
  });

  it("endpoints whose maximum output is below the cap are not tried, even the one `order` puts first", async () => {
    // cerebras returns at most 8,192 tokens and deepinfra 16,384: neither is sent a cap it would refuse.
    const { res, json, carriers } = await send({ model: LLAMA, max_tokens: 40_000, provider: { order: ["cerebras"] } });
    expect(res.status).toBe(200);
    expect(await carriers()).toEqual(["groq"]);
    expect(json.provider).toBe("Groq");
  });

  it("a fallback model with room serves when the first has none", async () => {
    const { res, json, carriers } = await send({ model: LLAMA, models: [MAVERICK], max_tokens: 200_000 });
    expect(res.status).toBe(200);
    expect(json.model).toBe(MAVERICK);
    // Of Maverick's endpoints only the one bounded by its context alone returns 200,000 tokens.
    expect(await carriers()).toEqual([catalog.endpoints(MAVERICK).find((e) => (e.max_completion_tokens ?? e.context_length) >= 200_000)!.provider]);
  });
});

describe("tools and formats", () => {
  it("a request with tools skips the endpoint that does not support them", async () => {
    const { res, carriers } = await send({ model: NEMO, tools: [LOOKUP] });
    expect(res.status).toBe(200);
    expect(await carriers()).toEqual(["nebius"]);
  });

  it("without tools the cheapest serves as usual", async () => {
    const { carriers } = await send({ model: NEMO, response_format: { type: "json_object" } });
    expect(await carriers()).toEqual(["deepinfra"]);
  });

  it("when no endpoint lists tools, all stay (soft); require_parameters makes it a 404", async () => {
    const GEMMA = "google/gemma-3-27b-it";
    const soft = await send({ model: GEMMA, tools: [LOOKUP] });
    expect(soft.res.status).toBe(200);
    expect(await soft.carriers()).toEqual(["deepinfra"]);
    const hard = await send({ model: GEMMA, tools: [LOOKUP], provider: { require_parameters: true } });
    expect(hard.res.status).toBe(404);
    expect(await hard.carriers()).toEqual([]);
  });
});

describe("price-weighted balancing (ROUTING_BALANCE=price)", () => {
  it("the first carrier is the seeded draw's; across seeds more than one carrier leads", async () => {
    const a = await newAccount(10);
    const leads = new Set<string>();
    for (let seed = 1; seed <= 12; seed++) {
      const tag = uniqueTag();
      const vars = { ROUTING_BALANCE: "price", ROUTING_SEED: String(seed) };
      const { res } = await chatWithVars(vars, a.key, { model: LLAMA, ...user(`hi [sim tag=${tag}]`) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const first = (await simRequests(tag))[0]!.carrier;
      expect(first).toBe(balanceByPrice(catalog.endpoints(LLAMA), routingRandom(settings(vars)))[0]!.provider);
      leads.add(first);
    }
    expect(leads.size).toBeGreaterThan(1);
  });

  it("a session sticks to one carrier (its prompt cache stays warm): every request of it is drawn the same (session_id, x-session-id, Claude Code's x-claude-code-session-id or Codex's session-id); the record keeps it", async () => {
    const a = await newAccount(10);
    const vars = { ROUTING_BALANCE: "price" };
    const expected = (session: string) =>
      balanceByPrice(catalog.endpoints(LLAMA), routingRandom(settings(vars), { accountId: a.accountId, id: session }))[0]!.provider;
    for (const session of ["conv-1", "conv-2", "conv-3"]) {
      for (let i = 0; i < 8; i++) {
        const tag = uniqueTag();
        // Turns alternate the ways of naming the session: the body, x-session-id, Claude Code's x-claude-code-session-id, Codex's session-id.
        const via = i % 4;
        const body = { model: LLAMA, ...(via === 0 ? { session_id: session } : {}), ...user(`turn ${i} [sim tag=${tag}]`) };
        const header = [undefined, "x-session-id", "x-claude-code-session-id", "session-id"][via];
        const { res } = await chatWithVars(vars, a.key, body, header ? { [header]: session } : {});
        expect(res.status).toBe(200);
        const { id } = (await res.json()) as Json;
        expect((await simRequests(tag))[0]!.carrier).toBe(expected(session));
        // Each way of naming it is the session the record keeps.
        if (i < 4) expect((await generation(a.key, id)).session_id).toBe(session);
      }
    }
  });

  it("an x-session-id header over 256 characters is a 400", async () => {
    const a = await newAccount(10);
    const { res } = await chatWithVars({}, a.key, { model: LLAMA, ...user("hi") }, { "x-session-id": "s".repeat(257) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toContain("x-session-id");
  });

  it("provider.sort keeps the cheapest first whatever the draw", async () => {
    const a = await newAccount(10);
    for (let seed = 1; seed <= 6; seed++) {
      const tag = uniqueTag();
      const { res } = await chatWithVars({ ROUTING_BALANCE: "price", ROUTING_SEED: String(seed) }, a.key, {
        model: LLAMA,
        provider: { sort: "price" },
        ...user(`hi [sim tag=${tag}]`),
      });
      await res.arrayBuffer();
      expect((await simRequests(tag))[0]!.carrier).toBe(catalog.endpoints(LLAMA)[0]!.provider);
    }
  });
});
