import type { PricedEndpoint } from "../catalog/catalog";
import { isFree } from "../catalog/catalog";
import type { ChatRequest } from "./chat-request";
import { billedChoices, completionCap, reasoningBudget } from "./billed-fields";
import { mediaTokens, type PromptMedia } from "./prompt-media";
import { byokFeeNano } from "./charge";

/**
 * What one endpoint may bill for a request, in the parts admission trades off (docs/money.md, the hold):
 * - prompt: a token is at least one byte, so the body's byte length bounds the text (less the inline data of
 *   media parts, billed by their size instead); each media part at what the carrier bills for its measured
 *   size (src/request/prompt-media.ts) — and where a part cannot be measured (a file, audio or video by
 *   URL), the whole context: a carrier bills no prompt longer than that. Each prompt token at the dearest
 *   way it may be billed: input, or a cache write (which costs more), at the long-context prices too
 *   where the endpoint has them;
 * - completion, per choice: the cap the carrier applies — the larger of `max_completion_tokens` and
 *   `max_tokens` (a carrier may read either), else the endpoint's max completion tokens, else its
 *   context; where the endpoint bills reasoning beyond that cap (`reasoning_beyond_cap`), plus the
 *   reasoning budget (without one, the context); never more than the context;
 * - choices: `n`, or `best_of` when larger (every candidate is billed).
 */
export type EndpointBound = {
  endpoint: PricedEndpoint;
  /** The prompt's bound in tokens. */
  promptTokens: number;
  /** That prompt at the dearest price a prompt token may be billed at. */
  promptNano: number;
  /** One more completion token on every choice. */
  perTokenNano: number;
  /** The completion cap per choice the carrier applies as the request stands. */
  cap: number;
  /** The caller set that cap: the router never lowers it. */
  callerCap: boolean;
  /** Reasoning billed beyond the cap (`reasoning_beyond_cap`): by the request's budget, or (null) up to the context. */
  beyondCap: { budget: number | null } | null;
};

/** What one endpoint may bill for the request, part by part. */
export function endpointBound(body: ChatRequest, bodyBytes: number, e: PricedEndpoint, media: PromptMedia): EndpointBound {
  const cap = completionCap(body);
  const parts = mediaTokens(media, e.mediaRates);
  const promptTokens = parts === null ? e.context_length : Math.min(e.context_length, Math.max(0, bodyBytes - media.inlineChars) + parts);
  // Long-context prices apply once the prompt may pass their threshold.
  const price = e.longContext !== null && promptTokens > e.longContext.above ? e.longContext : e;
  return {
    endpoint: e,
    promptTokens,
    promptNano: promptTokens * Math.max(price.inputNano, price.cacheWriteNano, price.cacheWrite1hNano),
    perTokenNano: billedChoices(body) * price.outputNano,
    cap: Math.min(cap ?? e.max_completion_tokens ?? e.context_length, e.context_length),
    callerCap: cap !== null,
    beyondCap: e.reasoning_beyond_cap ? { budget: reasoningBudget(body) } : null,
  };
}

/** The most the endpoint may bill when the carrier caps each choice's completion at `cap`. */
export function costAt(b: EndpointBound, cap: number): number {
  const context = b.endpoint.context_length;
  const completion = b.beyondCap === null ? cap : b.beyondCap.budget === null ? context : cap + b.beyondCap.budget;
  return b.promptNano + b.perTokenNano * Math.min(completion, context);
}

/** The most the endpoint may bill for the request as it stands. */
export function boundNano(b: EndpointBound): number {
  return costAt(b, b.cap);
}

/**
 * The largest completion cap per choice (at most the endpoint's own) whose cost fits `nano`, whoever set
 * the cap; 0 when not even one token does (the prompt alone, or reasoning the cap cannot bound, costs more).
 */
export function affordableCap(b: EndpointBound, nano: number): number {
  if (boundNano(b) <= nano) return b.cap;
  if (b.beyondCap?.budget === null) return 0; // the context bounds it, not the cap
  const room = nano - b.promptNano;
  if (room < 0) return 0;
  if (b.perTokenNano === 0) return b.cap;
  const tokens = Math.floor(room / b.perTokenNano) - (b.beyondCap?.budget ?? 0);
  return Math.max(0, Math.min(tokens, b.cap));
}

/**
 * The worst-case cost of a request, held from admission to settle: the most any of its endpoints may
 * bill, priced at the dearest (fallback may land there).
 */
export function holdNano(body: ChatRequest, bodyBytes: number, endpoints: PricedEndpoint[], media: PromptMedia): number {
  let hold = 0;
  for (const e of endpoints) hold = Math.max(hold, boundNano(endpointBound(body, bodyBytes, e, media)));
  return hold;
}

/**
 * The endpoints a request may be served by once admitted, the completion caps the router set on some of
 * them, and those left out because the hold granted cannot pay even their least (never tried; the caller's
 * error names them should the others fail).
 */
export type Fitted = { endpoints: PricedEndpoint[]; caps: ReadonlyMap<PricedEndpoint, number>; unaffordable: PricedEndpoint[] };

