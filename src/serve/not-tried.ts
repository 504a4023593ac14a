import type { PricedEndpoint } from "../catalog/catalog";
import type { AttemptFailure } from "../carriers/attempts";
import type { Capped } from "../routing/request-fit";

/** An endpoint of a candidate model the request is never sent to, and why: named first when all fail, and in the routing metadata. */
export type NotTried = AttemptFailure & { model: string };

/** An endpoint admission left out: what the hold granted cannot pay for there, so it is never tried. */
export function unaffordable(e: PricedEndpoint): NotTried {
  return {
    provider: e.providerEntry.name,
    model: e.modelId,
    kind: "unavailable",
    status: null,
    reason: "not tried: the balance or the key's remaining limit cannot pay what the request may cost there (add credits, or lower max_tokens)",
  };
}

/** An endpoint routing left out: it returns fewer completion tokens than the caller's cap (`field`), which it would refuse. */
export function cappedEndpoint({ endpoint, maxOutput }: Capped, field: string, cap: number): NotTried {
  return {
    provider: endpoint.providerEntry.name,
    model: endpoint.modelId,
    kind: "unavailable",
    status: null,
    reason: `not tried: it returns at most ${maxOutput} completion tokens, fewer than ${field} ${cap}`,
  };
}
