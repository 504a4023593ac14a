import type { NewGeneration } from "../db/schema";
import type { CarrierAttempt } from "../db/carrier-attempt";
import type { Outcome } from "../request/outcome";
import type { Strategy } from "../routing/candidate-models";
import type { InboundApiName } from "../protocols/inbound";

/** The API a caller spoke (recorded as `inbound_api`). */
export type InboundApi = InboundApiName;

/** What a request's record says of it beyond its outcome: who asked, for what, from where. */
export type RecordFacts = {
  genId: string;
  caller: { accountId: string; key: { hash: string } };
  model: string;
  app: string | null;
  stream: boolean;
  startedAt: number;
  httpReferer: string | null;
  userAgent: string | null;
  externalUser: string | null;
  sessionId: string | null;
  inboundApi: InboundApi;
  strategy: Strategy | null;
  adjustedMaxTokens?: number | null;
  /** The preset the request named and the version applied; null when none. */
  preset?: { id: string; slug: string; version: number } | null;
  /** The generation whose cached answer served this request (docs/caching.md); null when a carrier served it. */
  cacheSourceId?: string | null;
};

/** The generation record of one request (docs/storage.md, `generations`). */
export function generationRecord(r: RecordFacts, o: Outcome, endedAt: number, attempts: CarrierAttempt[]): NewGeneration {
  return {
    id: r.genId,
    accountId: r.caller.accountId,
    keyHash: r.caller.key.hash,
    model: r.model,
    providerName: o.provider,
    app: r.app,
    streamed: r.stream,
    createdAt: r.startedAt,
    latencyMs: o.firstTokenAt === null ? null : o.firstTokenAt - r.startedAt,
    generationTimeMs: endedAt - r.startedAt,
    tokensPrompt: o.promptTokens,
    tokensCompletion: o.completionTokens,
    tokensReasoning: o.reasoningTokens,
    tokensCached: o.cachedTokens,
    tokensCacheWrite: o.cacheWriteTokens,
    cacheDiscountNano: o.cacheDiscountNano,
    costNano: o.costNano,
    finishReason: o.finishReason,
    status: o.status,
    errorMessage: o.errorMessage,
    upstreamId: o.upstreamId,
    cancelled: o.cancelled,
    httpReferer: r.httpReferer,
    userAgent: r.userAgent,
    externalUser: r.externalUser,
    sessionId: r.sessionId,
    inboundApi: r.inboundApi,
    usageSource: o.usageSource,
    insured: o.insured,
    providerResponses: attempts.length ? JSON.stringify(attempts) : null,
    strategy: r.strategy,
    adjustedMaxTokens: r.adjustedMaxTokens ?? null,
    presetId: r.preset?.id ?? null,
    preset: r.preset?.slug ?? null,
    presetVersion: r.preset?.version ?? null,
    byok: o.byokUpstreamNano !== null,
    byokUpstreamNano: o.byokUpstreamNano,
    responseCacheSourceId: r.cacheSourceId ?? null,
  };
}