/** Why a paid request cannot be afforded: its completion cap, or its prompt alone. */
export type Shortfall =
  { kind: "completion"; requestedTokens: number; affordableTokens: number } | { kind: "prompt"; promptTokens: number; affordablePromptTokens: number };

/**
 * What admission needs of a request (docs/money.md, Admission): the hold that covers its every endpoint
 * as it stands (`wantNano`), the least hold that still serves it somewhere (`minNano`: with the caller's
 * completion cap, else one completion token), how its endpoints fit a hold granted in between (an
 * endpoint whose worst case exceeds it gets the completion cap that fits, sent to its carrier, unless
 * the caller set one; one that cannot fit is left out) and, when not even `minNano` can be paid, why.
 */
export interface Demand {
  readonly wantNano: number;
  readonly minNano: number;
  fit(grantedNano: number): Fitted;
  shortfall(availableNano: number): Shortfall;
}

/**
 * What an endpoint may bill when only the account's own carrier key can serve it (docs/byok.md): the fee
 * on each part, rounded up — never less than the fee on the whole, since ⌈x⌉ + ⌈y⌉ ≥ ⌈x + y⌉.
 */
export function feeBound(b: EndpointBound, feeMilli: number | undefined): EndpointBound {
  if (feeMilli === undefined) return b;
  return { ...b, promptNano: byokFeeNano(b.promptNano, feeMilli), perTokenNano: byokFeeNano(b.perTokenNano, feeMilli) };
}

/**
 * What an endpoint the account's own carrier key may serve can add to a key's usage and BYOK usage together
 * (include_byok_in_limit, docs/byok.md): the carrier's whole bill and the fee on it, each part's fee rounded up
 * (so at least the fee on any bill within the bound: the fee only grows with the bill).
 */
export function billAndFeeBound(b: EndpointBound, feeMilli: number | undefined): EndpointBound {
  if (feeMilli === undefined) return b;
  const fee = feeBound(b, feeMilli);
  return { ...b, promptNano: b.promptNano + fee.promptNano, perTokenNano: b.perTokenNano + fee.perTokenNano };
}

/**
 * A completion request's demand over its endpoints (free ones cost nothing: the free-model limits govern
 * them); `bound` turns each endpoint's bill into what is held for it (`feeBound` where only the account's own
 * key may serve it: the fee's maximum).
 */
export function completionDemand(
  body: ChatRequest,
  bodyBytes: number,
  endpoints: PricedEndpoint[],
  media: PromptMedia,
  bound: (b: EndpointBound) => EndpointBound = (b) => b,
): Demand {
  const bounds = new Map(endpoints.filter((e) => !isFree(e)).map((e) => [e, bound(endpointBound(body, bodyBytes, e, media))]));
  const priced = [...bounds.values()];
  const least = (b: EndpointBound) => (b.callerCap ? boundNano(b) : costAt(b, 1));
  return {
    wantNano: Math.max(0, ...priced.map(boundNano)),
    minNano: priced.length ? Math.min(...priced.map(least)) : 0,
    fit(granted) {
      const caps = new Map<PricedEndpoint, number>();
      const unaffordable: PricedEndpoint[] = [];
      const fitting = endpoints.filter((e) => {
        const b = bounds.get(e);
        if (!b || boundNano(b) <= granted) return true;
        const cap = b.callerCap ? 0 : affordableCap(b, granted);
        if (cap >= 1) caps.set(e, cap);
        else unaffordable.push(e);
        return cap >= 1;
      });
      return { endpoints: fitting, caps, unaffordable };
    },
    shortfall(available) {
      const affordable = Math.max(0, ...priced.map((b) => affordableCap(b, available)));
      const cheapest = priced.reduce((a, b) => (b.promptNano < a.promptNano ? b : a));
      if (affordable >= 1 || cheapest.promptNano <= available)
        return { kind: "completion", requestedTokens: Math.max(...priced.map((b) => b.cap)), affordableTokens: affordable };
      // The prompt itself is what cannot be paid, even at the cheapest endpoint.
      return {
        kind: "prompt",
        promptTokens: cheapest.promptTokens,
        affordablePromptTokens: promptTokensFor(cheapest.promptNano, cheapest.promptTokens, available),
      };
    },
  };
}

/** A demand with nothing to trade (embeddings: `promptTokens` of inputs, held at `holdNano`): the hold is what it is. */
export function fixedDemand(holdNano: number, promptTokens: number, endpoints: PricedEndpoint[]): Demand {
  return {
    wantNano: holdNano,
    minNano: holdNano,
    fit: () => ({ endpoints, caps: new Map(), unaffordable: [] }),
    shortfall: (available) => ({ kind: "prompt", promptTokens, affordablePromptTokens: promptTokensFor(holdNano, promptTokens, available) }),
  };
}

/** How many of `tokens` prompt tokens costing `nano` in all `available` pays for. */
function promptTokensFor(nano: number, tokens: number, available: number): number {
  if (nano <= 0) return tokens;
  // A figure for the message only (a float division), never money.
  return Math.min(tokens, Math.floor(Math.max(0, available) / (nano / tokens)));
}
