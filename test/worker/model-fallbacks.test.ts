import { describe, it, expect } from "vitest";
import { chat, newAccount, settled, generation, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { readSse } from "./sse";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

// `models` fallbacks end to end: which carriers the simulator saw, what was answered, billed and recorded.
const catalog = Catalog.parse(catalogJson);
const A = "mistralai/mistral-nemo"; // deepinfra, nebius
const B = "qwen/qwen3-32b"; // groq, cerebras, sambanova: no carrier in common with A
const [A1, A2] = catalog.endpoints(A);
const [B1] = catalog.endpoints(B);
type Json = Record<string, any>;

async function ask(body: Json, directives: string, headers: Record<string, string> = {}) {
  const a = await newAccount(10);
  const tag = uniqueTag();
  const res = await chat(a.key, { ...body, ...user(`hello ${directives} [sim tag=${tag}]`) }, headers);
  return { a, res, tag };
}
const outage = (...slugs: string[]) => slugs.map((s) => `[sim carrier=${s} status=503]`).join(" ");

describe("models: fallbacks across models", () => {
  it("serves with the next model when every carrier of the first fails, and names and bills that model", async () => {
    const { a, res, tag } = await ask({ model: A, models: [B] }, outage(A1!.provider, A2!.provider));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.model).toBe(B);
    expect(body.provider).toBe(B1!.providerEntry.name);
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual([A1!.provider, A2!.provider, B1!.provider]);
    // Billed at the endpoint that served: B's cheapest carrier's prices, exactly.
    const cost = body.usage.prompt_tokens * B1!.inputNano + body.usage.completion_tokens * B1!.outputNano;
    const totals = await settled(a.accountId);
    expect(Math.round(totals.total_usage * 1e9)).toBe(cost);
    const record = await generation(a.key, body.id);
    expect(record.model).toBe(B);
    expect(record.provider_name).toBe(B1!.providerEntry.name);
    expect(record.routing_strategy).toBe("fallback");
    const attempts = record.provider_responses as Json[];
    expect(attempts.map((x) => [x.model_permaslug, x.provider_name, x.status])).toEqual([
      [A, A1!.providerEntry.name, 503],
      [A, A2!.providerEntry.name, 503],
      [B, B1!.providerEntry.name, 200],
    ]);
    expect(attempts.every((x) => typeof x.latency === "number" && x.latency >= 0)).toBe(true);
  });

  it("names the serving model in every stream chunk", async () => {
    const { res, tag } = await ask({ model: A, models: [B], stream: true }, outage(A1!.provider, A2!.provider));
    expect(res.status).toBe(200);
    const events = await readSse(res);
    const chunks = events.filter((e): e is Json => e !== "[DONE]");
    expect(chunks.length).toBeGreaterThan(2);
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set([B]));
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual([A1!.provider, A2!.provider, B1!.provider]);
  });

  it("a carrier refusing the request (4xx) moves on to the same model's next carrier, then to the next model", async () => {
    const first = await ask({ models: [A, B] }, `[sim carrier=${A1!.provider} status=400]`);
    expect(first.res.status).toBe(200);
    expect(((await first.res.json()) as Json).model).toBe(A);
    expect((await simRequests(first.tag)).map((r) => r.carrier)).toEqual([A1!.provider, A2!.provider]);
    const both = await ask({ models: [A, B] }, `[sim carrier=${A1!.provider} status=400] [sim carrier=${A2!.provider} status=422]`);
    expect(both.res.status).toBe(200);
    expect(((await both.res.json()) as Json).model).toBe(B);
    expect((await simRequests(both.tag)).map((r) => r.carrier)).toEqual([A1!.provider, A2!.provider, B1!.provider]);
  });

  it("the first model that serves ends the chain; its id is echoed as sent", async () => {
    const { a, res, tag } = await ask({ models: [`${A}:floor`, B] }, "");
    const body = (await res.json()) as Json;
    expect(body.model).toBe(`${A}:floor`);
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual([A1!.provider]);
    const record = await generation(a.key, body.id);
    expect(record.model).toBe(`${A}:floor`);
    expect(record.routing_strategy).toBe("fallback");
  });

  it("the same model twice under different sorts: every carrier tried once, the record names the candidate that served", async () => {
    const { a, res, tag } = await ask({ model: `${A}:floor`, models: [A] }, outage(A1!.provider, A2!.provider));
    expect(res.status).toBe(503);
    expect((await simRequests(tag)).map((r) => r.carrier)).toEqual([A1!.provider, A2!.provider]);
    const record = await generation(a.key, res.headers.get("x-generation-id")!);
    expect((record.provider_responses as Json[]).map((x) => x.provider_name)).toEqual([A1!.providerEntry.name, A2!.providerEntry.name]);
    // Listed the other way round, the served answer names the id the first candidate was sent as.
    const served = await ask({ model: A, models: [`${A}:floor`] }, outage(A1!.provider));
    const body = (await served.res.json()) as Json;
    expect(body.model).toBe(A);
    expect((await simRequests(served.tag)).map((r) => r.carrier)).toEqual([A1!.provider, A2!.provider]);
    expect((await generation(served.a.key, body.id)).model).toBe(A);
  });

  it("when every model fails the caller gets the carriers' error, nothing is charged and the record lists every attempt", async () => {
    const { a, res } = await ask(
      { model: A, models: [B], route: "fallback", provider: { only: [A1!.provider, B1!.provider] } },
      outage(A1!.provider, B1!.provider),
    );
    expect(res.status).toBe(503);
    const body = (await res.json()) as Json;
    expect(body.error.metadata.attempts.map((x: Json) => x.provider)).toEqual([A1!.providerEntry.name, B1!.providerEntry.name]);
    expect((await settled(a.accountId)).total_usage).toBe(0);
    const record = await generation(a.key, res.headers.get("x-generation-id")!);
    expect(record.status).toBe(503);
    expect((record.provider_responses as Json[]).map((x) => x.status)).toEqual([503, 503]);
  });

  it("an unknown model in `models` is a 400 naming it; no carrier is called", async () => {
    const { res, tag } = await ask({ model: A, models: ["nobody/no-such-model"] }, "");
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toContain("nobody/no-such-model");
    expect(await simRequests(tag)).toEqual([]);
  });

  it("the hold covers the dearest candidate: a dear fallback holds enough of a key's limit to refuse the next request", async () => {
    const DEAR = "deepseek/deepseek-r1-0528"; // its dearest carrier costs ~$0.007 for 1,000 completion tokens; A's ~$0.0001
    // Limit $0.005: a request held at A's prices leaves room for another; one held at DEAR's does not.
    const a = await newAccount(10, 0.005);
    const tag = uniqueTag();
    // The first request waits on A's cheapest carrier (which hangs until the carrier timeout), holding its worst case.
    const first = chat(a.key, { model: A, models: [DEAR], max_tokens: 1000, ...user(`[sim carrier=${A1!.provider} hang] [sim tag=${tag}]`) });
    await simRequests(tag, { ms: 5000, until: "hang" });
    const second = await chat(a.key, { model: A, max_tokens: 1000, ...user("hi") });
    expect(second.status).toBe(402);
    expect(((await second.json()) as Json).error.metadata.limit_source).toBe("key_limit");
    expect((await first).status).toBe(200); // A's second carrier served it after the first timed out
  });
});

