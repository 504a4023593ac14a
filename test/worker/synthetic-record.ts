import type { NewGeneration } from "../../src/db/schema";
import { newGenerationId } from "../../src/generations/generation-id";

// Pure (no cloudflare:test): the worker tests' helpers and the archive load test's Worker
// (scripts/archive-load-worker.js) build their records with it.

/** A synthetic record of an account at a time (≈ the size of a real one, with one carrier attempt). */
export function syntheticRecord(accountId: string, createdAt: number, i: number, over: Partial<NewGeneration> = {}): NewGeneration {
  return {
    id: newGenerationId(createdAt),
    accountId,
    keyHash: (i % 2 ? "a" : "b").repeat(64),
    model: i % 3 ? "openai/gpt-oss-20b" : "meta-llama/llama-3.1-8b-instruct",
    providerName: i % 4 ? "Sim Carrier" : null,
    app: "archive-test",
    streamed: i % 2 === 0,
    createdAt,
    latencyMs: 10 + (i % 7),
    generationTimeMs: 200 + i,
    tokensPrompt: 100 + i,
    tokensCompletion: 50 + (i % 13),
    tokensReasoning: 0,
    tokensCached: i % 5,
    tokensCacheWrite: 0,
    cacheDiscountNano: 0,
    costNano: 1_000 + i * 7,
    finishReason: "stop",
    status: 200,
    errorMessage: null,
    upstreamId: `up-${i}`,
    cancelled: false,
    httpReferer: null,
    userAgent: "archive-test/1 ü",
    usageSource: "carrier",
    insured: false,
    externalUser: null,
    providerResponses: JSON.stringify([
      { model: "openai/gpt-oss-20b", provider: "sim", providerName: "Sim Carrier", status: 200, at: createdAt, latencyMs: 10, tokensPerSecond: 50 },
    ]),
    strategy: "direct",
    sessionId: null,
    inboundApi: "chat",
    adjustedMaxTokens: null,
    presetId: null,
    preset: null,
    presetVersion: null,
    responseCacheSourceId: null,
    byok: false,
    byokUpstreamNano: null,
    ...over,
  };
}

/**
 * A small settled record — one prompt and one completion token, status 200, cost 0 — as the ledger's and
 * the settle path's tests store it; `over` sets what a test asserts on (account, model, cost, time…).
 */
export function ledgerRecord(id: string, over: Partial<NewGeneration> = {}): NewGeneration {
  return {
    id,
    accountId: "acct",
    keyHash: "k",
    model: "m",
    providerName: "p",
    app: null,
    streamed: false,
    createdAt: 0,
    latencyMs: 1,
    generationTimeMs: 1,
    tokensPrompt: 1,
    tokensCompletion: 1,
    tokensReasoning: 0,
    costNano: 0,
    finishReason: "stop",
    status: 200,
    errorMessage: null,
    ...over,
  };
}
