import { describe, it, expect } from "vitest";
import { chat, newAccount, settled, user } from "./helpers";
import { readSse } from "./sse";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { holdNano } from "../../src/request/hold";
import { chatRequestSchema } from "../../src/request/chat-request";
import { measurePromptMedia } from "../../src/request/prompt-media";
import { dataUrlOf, mp4, pdf, pdfWithObjectStream, png, wav } from "./media-fixtures";

const catalog = Catalog.parse(catalogJson);
const GEMMA = "google/gemma-3-27b-it"; // image_tokens: 256
const MISTRAL = "mistralai/mistral-small-3.2-24b-instruct"; // no image_tokens: 1,600
const image = { type: "image_url", image_url: { url: "https://example.test/cat.png" } };
const withImages = (model: string, n: number, text = "What is this?") => ({
  model,
  max_tokens: 5,
  messages: [{ role: "user", content: [{ type: "text", text }, ...Array.from({ length: n }, () => image)] }],
});
/** The hold of a request as the router takes it: its media measured first. */
async function holdOf(body: object, endpoints: ReturnType<Catalog["endpoints"]>): Promise<number> {
  const parsed = chatRequestSchema.parse(body);
  return holdNano(parsed, new TextEncoder().encode(JSON.stringify(body)).byteLength, endpoints, await measurePromptMedia(parsed));
}
const hold = (body: object) => holdOf(body, catalog.endpoints((body as { model: string }).model));

describe("the hold counts image parts", () => {
  it("adds images × the model's per-image allowance × the dearest input price", async () => {
    for (const [model, allowance] of [
      [GEMMA, 256],
      [MISTRAL, 1600],
    ] as const) {
      const body = withImages(model, 3);
      const bytes = new TextEncoder().encode(JSON.stringify(body)).byteLength;
      const expected = Math.max(...catalog.endpoints(model).map((e) => bytes * e.inputNano + 5 * e.outputNano + 3 * allowance * e.inputNano));
      expect(await hold(body)).toBe(expected);
    }
  });

  it("holds at least what an image-heavy request is charged, so the overdraft bound still holds", async () => {
    const a = await newAccount(10);
    const body = withImages(MISTRAL, 20, "Describe them all. [sim tokens=5]");
    const res = await chat(a.key, body);
    expect(res.status).toBe(200);
    const charged = Math.round(((await res.json()) as { usage: { cost: number } }).usage.cost * 1e9);
    await settled(a.accountId);
    expect(charged).toBeGreaterThan(0);
    expect(await hold(body)).toBeGreaterThanOrEqual(charged);
  });

  it("a text-only request holds what it held before", async () => {
    const body = { model: MISTRAL, max_tokens: 5, ...user("plain text") };
    const bytes = new TextEncoder().encode(JSON.stringify(body)).byteLength;
    expect(await hold(body)).toBe(Math.max(...catalog.endpoints(MISTRAL).map((e) => bytes * e.inputNano + 5 * e.outputNano)));
  });
});

// A catalog of one model whose two endpoints differ in what they bill: allowances for every media kind,
// one endpoint billing reasoning beyond the cap.
const wideModel = {
  ...catalogJson.models.find((m) => m.id === GEMMA)!,
  id: "test/wide",
  input_modalities: ["text", "image", "file", "audio", "video"],
  image_tokens: 100,
  file_tokens: 3000,
  audio_tokens: 700,
  video_tokens: 9000,
  file_page_tokens: 500,
  audio_tokens_per_second: 25,
  video_tokens_per_second: 250,
  endpoints: [
    {
      provider: "deepinfra",
      upstream_model: "wide",
      input_price_per_1m: 1,
      output_price_per_1m: 2,
      context_length: 100_000,
      max_completion_tokens: 8000,
      quantization: null,
    },
    {
      provider: "nebius",
      upstream_model: "wide-r",
      input_price_per_1m: 1,
      output_price_per_1m: 2,
      context_length: 100_000,
      max_completion_tokens: 8000,
      quantization: null,
      supports_reasoning: true,
      reasoning_beyond_cap: true,
    },
  ],
};
const wide = Catalog.parse({ ...catalogJson, models: [...catalogJson.models, wideModel] });
const [plain, beyond] = wide.endpoints("test/wide");
const bytesOf = (body: object) => new TextEncoder().encode(JSON.stringify(body)).byteLength;
const holdAt = (body: object, endpoints = [plain!]) => holdOf(body, endpoints);
const price = (body: object, completion: number, extraPrompt = 0) => (bytesOf(body) + extraPrompt) * 1000 + completion * 2000;