describe("routing metadata", () => {
  it("X-OpenRouter-Metadata: enabled adds openrouter_metadata with the endpoints and attempts", async () => {
    const { res } = await ask({ model: A, models: [B] }, outage(A1!.provider), { "x-openrouter-metadata": "enabled" });
    expect(res.status).toBe(200);
    const meta = ((await res.json()) as Json).openrouter_metadata;
    expect(meta.requested).toBe(A);
    expect(meta.strategy).toBe("fallback");
    expect(meta.attempt).toBe(2);
    expect(meta.attempts).toEqual([
      { provider: A1!.providerEntry.name, model: A, status: 503 },
      { provider: A2!.providerEntry.name, model: A, status: 200 },
    ]);
    expect(meta.endpoints.total).toBe(catalog.endpoints(A).length + catalog.endpoints(B).length);
    expect(meta.endpoints.available.filter((e: Json) => e.selected)).toEqual([{ model: A, provider: A2!.providerEntry.name, selected: true }]);
  });

  it("streams carry it in the last chunk before [DONE]", async () => {
    const { res } = await ask({ model: A, stream: true }, "", { "x-openrouter-metadata": "enabled" });
    const events = await readSse(res);
    expect(events.at(-1)).toBe("[DONE]");
    const last = events.at(-2) as Json;
    expect(last.openrouter_metadata.strategy).toBe("direct");
    expect(last.openrouter_metadata.attempts).toEqual([{ provider: A1!.providerEntry.name, model: A, status: 200 }]);
    expect(events.slice(0, -2).some((e) => e !== "[DONE]" && "openrouter_metadata" in e)).toBe(false);
  });

  it("is absent unless asked for, and a value other than enabled/disabled is a 400", async () => {
    const plain = await ask({ model: A }, "");
    expect("openrouter_metadata" in ((await plain.res.json()) as Json)).toBe(false);
    const bad = await ask({ model: A }, "", { "x-openrouter-metadata": "yes please" });
    expect(bad.res.status).toBe(400);
    expect(((await bad.res.json()) as Json).error.message).toContain("X-OpenRouter-Metadata");
  });
});
