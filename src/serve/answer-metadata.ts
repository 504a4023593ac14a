import type { PricedEndpoint } from "../catalog/catalog";
import { routingMetadata } from "../routing/routing-metadata";
import type { RequestContext } from "./request-context";

/** `{ openrouter_metadata }` for an answer when the caller asked for it, else nothing to add. */
export function answerMetadata(rc: RequestContext, selected: PricedEndpoint): { openrouter_metadata?: ReturnType<typeof routingMetadata> } {
  if (!rc.metadata) return {};
  return {
    openrouter_metadata: routingMetadata({
      requested: rc.requestedModel,
      strategy: rc.strategy ?? "direct",
      available: rc.metadata.available,
      selected,
      attempts: rc.attempts.attemptsSoFar(),
    }),
  };
}
