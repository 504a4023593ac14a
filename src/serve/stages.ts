import type { PricedEndpoint } from "../catalog/catalog";
import type { Ticket } from "../ledger/account-ledger";
import type { Fitted } from "../request/hold";
import type { RouteQuery } from "../routing/route-query";
import type { Strategy } from "../routing/candidate-models";
import type { PresetUsed } from "../presets/resolve-preset";

/** What reading the caller's request decided that its record keeps, and the route query routing takes. */
export type Read = {
  stream: boolean;
  /** The caller's `user` as sent (recorded as external_user; carriers get only its hash); null when none. */
  externalUser: string | null;
  /** The preset the request's model named, applied (src/presets/); null when none (and for embeddings). */
  preset?: PresetUsed | null;
  query: RouteQuery;
};

/**
 * What routing named, as far as planning got (a refused plan names what it knew): the model as asked
 * (`model`, else the first of `models`; the default model when omitted), the id the answer and the record
 * name until a carrier serves (the first candidate's), how it was routed and the session.
 */
export type RouteNames = { requestedModel: string; model: string; strategy: Strategy | null; sessionId: string | null };

/** What the ledger admitted: the ticket that backs the request, the endpoints it may be served by and the completion caps the router set. */
export type Admission = Fitted & { ticket: Ticket };

/** The endpoint that served, the id the answer and the record name it by (as the caller sent it), and the completion cap the router set on it (null: none). */
export type Served = { endpoint: PricedEndpoint; model: string; adjustedMaxTokens: number | null };

/**
 * What a request's stages returned so far, each kept once by the API's top function as its stage
 * returns; settle builds the record from them and the request's facts, whichever stage it reached.
 */
export type Stages = { read?: Read; names?: RouteNames; admission?: Admission; served?: Served; cacheHit?: CacheHit };

/** A request answered from the answer cache (docs/caching.md): the generation that stored the answer and the model it named. */
export type CacheHit = { sourceId: string; model: string };
