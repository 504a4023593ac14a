import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { call, newAccount } from "./helpers";
import { syntheticRecord } from "./synthetic-record";
import { newGenerationId } from "../../src/generations/generation-id";
import type { LedgerObject } from "../../src/ledger/ledger-object";

// A 402 says which limit ran out. Here the balance is not spent: a request in flight holds all of it
// (admitted in the account's ledger, not yet settled). Every inbound API's 402 says the balance is held
// for requests in flight (retry when they finish), not that it "is at or below zero".
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const post = (path: string, key: string, body: unknown) =>
  call(`/api/v1${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("402 when requests in flight hold the balance", () => {
  it("chat, messages and responses each say the balance is held, not spent", async () => {
    const { accountId, key } = await newAccount(1);
    const genId = newGenerationId(Date.now());
    const held = await runInDurableObject(env.LEDGER.get(env.LEDGER.idFromName(accountId)), (instance) =>
      (instance as LedgerObject).admit({
        genId,
        keyHash: "another-key",
        limitNano: null,
        holdNano: 1_000_000_000,
        paid: true,
        abandoned: syntheticRecord(accountId, Date.now(), 0, { id: genId }),
      }),
    );
    expect(held).toEqual({ ok: true, holdNano: 1_000_000_000 });
    const HELD =
      /^Insufficient credits for meta-llama\/llama-3\.1-8b-instruct: the balance is not spent but held for requests in flight \(\$1 reserved until they finish\)/;
    const [chat, messages, responses] = await Promise.all([
      post("/chat/completions", key, { model: LLAMA, messages: [{ role: "user", content: "hi" }] }),
      post("/messages", key, { model: LLAMA, max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
      post("/responses", key, { model: LLAMA, input: "hi" }),
    ]);
    expect([chat.status, messages.status, responses.status]).toEqual([402, 402, 402]);
    const chatError = ((await chat.json()) as { error: { message: string; metadata: unknown } }).error;
    expect(chatError.message).toMatch(HELD);
    expect(chatError.metadata).toEqual({ limit_source: "credits", held_usd: "1" });
    expect(((await messages.json()) as { error: { message: string } }).error.message).toMatch(HELD);
    const responsesError = ((await responses.json()) as { error: { message: string; type: string } }).error;
    expect(responsesError.message).toMatch(HELD);
    expect(responsesError.type).toBe("insufficient_quota");
  });
});
