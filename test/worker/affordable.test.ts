import { describe, it, expect } from "vitest";
import { call, chat, debited, generation, newAccount, recorded, settled, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { readSse } from "./sse";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

// Only affordable requests (docs/money.md, Admission): a paid request runs only when the key's remaining
// limit and the balance can pay its worst case — or, when the caller set no completion cap, a cap the
// router lowers to what they can pay. Whatever the carrier then bills, the balance never goes below zero.
const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const GPT5 = "openai/gpt-5";
type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);
const bytesOf = (body: unknown) => new TextEncoder().encode(JSON.stringify(body)).byteLength;
const groq = catalog.endpoints(LLAMA).find((e) => e.provider === "groq")!;

describe("a request its key or balance cannot pay is refused with the figures, nothing spent", () => {
  // The reviewer's case: n = 8 and max_tokens 128,000 (its endpoint's most) on an expensive reasoning model ($10 per 1M output tokens).
  const costly = { model: GPT5, n: 8, max_tokens: 128_000, ...user("prove it [sim tokens=20]") };
  const gpt5 = catalog.endpoints(GPT5)[0]!;
  /** Completion tokens per choice that `available` pays for after the prompt (held at its byte length). */
  const affordable = (available: number) => Math.floor((available - bytesOf(costly) * gpt5.inputNano) / (8 * gpt5.outputNano));

  it("a key limited to $0.01: 402 naming the key, what was asked and what it can afford", async () => {
    const a = await newAccount(100, 0.01);
    const res = await chat(a.key, costly);
    expect(res.status).toBe(402);
    const body = (await res.json()) as Json;
    expect(body.error.message).toBe(
      `This request requires more credits, or fewer max_tokens. You requested up to 128000 tokens, but can only afford ${affordable(0.01e9)} with this API key's remaining limit. To increase, raise the key's limit at https://switchyard.test/settings/keys.`,
    );
    expect(body.error.metadata).toEqual({ limit_source: "key_limit", requested_tokens: 128_000, affordable_tokens: affordable(0.01e9) });
    const t = await settled(a.accountId);
    expect(t.total_usage).toBe(0);
    const g = await generation(a.key, res.headers.get("x-generation-id")!);
    expect(g).toMatchObject({ status: 402, total_cost: 0 });
  });

  it("an account holding $0.000001: 402 naming the credits page, and the balance stays exactly where it was", async () => {
    const a = await newAccount(0.000001);
    const res = await chat(a.key, costly);
    expect(res.status).toBe(402);
    const body = (await res.json()) as Json;
    // Not even the prompt: $0.000001 pays for 0 of its tokens at $1.25 per 1M.
    expect(body.error.message).toMatch(/^Prompt tokens limit exceeded: \d+ > 0\. .*the balance pays for 0\. .*https:\/\/switchyard\.test\/settings\/credits/);
    expect(body.error.metadata).toMatchObject({ limit_source: "credits", prompt_tokens: bytesOf(costly), affordable_prompt_tokens: 0 });
    expect((await settled(a.accountId)).balance).toBe(0.000001);
  });

  it("the caller's own cap is never lowered: a balance short of it is a 402, one that covers it runs as asked", async () => {
    const body = { model: LLAMA, max_tokens: 5000, provider: { only: ["groq"] }, ...user(`go [sim tokens=10 tag=${uniqueTag()}]`) };
    const hold = bytesOf(body) * groq.inputNano + 5000 * groq.outputNano;
    const short = await newAccount((hold - 1) / 1e9);
    const refused = await chat(short.key, body);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as Json).error.metadata).toEqual({ limit_source: "credits", requested_tokens: 5000, affordable_tokens: 4999 });
    const enough = await newAccount(hold / 1e9);
    const res = await chat(enough.key, body);
    expect(res.status).toBe(200);
    const g = await generation(enough.key, res.headers.get("x-generation-id")!);
    expect(g.adjusted_max_tokens).toBeNull();
  });
});

