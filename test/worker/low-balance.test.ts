import { describe, it, expect } from "vitest";
import { chat, newAccount, settled, user } from "./helpers";
import { chatWithVars } from "./with-vars";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { holdNano } from "../../src/request/hold";
import { NO_MEDIA } from "../../src/request/prompt-media";
import { chatRequestSchema } from "../../src/request/chat-request";

// A positive balance admits, however small against one request's hold; a key's budget counts no hold of
// a request that has ended. Both used to be refused because the ledger still saw money an idle slice or
// a finished request's hold kept, until a settle batch reached it.
const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const OSS = "openai/gpt-oss-20b";
type Json = Record<string, any>;
const holdOf = (body: Json) =>
  holdNano(chatRequestSchema.parse(body), new TextEncoder().encode(JSON.stringify(body)).byteLength, catalog.endpoints(body.model), NO_MEDIA);

describe("a positive balance below one hold", () => {
  it("admits request after request, each held at what can still be paid (its completion cap lowered): the balance never goes below zero", async () => {
    const a = await newAccount(0.004);
    const body = { model: LLAMA, ...user("hello [sim tokens=3]") };
    expect(holdOf(body)).toBeGreaterThan(0.01e9); // no max_tokens: the whole context, ≈ $0.0105
    for (let i = 0; i < 4; i++) {
      const res = await chat(a.key, body);
      expect(res.status, `request ${i + 1}: ${await res.clone().text()}`).toBe(200);
    }
    const t = await settled(a.accountId);
    expect(t.balance).toBeGreaterThan(0);
    expect(t.total_usage).toBeGreaterThan(0);
  });
});

describe("a key's budget", () => {
  it("counts no hold of a request that has ended, even while its settle waits in the isolate's batch", async () => {
    const a = await newAccount(10, 0.05);
    // A settle window of 2 s: each request's settle still waits in the batch when the next one arrives.
    const vars = { SETTLE_WINDOW_MS: "2000" };
    const failing = { model: OSS, ...user("x [sim status=503]") };
    expect(holdOf(failing) * 3).toBeGreaterThan(0.05e9); // three of its holds exceed the budget
    const runs = [];
    for (let i = 0; i < 3; i++) {
      const run = await chatWithVars(vars, a.key, failing);
      expect(run.res.status).toBe(503);
      runs.push(run);
    }
    for (const free of [
      { model: `${OSS}:free`, ...user("x") },
      { model: OSS, ...user("x [sim tokens=2]") },
    ]) {
      const run = await chatWithVars(vars, a.key, free);
      const body = (await run.res.json()) as Json;
      expect(run.res.status, JSON.stringify(body)).toBe(200);
      runs.push(run);
    }
    await Promise.all(runs.map((r) => r.settled()));
    expect((await settled(a.accountId)).total_usage).toBeGreaterThan(0);
  });
});
