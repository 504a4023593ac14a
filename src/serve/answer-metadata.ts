import type { PricedEndpoint } from "../catalog/catalog";
import type { AnswerFacts } from "../protocols/inbound/caller-protocol";
import { routingMetadata } from "../routing/routing-metadata";
import { carrierProtocol } from "../protocols/outbound";
import type { ChatRequest } from "../request/chat-request";
import type { RequestContext } from "./request-context";
import { reasoningSealer } from "./reasoning-sealer";

/** What the caller's answer names beyond the carrier's: the generation, the model as asked, the carrier, the routing metadata when asked for; and the account's sealer. */
export function answerFacts(rc: RequestContext, selected: PricedEndpoint, body: ChatRequest): AnswerFacts {
  return {
    genId: rc.genId,
    model: rc.model,
    provider: selected.providerEntry.name,
    created: Math.floor(rc.startedAt / 1000),
    echo: rc.echo,
    metadata: () =>
      rc.metadata
        ? routingMetadata({
            requested: rc.requestedModel,
            strategy: rc.strategy ?? "direct",
            available: rc.metadata.available,
            notTried: rc.metadata.notTried,
            selected,
            attempts: rc.attempts.attemptsSoFar(),
            dropped: carrierProtocol(selected).leftOut(body, selected),
            droppedTools: rc.droppedTools,
            unknown: rc.unknownFields,
            adjusted: rc.adjustedMaxTokens === null ? undefined : { max_tokens: rc.adjustedMaxTokens },
          })
        : null,
    sealer: reasoningSealer(rc.env, rc.caller.accountId),
  };
}