describe("a balance that pays for some of a request's carriers", () => {
  it("runs on those; should they fail, the error names the others as not tried for lack of money", async () => {
    // max_tokens 5,000: ≈ $0.00025 at deepinfra, $0.0004 at groq, $0.0005 at cerebras; $0.0003 pays only the first.
    const a = await newAccount(0.0003);
    const ok = await chat(a.key, { model: LLAMA, max_tokens: 5000, ...user("x [sim tokens=5]") });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Json).provider).toBe("DeepInfra");
    const b = await newAccount(0.0003);
    const res = await chat(b.key, { model: LLAMA, max_tokens: 5000, ...user("x [sim carrier=deepinfra status=503]") });
    expect(res.status).toBe(503);
    const attempts = ((await res.json()) as Json).error.metadata.attempts as Json[];
    expect(attempts.map((x) => x.provider).sort()).toEqual(["Cerebras", "DeepInfra", "Groq"]);
    for (const skipped of attempts.filter((x) => x.provider !== "DeepInfra")) expect(skipped.reason).toMatch(/^not tried: the balance/);
    expect((await settled(b.accountId)).total_usage).toBe(0);
  });
});

describe("a balance below the worst case, without a cap from the caller: the router sets the cap it can pay", () => {
  it("the carrier gets max_tokens = what the balance pays for; the record and the routing metadata name it; nothing goes below zero", async () => {
    const a = await newAccount(0.001);
    const tag = uniqueTag();
    const body = { model: LLAMA, provider: { only: ["groq"] }, ...user(`go [sim tokens=30 tag=${tag}]`) };
    const cap = Math.floor((1_000_000 - bytesOf(body) * groq.inputNano) / groq.outputNano);
    expect(cap).toBeLessThan(groq.max_completion_tokens!); // groq's own maximum (131,072) is ≈ $0.0105: more than the balance
    const res = await chat(a.key, body, { "x-openrouter-metadata": "enabled" });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as Json;
    expect(answer.openrouter_metadata.params).toEqual({ adjusted_parameters: { max_tokens: cap } });
    const [sent] = await simRequests(tag);
    expect(sent!.body.max_tokens).toBe(cap);
    const t = await debited(a.accountId);
    expect(nano(t.balance)).toBeGreaterThanOrEqual(0);
    expect(await generation(a.key, answer.id)).toMatchObject({ status: 200, adjusted_max_tokens: cap, provider_name: groq.providerEntry.name });
  });

  it("streamed, the same: the cap goes to the carrier and the stream's metadata chunk names it", async () => {
    const a = await newAccount(0.001);
    const tag = uniqueTag();
    const body = { model: LLAMA, stream: true, provider: { only: ["groq"] }, ...user(`go [sim tokens=30 tag=${tag}]`) };
    const cap = Math.floor((1_000_000 - bytesOf(body) * groq.inputNano) / groq.outputNano);
    const events = await readSse(await chat(a.key, body, { "x-openrouter-metadata": "enabled" }));
    const metadata = events.find((e): e is Json => e !== "[DONE]" && e.openrouter_metadata)!.openrouter_metadata;
    expect(metadata.params).toEqual({ adjusted_parameters: { max_tokens: cap } });
    expect((await simRequests(tag))[0]!.body.max_tokens).toBe(cap);
  });

  it("a cap of what is left runs the answer to that cap (finish_reason length), and the balance ends at what the carrier billed", async () => {
    const a = await newAccount(0.00001); // 10,000 nano-USD
    const tag = uniqueTag();
    const body = { model: LLAMA, provider: { only: ["groq"] }, ...user(`go [sim tokens=500 tag=${tag}]`) };
    const cap = Math.floor((10_000 - bytesOf(body) * groq.inputNano) / groq.outputNano);
    expect(cap).toBeGreaterThan(0);
    expect(cap).toBeLessThan(500);
    const res = await chat(a.key, body);
    const answer = (await res.json()) as Json;
    expect(answer.choices[0].finish_reason).toBe("length");
    expect(answer.usage.completion_tokens).toBe(cap);
    const t = await debited(a.accountId);
    expect(nano(t.total_usage)).toBe(nano(answer.usage.cost));
    expect(nano(t.balance)).toBeGreaterThanOrEqual(0);
  });

  it("free models are untouched: no cap set, at any balance", async () => {
    const a = await newAccount(0);
    const tag = uniqueTag();
    const res = await chat(a.key, { model: "openai/gpt-oss-20b:free", ...user(`x [sim tag=${tag}]`) });
    expect(res.status).toBe(200);
    expect((await simRequests(tag))[0]!.body.max_tokens).toBeUndefined();
  });
});

