import type { PricedEndpoint } from "../catalog/catalog";
import type { AnswerFacts } from "../protocols/inbound/caller-protocol";
import { routingMetadata } from "../routing/routing-metadata";
import type { RequestContext } from "./request-context";

/** What the caller's answer names beyond the carrier's: the generation, the model as asked, the carrier, and the routing metadata when asked for. */
export function answerFacts(rc: RequestContext, selected: PricedEndpoint): AnswerFacts {
  return {
    genId: rc.genId,
    model: rc.model,
    provider: selected.providerEntry.name,
    created: Math.floor(rc.startedAt / 1000),
    metadata: () =>
      rc.metadata
        ? routingMetadata({
            requested: rc.requestedModel,
            strategy: rc.strategy ?? "direct",
            available: rc.metadata.available,
            selected,
            attempts: rc.attempts.attemptsSoFar(),
          })
        : null,
  };
}
