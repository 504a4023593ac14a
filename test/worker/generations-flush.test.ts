import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { findGeneration, flushGenerations } from "../../src/db/generations";
import type { NewGeneration } from "../../src/db/schema";
import type { LedgerObject } from "../../src/ledger/ledger-object";

const base = (id: string, accountId: string): NewGeneration => ({
  id,
  accountId,
  keyHash: "k".repeat(64),
  model: "meta-llama/llama-3.1-8b-instruct",
  providerName: "Sim Carrier",
  app: 'O\'Brien "tools"',
  streamed: true,
  createdAt: 1_790_000_000_123,
  latencyMs: 12,
  generationTimeMs: 345,
  tokensPrompt: 10,
  tokensCompletion: 20,
  tokensReasoning: 3,
  tokensCached: 4,
  tokensCacheWrite: 5,
  cacheDiscountNano: -6,
  costNano: 9_007_199_254,
  finishReason: "stop",
  status: 200,
  errorMessage: null,
  upstreamId: "up-1",
  cancelled: false,
  httpReferer: "https://example.test/a?b=c&d='e'",
  userAgent: "ua/1 ü ✓",
  usageSource: "carrier",
  insured: false,
  externalUser: "user-123 ü",
  providerResponses: JSON.stringify([
    {
      model: "meta-llama/llama-3.1-8b-instruct",
      provider: "sim",
      providerName: "Sim Carrier",
      status: 200,
      at: 1_790_000_000_100,
      latencyMs: 12,
      tokensPerSecond: 60,
    },
  ]),
  strategy: "direct",
  sessionId: "conv-1",
  inboundApi: "messages",
  adjustedMaxTokens: 4096,
  presetId: "0b7e1a52-4c1e-4f5e-9a7e-2f1d3c4b5a69",
  preset: "team-setup",
  presetVersion: 2,
  responseCacheSourceId: "gen-cached-source",
  byok: true,
  byokUpstreamNano: 123_456,
});

describe("generation flush (records as JSON into D1)", () => {
  it("stores every field exactly, replaces a record with the same id, and splits large flushes", async () => {
    const accountId = "flush-" + Math.random();
    const first = base("gen-flush-a" + Math.random().toString(36).slice(2), accountId);
    const second: NewGeneration = {
      ...base("gen-flush-b" + Math.random().toString(36).slice(2), accountId),
      streamed: false,
      cancelled: true,
      usageSource: "estimate",
      insured: true,
      providerName: null,
      app: null,
      latencyMs: null,
      errorMessage: "x".repeat(2000),
      externalUser: null,
    };
    // Fields with column defaults left out, and external_user too, as in records stored before that column existed.
    const {
      cancelled: _omitted,
      insured: _alsoOmitted,
      externalUser: _older,
      providerResponses: _older2,
      strategy: _older3,
      sessionId: _older4,
      inboundApi: _older5,
      adjustedMaxTokens: _older6,
      presetId: _older7,
      preset: _older8,
      presetVersion: _older9,
      responseCacheSourceId: _older10,
      byok: _older11,
      byokUpstreamNano: _older12,
      ...withoutDefault
    } = { ...base("gen-flush-c" + Math.random().toString(36).slice(2), accountId) };
    await flushGenerations(
      env.DB,
      [first, second, withoutDefault].map((r) => JSON.stringify(r)),
    );
    expect(await findGeneration(env.DB, accountId, first.id)).toEqual({ ...first, rev: 0 });
    expect(await findGeneration(env.DB, accountId, second.id)).toEqual({ ...second, rev: 0 });
    expect(await findGeneration(env.DB, accountId, withoutDefault.id)).toEqual({
      ...withoutDefault,
      cancelled: false,
      insured: false,
      externalUser: null,
      providerResponses: null,
      strategy: null,
      sessionId: null,
      inboundApi: "chat",
      adjustedMaxTokens: null,
      presetId: null,
      preset: null,
      presetVersion: null,
      responseCacheSourceId: null,
      byok: false,
      byokUpstreamNano: null,
      rev: 0,
    }); // the column defaults
    // A late settle's record replaces the "abandoned" one, and raises its revision (the archive deletes only the revision it copied).
    const replaced = { ...first, status: 500, costNano: 0, finishReason: null };
    await flushGenerations(env.DB, [JSON.stringify(replaced)]);
    expect(await findGeneration(env.DB, accountId, first.id)).toEqual({ ...replaced, rev: 1 });
    // More JSON than one statement carries (512 KiB): every record still lands once.
    const many = Array.from({ length: 400 }, (_, i) => ({
      ...second,
      id: `gen-flush-many-${i}-${Math.random().toString(36).slice(2)}`,
      errorMessage: "y".repeat(1500),
    }));
    await flushGenerations(
      env.DB,
      many.map((r) => JSON.stringify(r)),
    );
    const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM generations WHERE account_id = ? AND id LIKE 'gen-flush-many-%'")
      .bind(accountId)
      .first<{ n: number }>();
    expect(row?.n).toBe(400);
    expect(await findGeneration(env.DB, accountId, many[399]!.id)).toEqual({ ...many[399], rev: 0 });
  });
});
