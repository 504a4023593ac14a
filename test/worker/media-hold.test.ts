import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { chat, generation, newAccount, recorded, settled } from "./helpers";
import { dataUrlOf, pdf, wav } from "./media-fixtures";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

// Media held at what it can cost (docs/money.md, Media): a part the router cannot measure (a file by URL)
// at the most the endpoint can bill for it, its whole context; a part carried inline at its measured size
// at the carrier's published rates. The simulator bills as the carriers do: a PDF by its pages (fetching
// one given by URL), a WAV by its seconds.
const catalog = Catalog.parse(catalogJson);
const SONNET = "anthropic/claude-sonnet-4.5";
const FLASH = "google/gemini-2.5-flash";
type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);
const sonnet = catalog.endpoints(SONNET)[0]!;
const asking = (text: string, part: object, model = SONNET) => ({
  model,
  max_tokens: 100,
  messages: [{ role: "user", content: [{ type: "text", text }, part] }],
});

describe("a file given by URL is held at the whole context", () => {
  it("the reviewer's case: 8 parallel requests with a 40-page PDF by URL on a $0.10 key ($1 of credits): each refused, nothing spent", async () => {
    // 40 pages × 4,600 tokens: 184,000 prompt tokens billed (≈ $0.55 each) — it used to be held as 3,000.
    const a = await newAccount(1, 0.1);
    const url = `${env.CARRIER_BASE_URL_OVERRIDE}/__sim/pdf?pages=40`;
    const body = asking("Summarize it. [sim tokens=50]", { type: "file", file: { filename: "report.pdf", file_data: url } });
    const responses = await Promise.all(Array.from({ length: 8 }, () => chat(a.key, body)));
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Json[];
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(402));
    for (const b of bodies) {
      expect(b.error.message).toMatch(/^Prompt tokens limit exceeded: 200000 > \d+\./);
      expect(b.error.metadata).toMatchObject({ limit_source: "key_limit", prompt_tokens: sonnet.context_length });
    }
    const t = await settled(a.accountId);
    expect(t.total_usage).toBe(0);
    expect((await recorded(a.accountId, 8)).usage_nano).toBe(0);
  });

  it("a balance that pays for the whole context runs it (one nano-dollar less does not), and the carrier's bill for its pages stays within the hold", async () => {
    const url = `${env.CARRIER_BASE_URL_OVERRIDE}/__sim/pdf?pages=10`;
    const body = asking("Summarize it. [sim tokens=50]", { type: "file", file: { filename: "report.pdf", file_data: url } });
    const hold = sonnet.context_length * sonnet.cacheWrite1hNano + 100 * sonnet.outputNano;
    const short = await newAccount((hold - 1) / 1e9);
    expect((await chat(short.key, body)).status).toBe(402);
    const a = await newAccount(hold / 1e9);
    const res = await chat(a.key, body);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as Json;
    expect(answer.usage.prompt_tokens).toBeGreaterThan(10 * 4600); // billed by its pages
    expect(nano(answer.usage.cost)).toBeLessThanOrEqual(hold);
    expect(nano((await settled(a.accountId)).balance)).toBeGreaterThanOrEqual(0);
  });
});

describe("a part carried inline is held at its measured size", () => {
  it("a 3-page PDF: held at 3 pages × the published rate (not at its base64 bytes), and billed within that", async () => {
    const file = { type: "file", file: { filename: "a.pdf", file_data: dataUrlOf("application/pdf", pdf(3)) } };
    const body = asking("What is it? [sim tokens=20]", file);
    const text = new TextEncoder().encode(JSON.stringify(body)).byteLength - file.file.file_data.length;
    const hold = (text + 3 * 4600) * sonnet.cacheWrite1hNano + 100 * sonnet.outputNano;
    // Exactly that hold is enough: a cent less would not be (the 402 below), so the data was not held as text.
    const short = await newAccount((hold - 1) / 1e9);
    const refused = await chat(short.key, body);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as Json).error.metadata).toMatchObject({ requested_tokens: 100, affordable_tokens: 99 });
    const a = await newAccount(hold / 1e9);
    const res = await chat(a.key, body);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as Json;
    expect(answer.usage.prompt_tokens).toBeGreaterThanOrEqual(3 * 4600);
    expect(nano(answer.usage.cost)).toBeLessThanOrEqual(hold);
    const t = await settled(a.accountId);
    expect(nano(t.balance)).toBeGreaterThanOrEqual(0);
    expect(await generation(a.key, answer.id)).toMatchObject({ status: 200 });
  });

  it("Gemini audio: a 20 s WAV held at 20 s × 32 tokens, billed by its seconds", async () => {
    const flash = catalog.endpoints(FLASH)[0]!;
    const audio = { type: "input_audio", input_audio: { data: dataUrlOf("audio/wav", wav(20)).split(",")[1]!, format: "wav" } };
    const body = { ...asking("Transcribe it. [sim tokens=20]", audio, FLASH), reasoning: { enabled: false } };
    const text = new TextEncoder().encode(JSON.stringify(body)).byteLength - audio.input_audio.data.length;
    const hold = (text + 20 * 32) * Math.max(flash.inputNano, flash.cacheWriteNano) + 100 * flash.outputNano;
    const a = await newAccount(hold / 1e9);
    const res = await chat(a.key, body);
    expect(res.status, await res.clone().text()).toBe(200);
    const answer = (await res.json()) as Json;
    expect(answer.usage.prompt_tokens).toBeGreaterThanOrEqual(20 * 32);
    expect(nano(answer.usage.cost)).toBeLessThanOrEqual(hold);
  });
});