describe("the hold covers the most a carrier may bill", () => {
  it.each([
    { name: "n choices: n × the cap", body: { n: 8, max_tokens: 50 }, completion: 8 * 50 },
    { name: "best_of larger than n: every candidate is billed", body: { n: 2, best_of: 5, max_tokens: 50 }, completion: 5 * 50 },
    { name: "both caps: the larger (a carrier may read only max_tokens)", body: { max_completion_tokens: 10, max_tokens: 200 }, completion: 200 },
    { name: "both caps, the other way round", body: { max_completion_tokens: 300, max_tokens: 20 }, completion: 300 },
    { name: "no cap: the endpoint's max completion tokens", body: {}, completion: 8000 },
    { name: "no cap, n = 3", body: { n: 3 }, completion: 3 * 8000 },
    {
      name: "a reasoning budget where reasoning stays within the cap changes nothing",
      body: { max_tokens: 100, reasoning: { max_tokens: 5000 } },
      completion: 100,
    },
  ])("$name", async ({ body, completion }) => {
    const b = { model: "test/wide", ...user("hi"), ...body };
    expect(await holdAt(b)).toBe(price(b, completion));
  });

  it.each([
    { name: "cap + the reasoning budget", body: { max_tokens: 100, reasoning: { max_tokens: 5000 } }, completion: 5100 },
    { name: "no budget: the whole context", body: { max_tokens: 100 }, completion: 100_000 },
    { name: "cap + budget, never beyond the context", body: { max_tokens: 90_000, reasoning: { max_tokens: 50_000 } }, completion: 100_000 },
    { name: "per choice", body: { n: 2, max_tokens: 100, reasoning: { max_tokens: 400 } }, completion: 2 * 500 },
  ])("an endpoint billing reasoning beyond the cap: $name", async ({ body, completion }) => {
    const b = { model: "test/wide", ...user("hi"), ...body };
    expect(await holdAt(b, [beyond!])).toBe(price(b, completion));
    expect(await holdAt(b, [plain!, beyond!])).toBe(price(b, completion)); // the dearest endpoint sets the hold
  });

  it("media parts by URL: an image at its allowance; a file, audio or video at what the carrier may bill, the whole context", async () => {
    const ask = (part: object) => ({
      model: "test/wide",
      max_tokens: 10,
      messages: [{ role: "user", content: [{ type: "text", text: "what is it?" }, part] }],
    });
    const image = ask({ type: "image_url", image_url: { url: "https://example.test/a.png" } });
    expect(await holdAt(image)).toBe(price(image, 10, 100));
    for (const part of [
      { type: "file", file: { file_data: "https://example.test/a.pdf", filename: "a.pdf" } },
      { type: "video_url", video_url: { url: "https://example.test/a.mp4" } },
      { type: "input_audio", input_audio: { data: "AAAA", format: "flac" } }, // inline, but a format the router does not read
    ])
      expect(await holdAt(ask(part))).toBe(100_000 * 1000 + 10 * 2000);
  });

  it("media parts carried inline: by their measured size at the model's rates, their bytes not counted as text", async () => {
    const data = [
      dataUrlOf("application/pdf", pdf(3)),
      dataUrlOf("application/pdf", await pdfWithObjectStream(2)),
      dataUrlOf("audio/wav", wav(2.2)).split(",")[1]!,
      dataUrlOf("video/mp4", mp4(4)),
      dataUrlOf("image/png", png(2000, 1000)),
    ];
    const parts = [
      { type: "file", file: { file_data: data[0], filename: "a.pdf" } },
      { type: "file", file: { file_data: data[1], filename: "b.pdf" } },
      { type: "input_audio", input_audio: { data: data[2], format: "wav" } },
      { type: "video_url", video_url: { url: data[3] } },
      { type: "image_url", image_url: { url: data[4] } },
    ];
    const b = { model: "test/wide", max_tokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "what is in these?" }, ...parts] }] };
    // 5 pages × 500, 3 s × 25 (2.2 rounded up), 4 s × 250, one image (no tiles on this model): its allowance.
    const media = 5 * 500 + 3 * 25 + 4 * 250 + 100;
    const inline = data.reduce((n, d) => n + d.length, 0);
    expect(await holdAt(b)).toBe(price(b, 10, media - inline));
  });

  it("a tiling carrier: an inline image held at its tiles, by its own size", async () => {
    const tiledModel = { ...wideModel, id: "test/tiled", image_tiles: { tile_px: 768, tokens_per_tile: 258, small_px: 384 } };
    const tiled = Catalog.parse({ ...catalogJson, models: [...catalogJson.models, tiledModel] }).endpoints("test/tiled");
    const ask = (url: string) => ({ model: "test/tiled", max_tokens: 10, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }] });
    const at = async (url: string) => holdOf(ask(url), [tiled[0]!]);
    const big = dataUrlOf("image/png", png(4000, 3000));
    const small = dataUrlOf("image/png", png(300, 200));
    const textOf = (url: string) => bytesOf(ask(url)) - url.length;
    expect(await at(big)).toBe((textOf(big) + 6 * 4 * 258) * 1000 + 10 * 2000); // ⌈4000/768⌉ × ⌈3000/768⌉ tiles
    expect(await at(small)).toBe((textOf(small) + 258) * 1000 + 10 * 2000);
    expect(await at("https://example.test/a.png")).toBe((bytesOf(ask("https://example.test/a.png")) + 100) * 1000 + 10 * 2000); // fetched by the carrier: the allowance
  });

  it("a catalog model taking audio must say what one audio part is estimated at, and its rate per second", () => {
    const bad = structuredClone(catalogJson) as { models: Array<{ id: string; input_modalities: string[] }> };
    bad.models.find((m) => m.id === GEMMA)!.input_modalities.push("audio");
    expect(() => Catalog.parse(bad)).toThrow(/input_modalities lists audio, so audio_tokens/);
    expect(() => Catalog.parse(bad)).toThrow(/input_modalities lists audio, so audio_tokens_per_second/);
  });
});

