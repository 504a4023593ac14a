import type { Caller, Env } from "../env";
import { newGenerationId } from "../generations/generation-id";
import type { Ticket } from "../ledger/account-ledger";
import type { PricedEndpoint } from "../catalog/catalog";
import { AttemptLog } from "../carriers/attempt-log";
import type { CarrierAttempt } from "../db/carrier-attempt";
import type { Strategy } from "../routing/candidate-models";
import type { InboundApi } from "../generations/record";

/** An endpoint of a candidate model the request was never sent to, and why (named in the routing metadata). */
export type NotTried = { provider: string; model: string; reason: string };

/** What the request path knows about one completion request from its start. */
export type RequestContext = {
  env: Env;
  waitUntil: (p: Promise<unknown>) => void;
  genId: string;
  caller: Caller;
  /** The model id as the caller sent it (`model`, else the first of `models`); the resolved id when omitted; "" before the body is read. */
  requestedModel: string;
  /** The id the answer, its chunks and the record name: as sent for the model that served (or the first candidate until one does). */
  model: string;
  /** How the request was routed; null before routing. */
  strategy: Strategy | null;
  /** Every carrier attempt, for the record's provider_responses and endpoint health. */
  attempts: AttemptLog;
  /**
   * Routing metadata asked for (`X-OpenRouter-Metadata: enabled`): the endpoints the request could use, in
   * order, and those left out before any attempt, with why; null when not asked.
   */
  metadata: { available: PricedEndpoint[]; notTried: NotTried[] } | null;
  stream: boolean;
  app: string | null;
  httpReferer: string | null;
  userAgent: string | null;
  /** The caller's `user` as sent (recorded as external_user; carriers get only its hash); null when none or before the body is read. */
  externalUser: string | null;
  /** The request's session (`session_id`, else the `x-session-id`, `x-claude-code-session-id` or `session-id` header): sticky routing and grouping; null when none. */
  sessionId: string | null;
  /** The API the caller spoke (its caller protocol's `api`). */
  inboundApi: InboundApi;
  /** What the caller's answer repeats of its request (CallerProtocol.read). */
  echo: Record<string, unknown>;
  /** The tools the request declared that no carrier here runs, left out (CallerProtocol.read): named in the answer's header and metadata. */
  droppedTools: string[];
  /** The request's fields the router does not know, passed on as sent (CallerProtocol.read): named in the answer's header and metadata. */
  unknownFields: string[];
  startedAt: number;
  /** Resolves once the request is settled; held under waitUntil from the start so a caller leaving cannot cut settling short. */
  markSettled: () => void;
  /** What backs the request once admitted (its slice or its own hold); null before admission or when refused. */
  ticket: Ticket | null;
  /** The endpoint that served; null until one did. */
  served: PricedEndpoint | null;
  /** The completion cap (`max_tokens`) the router set on the carrier that served, because the key and the balance could not pay its maximum; null when it set none. */
  adjustedMaxTokens: number | null;
  /** Settled already (src/serve/settle.ts refuses a second settle). */
  settled: boolean;
};

/**
 * A request's context from its arrival (after authentication): a new generation id, the caller, what
 * its headers say, and a promise held under waitUntil from the start and resolved once it is settled,
 * so a caller leaving cannot cut settling short.
 */
export function newRequestContext(
  env: Env,
  ctx: Pick<ExecutionContext, "waitUntil">,
  caller: Caller,
  headers: Headers,
  onAttempt: (a: CarrierAttempt) => void,
): RequestContext {
  const waitUntil = (p: Promise<unknown>) => ctx.waitUntil(p);
  let markSettled = () => {};
  waitUntil(new Promise<void>((resolve) => (markSettled = resolve)));
  const startedAt = Date.now();
  return {
    env,
    waitUntil,
    genId: newGenerationId(startedAt),
    caller,
    requestedModel: "",
    model: "",
    strategy: null,
    attempts: new AttemptLog(onAttempt),
    metadata: null,
    stream: false,
    app: appName(headers),
    httpReferer: headers.get("http-referer")?.slice(0, 500) ?? null,
    userAgent: headers.get("user-agent")?.slice(0, 300) ?? null,
    externalUser: null,
    sessionId: null,
    inboundApi: "chat",
    echo: {},
    droppedTools: [],
    unknownFields: [],
    startedAt,
    markSettled,
    ticket: null,
    served: null,
    adjustedMaxTokens: null,
    settled: false,
  };
}

/** The calling app: `X-Title` (or `X-OpenRouter-Title`), else the host of `HTTP-Referer`. */
export function appName(headers: Headers): string | null {
  const title = headers.get("x-title") ?? headers.get("x-openrouter-title");
  if (title) return title.slice(0, 200);
  const referer = headers.get("http-referer");
  if (!referer) return null;
  try {
    return new URL(referer).host || null;
  } catch {
    return null;
  }
}
