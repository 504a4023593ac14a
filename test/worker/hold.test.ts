import { describe, it, expect } from "vitest";
import { chat, newAccount, settled, user } from "./helpers";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { holdNano } from "../../src/ledger/hold";
import { chatRequestSchema } from "../../src/api/chat-request";

const catalog = Catalog.parse(catalogJson);
const GEMMA = "google/gemma-3-27b-it"; // image_tokens: 256
const MISTRAL = "mistralai/mistral-small-3.2-24b-instruct"; // no image_tokens: 1,600
const image = { type: "image_url", image_url: { url: "https://example.test/cat.png" } };
const withImages = (model: string, n: number, text = "What is this?") =>
  ({ model, max_tokens: 5, messages: [{ role: "user", content: [{ type: "text", text }, ...Array.from({ length: n }, () => image)] }] });
const hold = (body: object) => holdNano(chatRequestSchema.parse(body), new TextEncoder().encode(JSON.stringify(body)).byteLength, catalog.endpoints((body as { model: string }).model));

describe("the hold counts image parts", () => {
  it("adds images × the model's per-image allowance × the dearest input price", () => {
    for (const [model, allowance] of [[GEMMA, 256], [MISTRAL, 1600]] as const) {
      const body = withImages(model, 3);
      const bytes = new TextEncoder().encode(JSON.stringify(body)).byteLength;
      const expected = Math.max(...catalog.endpoints(model).map((e) => bytes * e.inputNano + 5 * e.outputNano + 3 * allowance * e.inputNano));
      expect(hold(body)).toBe(expected);
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
    expect(hold(body)).toBeGreaterThanOrEqual(charged);
  });

  it("a text-only request holds what it held before", () => {
    const body = { model: MISTRAL, max_tokens: 5, ...user("plain text") };
    const bytes = new TextEncoder().encode(JSON.stringify(body)).byteLength;
    expect(hold(body)).toBe(Math.max(...catalog.endpoints(MISTRAL).map((e) => bytes * e.inputNano + 5 * e.outputNano)));
  });
});