describe("media parts a model does not take are refused before anything is held", () => {
  it.each([
    ["input_audio", { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }, "audio"],
    ["file", { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } }, "file"],
    ["video_url", { type: "video_url", video_url: { url: "https://example.test/a.mp4" } }, "video"],
    ["image_url to a text-only model", { type: "image_url", image_url: { url: "https://example.test/a.png" } }, "image"],
  ] as const)("%s: 400 naming the modality and the model's input modalities; nothing charged", async (_name, part, modality) => {
    const a = await newAccount(10);
    const model = "meta-llama/llama-3.1-8b-instruct";
    const res = await chat(a.key, { model, messages: [{ role: "user", content: [{ type: "text", text: "hi" }, part] }] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain(`does not take ${modality} input`);
    expect(body.error.message).toContain(`${model} (input modalities: text)`);
    expect((await settled(a.accountId)).total_usage).toBe(0);
  });

  it("a fallback model that takes the part serves it", async () => {
    const a = await newAccount(10);
    const image = { type: "image_url", image_url: { url: "https://example.test/a.png" } };
    const res = await chat(a.key, {
      model: "meta-llama/llama-3.1-8b-instruct",
      models: [GEMMA],
      messages: [{ role: "user", content: [{ type: "text", text: "hi [sim tokens=2]" }, image] }],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe(GEMMA);
  });
});

describe("against a carrier that bills every field it is given (the simulator)", () => {
  const LLAMA = "meta-llama/llama-3.1-8b-instruct";
  // Streamed, unpaced: a whole answer of thousands of tokens takes the carrier no time (its non-stream pace would).
  const charged = async (body: Record<string, unknown>) => {
    const a = await newAccount(10);
    const res = await chat(a.key, { ...body, stream: true });
    expect(res.status).toBe(200);
    const usage = (await readSse(res)).filter((e): e is Record<string, any> => e !== "[DONE]" && e.usage).at(-1)!.usage as {
      cost: number;
      completion_tokens: number;
    };
    const t = await settled(a.accountId);
    expect(Math.round(t.total_usage * 1e9)).toBe(Math.round(usage.cost * 1e9));
    return { nano: Math.round(usage.cost * 1e9), completion: usage.completion_tokens };
  };

  it.each([
    { name: "n = 8", body: { n: 8, max_tokens: 50 }, directive: "[sim tokens=50]", completion: 400 },
    { name: "best_of = 6 (every candidate billed)", body: { n: 1, best_of: 6, max_tokens: 300 }, directive: "[sim tokens=300]", completion: 1800 },
    {
      name: "both caps, to a carrier that reads only max_tokens",
      body: { max_tokens: 2000, max_completion_tokens: 10 },
      directive: "[sim tokens=2000 cap_field=max_tokens]",
      completion: 2000,
    },
  ])("$name: the hold is at least what the carrier billed", async ({ body, directive, completion }) => {
    const b = { model: LLAMA, ...body, ...user(`count [sim tps=1000000] ${directive}`) };
    const bill = await charged(b);
    expect(bill.completion).toBe(completion);
    expect(await hold(b)).toBeGreaterThanOrEqual(bill.nano);
  });

  it("n choices are held: $0.000001 of credit cannot pay 8 × 100 tokens, so nothing runs and nothing is spent; enough credit runs them all", async () => {
    const body = { model: LLAMA, n: 8, max_tokens: 100, ...user("many [sim tokens=100]") };
    const poor = await newAccount(0.000001);
    const refused = await chat(poor.key, body);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/fewer max_tokens|Prompt tokens limit exceeded/);
    expect((await settled(poor.accountId)).balance).toBe(0.000001);
    const rich = await newAccount((await hold(body)) / 1e9);
    const res = await chat(rich.key, body);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(800);
    expect((await settled(rich.accountId)).balance).toBeGreaterThanOrEqual(0);
  });
});