describe("the overdraft bound under 120 parallel requests", () => {
  // Requests whose bill comes close to their hold (the carrier writes up to the cap, on one carrier) —
  // without a cap (the router lowers it), with one, streamed, n = 2 — on one account, all at once: each is
  // admitted within what is left or refused, so the balance and the key's budget never go below zero
  // (before, one request past what was left was admitted at its whole hold).
  const bodies = (tag: string): Json[] =>
    Array.from({ length: 120 }, (_, i) => {
      const base = { model: LLAMA, provider: { only: ["groq"] }, ...user(`request ${i} [sim tokens=5000 tag=${tag}]`) };
      if (i >= 90) return base; // the last quarter without a cap
      if (i % 3 === 0) return { ...base, max_tokens: 5000 };
      if (i % 3 === 1) return { ...base, max_tokens: 5000, stream: true };
      return { ...base, max_tokens: 2500, n: 2 };
    });

  async function run(a: { key: string; accountId: string }) {
    const tag = uniqueTag();
    const responses = await Promise.all(bodies(tag).map((b) => chat(a.key, b)));
    const statuses = responses.map((r) => r.status);
    const texts = await Promise.all(responses.map((r) => r.text()));
    // Anything but 200 or 402 is shown whole, so a failure says what was answered.
    const unexpected = texts.flatMap((text, i) => (statuses[i] === 200 || statuses[i] === 402 ? [] : [{ status: statuses[i], text: text.slice(0, 600) }]));
    const t = await settled(a.accountId, 20_000);
    return { statuses, unexpected, t, audit: await recorded(a.accountId, 120) };
  }

  it("an account with $0.004 (about ten of them at their worst case): 200 or 402 only, the balance ≥ 0, usage = Σ records", async () => {
    const a = await newAccount(0.004);
    const { statuses, unexpected, t, audit } = await run(a);
    expect(unexpected).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 402).length).toBeGreaterThan(0);
    expect(nano(t.balance)).toBeGreaterThanOrEqual(0);
    expect(audit.usage_nano).toBe(audit.records_cost_nano);
    expect(audit.usage_nano).toBeLessThanOrEqual(audit.credits_nano);
  });

  it("a key limited to $0.002 on a rich account: its usage never passes the limit", async () => {
    const a = await newAccount(100, 0.002);
    const { statuses, unexpected, audit } = await run(a);
    expect(unexpected).toEqual([]);
    expect(statuses.filter((s) => s === 402).length).toBeGreaterThan(0);
    expect(audit.usage_nano).toBe(audit.records_cost_nano);
    expect(audit.usage_nano).toBeLessThanOrEqual(0.002e9);
    expect(audit.usage_nano).toBeGreaterThan(0);
  });
});

describe("in every caller protocol", () => {
  const post = (path: string, key: string, body: unknown) =>
    call(`/api/v1${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

  it("/messages (max_tokens is required there): Anthropic's error shape, with the figures", async () => {
    const a = await newAccount(0.01); // pays the prompt, not 32,000 tokens at $5 per 1M
    const res = await post("/messages", a.key, { model: "anthropic/claude-haiku-4.5", max_tokens: 32_000, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(402);
    const body = (await res.json()) as Json;
    expect(body.type).toBe("error");
    expect(body.error.message).toMatch(
      /^This request requires more credits, or fewer max_tokens\. You requested up to 32000 tokens, but can only afford \d+\./,
    );
  });

  it("/responses without max_output_tokens: the cap the balance pays for, sent to the carrier and recorded", async () => {
    const a = await newAccount(0.001);
    const tag = uniqueTag();
    const res = await post("/responses", a.key, { model: LLAMA, provider: { only: ["groq"] }, input: `go [sim tokens=30 tag=${tag}]` });
    expect(res.status, await res.clone().text()).toBe(200);
    const cap = (await simRequests(tag))[0]!.body.max_tokens as number;
    expect(cap).toBeGreaterThan(0);
    expect(cap).toBeLessThan(groq.max_completion_tokens!);
    expect(await generation(a.key, res.headers.get("x-generation-id")!)).toMatchObject({ inbound_api: "responses", adjusted_max_tokens: cap });
  });
});
