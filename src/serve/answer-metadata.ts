import type { AnswerFacts } from "../protocols/inbound/caller-protocol";
import { routingMetadata } from "../routing/routing-metadata";
import { carrierProtocol } from "../protocols/outbound";
import type { RequestFacts } from "./request-facts";
import type { RequestTrail } from "./settle";
import type { ChatRead } from "./chat-read";
import type { Plan } from "./plan";
import type { Admission, RouteNames, Served } from "./stages";
import type { NotTried } from "./not-tried";
import type { CacheState } from "./answer-cache-stage";

/** What a chat-family request decided before its carrier answered, which its answer names (a cached answer was admitted by no ledger). */
export type ChatStages = { read: ChatRead; names: RouteNames; plan: Plan; admission: Admission; notTried: NotTried[]; cache: CacheState };

/**
 * What the caller's answer names beyond the carrier's: the generation, the model as asked, the carrier,
 * the routing metadata when asked for (the endpoints admitted, in order, those never tried and why, and
 * every attempt: read when the answer is rendered); and the account's sealer.
 */
export function answerFacts(
  facts: RequestFacts,
  trail: RequestTrail,
  s: Omit<ChatStages, "admission"> & { admission?: Admission },
  served: Served,
): AnswerFacts {
  const { endpoint: selected } = served;
  return {
    genId: facts.genId,
    model: served.model,
    provider: selected.providerEntry.name,
    created: Math.floor(facts.startedAt / 1000),
    echo: s.read.echo,
    metadata: () =>
      s.plan.metadata
        ? routingMetadata({
            requested: s.names.requestedModel,
            strategy: s.names.strategy ?? "direct",
            available: s.admission?.endpoints ?? s.plan.endpoints,
            notTried: s.notTried.map(({ provider, model, reason }) => ({ provider, model, reason })),
            selected,
            attempts: trail.attempts.attemptsSoFar(),
            dropped: carrierProtocol(selected).leftOut(s.read.body, selected),
            droppedTools: s.read.droppedTools,
            unknown: s.read.unknownFields,
            adjusted: served.adjustedMaxTokens === null ? undefined : { max_tokens: served.adjustedMaxTokens },
          })
        : null,
    sealer: facts.sealer,
  };
}
