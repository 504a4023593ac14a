import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { PricedEndpoint } from "../catalog/catalog";
import { completionDemand, type Fitted } from "../request/hold";
import { completionCap } from "../request/billed-fields";
import type { Capped } from "../routing/request-fit";
import { measurePromptMedia } from "../request/prompt-media";
import { loadCatalog } from "../catalog/load";
import { ApiError } from "../request/errors";
import type { ChatRequest } from "../request/chat-request";
import { failedOutcome, servedOutcome, type Outcome } from "../request/outcome";
import type { CallerProtocol } from "../protocols/inbound";
import type { Sealer } from "../protocols/inbound/caller-protocol";
import { carrierProtocol } from "../protocols/outbound";
import { hashedUser } from "../routing/user-hash";
import { isolateHealth } from "../health/isolate-health";
import { dispatch, UnusableAnswer, type Dispatched } from "../carriers/dispatch";
import { carrierBodies, carrierTimeoutMs, type CarrierCall } from "../carriers/carrier-call";
import { CarriersExhausted, type AttemptFailure } from "../carriers/attempts";
import { accountAnswer, readAnswer } from "../relay/answer";
import { relayStream } from "../relay/stream-relay";
import { relayLimits } from "../relay/relay-limits";
import { logError } from "../log-error";
import { settings } from "../settings";
import { namedUnknown } from "../request/unknown-fields";
import { newRequestContext, type RequestContext } from "./request-context";
import { planRequest, type Plan } from "./plan";
import { admit } from "./admit";
import { answerFacts } from "./answer-metadata";
import { settle } from "./settle";
import { reasoningSealer } from "./reasoning-sealer";
import type { InboundApi } from "../generations/record";

/** The endpoints admission let the request be sent to, and those of its models it is never sent to, with why (named first when all fail). */
type Admitted = Fitted & { skipped: Skipped[] };
type Skipped = AttemptFailure & { model: string };

/** What a request came to: the caller's response, and the outcome to settle (now, or when its stream ends). */
type Answered = { response: Response; outcome: Outcome | Promise<Outcome> };

/**
 * A completion request in the caller's protocol, top to bottom: auth (the route's middleware) → body →
 * catalog → routing → ledger → carrier → relay → settle. Every request after authentication is
 * settled exactly once, here: what a carrier served is debited and recorded; anything else is recorded
 * at cost 0. Every answer, errors included, carries `x-generation-id`.
 */
export async function serveRequest(c: Context<AppEnv>, protocol: CallerProtocol): Promise<Response> {
  const rc = openRequest(c, protocol.api);
  let answered: Answered;
  try {
    answered = await complete(rc, c, protocol);
  } catch (err) {
    answered = failure(rc, c, protocol.errorBody, err);
  }
  const { outcome } = answered;
  if (outcome instanceof Promise) rc.waitUntil(outcome.then((o) => settle(rc, o)));
  else void settle(rc, outcome);
  return answered.response;
}

/** A model request's context once its caller is known, in the API it came in; its generation id is on every answer. */
export function openRequest(c: Context<AppEnv>, api: InboundApi): RequestContext {
  // Every attempt also feeds this isolate's failure streaks, which the next request's routing reads.
  const rc = newRequestContext(c.env, c.executionCtx, c.get("caller"), c.req.raw.headers, (a) => isolateHealth().note(a));
  rc.inboundApi = api;
  c.header("x-generation-id", rc.genId);
  return rc;
}

/** A management key manages keys; it never runs a model. */
export function refuseManagementKey(rc: RequestContext): void {
  if (rc.caller.key.isManagement)
    throw new ApiError(403, "This is a management key: it manages API keys through /api/v1/keys and cannot run completions. Use an API key for completions.");
}

async function complete(rc: RequestContext, c: Context<AppEnv>, protocol: CallerProtocol): Promise<Answered> {
  refuseManagementKey(rc);
  const { body, bytes, echo, dropped, unknown } = await read(protocol, c.req.raw, reasoningSealer(rc.env, rc.caller.accountId));
  rc.echo = echo ?? {};
  rc.droppedTools = dropped ?? [];
  rc.unknownFields = namedUnknown(unknown ?? [], settings(rc.env).UNKNOWN_PARAMETERS_NAMED);
  rc.externalUser = body.user ?? null;
  rc.stream = body.stream === true;
  const catalog = await loadCatalog(rc.env, rc.waitUntil);
  const plan = await planRequest(rc, body, catalog, c.req.raw.headers, { capField: protocol.capField(body) });
  const media = await measurePromptMedia(body);
  const admitted = await admit(rc, completionDemand(body, bytes, plan.endpoints, media), plan, new URL(c.req.url).origin);
  const notTried = [
    ...plan.capped.map((x) => cappedEndpoint(x, protocol.capField(body), completionCap(body) ?? 0)),
    ...admitted.unaffordable.map(unaffordable),
  ];
  if (plan.metadata) rc.metadata = { available: admitted.endpoints, notTried: notTried.map(({ provider, model, reason }) => ({ provider, model, reason })) };
  const served = { ...admitted, skipped: notTried };
  return rc.stream ? serveStream(rc, body, plan, served, protocol, c.req.raw.signal) : serveAnswer(rc, body, plan, served, protocol, c.req.raw.signal);
}

/** The caller's request as the canonical request; anything but a refusal of its own is a 400. */
async function read(protocol: CallerProtocol, req: Request, sealer: Sealer | null): ReturnType<CallerProtocol["read"]> {
  try {
    return await protocol.read(req, sealer);
  } catch (err) {
    throw err instanceof ApiError ? err : new ApiError(400, "The request body could not be read.");
  }
}

async function serveAnswer(
  rc: RequestContext,
  body: ChatRequest,
  plan: Plan,
  admitted: Admitted,
  protocol: CallerProtocol,
  signal: AbortSignal,
): Promise<Answered> {
  const served = await carrierFor(rc, body, plan, admitted, false, (call, e) => readAnswer(call, carrierProtocol(e), body), signal);
  const account = accountAnswer(body, served.endpoint, served.value, Date.now());
  const json = await protocol.answer(
    served.value,
    { tokens: account.tokens, charged: account.charged, endpoint: served.endpoint },
    answerFacts(rc, served.endpoint, body),
  );
  const response = new Response(JSON.stringify(json), { headers: { "content-type": "application/json", ...answerHeaders(rc) } });
  return { response, outcome: servedOutcome(account) };
}

async function serveStream(
  rc: RequestContext,
  body: ChatRequest,
  plan: Plan,
  admitted: Admitted,
  protocol: CallerProtocol,
  signal: AbortSignal,
): Promise<Answered> {
  const served = await carrierFor(
    rc,
    body,
    plan,
    admitted,
    true,
    async (call, e) => {
      if (!call.response.body || !carrierProtocol(e).isEventStream(call.response.headers.get("content-type") ?? ""))
        throw new UnusableAnswer("the carrier did not answer with an event stream");
    },
    signal,
  );
  const renderer = protocol.stream(answerFacts(rc, served.endpoint, body), served.endpoint);
  const { readable, outcome } = relayStream(
    served.call,
    {
      body,
      endpoint: served.endpoint,
      renderer,
      decoder: carrierProtocol(served.endpoint).streamDecoder(body),
      limits: relayLimits(rc.env),
      idleMs: carrierTimeoutMs(rc.env),
      startedAt: rc.startedAt,
    },
    signal,
  );
  // The renderer's async step (sealing), if it has one, runs on the relayed bytes on their way out.
  const response = new Response(renderer.asyncStep ? readable.pipeThrough(renderer.asyncStep) : readable, {
    headers: { "content-type": protocol.streamContentType, "cache-control": "no-cache", ...answerHeaders(rc) },
  });
  return { response, outcome };
}

/**
 * The headers of a served answer: its generation, the tools left out (`x-switchyard-dropped-tools`) and the
 * fields the router does not know (`x-switchyard-unknown-parameters`), if any.
 */
function answerHeaders(rc: RequestContext): Record<string, string> {
  return {
    "x-generation-id": rc.genId,
    ...(rc.droppedTools.length ? { "x-switchyard-dropped-tools": rc.droppedTools.join(", ") } : {}),
    ...(rc.unknownFields.length ? { "x-switchyard-unknown-parameters": rc.unknownFields.join(", ") } : {}),
  };
}

/** A request refused or failed before anything was served: the caller's error in its protocol (`errorBody`), recorded at cost 0. */
export function failure(
  rc: RequestContext,
  c: Context<AppEnv>,
  errorBody: CallerProtocol["errorBody"],
  err: unknown,
): { response: Response; outcome: Outcome } {
  if (!(err instanceof ApiError) && c.req.raw.signal.aborted) {
    // The caller went away before any carrier answered: recorded as 499 (as nginx names it); no one reads the reply.
    return { response: new Response(null, { status: 499 }), outcome: failedOutcome(499, "The caller closed the request before a carrier answered.") };
  }
  if (!(err instanceof ApiError)) logError(`${rc.inboundApi} request failed`, err, { generation: rc.genId });
  const refused = err instanceof ApiError ? err : new ApiError(500, "Internal error while serving the request; nothing was charged.");
  return {
    response: c.json(errorBody(refused), refused.status, refused.headers),
    outcome: failedOutcome(refused.status, refused.message, refused instanceof CarriersExhausted ? refused.provider : null),
  };
}

/**
 * The admitted endpoints in order until one answers usably (`accept`), each asked with the completion cap
 * the router set on it, if any; the one that served is named on `rc`.
 */
async function carrierFor<T>(
  rc: RequestContext,
  body: ChatRequest,
  plan: Plan,
  admitted: Admitted,
  stream: boolean,
  accept: (call: CarrierCall, endpoint: PricedEndpoint) => Promise<T>,
  signal: AbortSignal,
): Promise<Dispatched<T>> {
  const userHash = await userHashOf(rc, body);
  const bodies = carrierBodies(body, stream, userHash, admitted.caps);
  const served = await dispatch(rc.env, label(rc, plan), admitted.endpoints, bodies, stream, accept, rc.attempts, signal, admitted.skipped);
  servedBy(rc, plan, served.endpoint, admitted.caps.get(served.endpoint) ?? null);
  return served;
}

/** An endpoint admission left out: what the hold granted cannot pay for there, so it is never tried. */
function unaffordable(e: PricedEndpoint): Skipped {
  return {
    provider: e.providerEntry.name,
    model: e.modelId,
    kind: "unavailable",
    status: null,
    reason: "not tried: the balance or the key's remaining limit cannot pay what the request may cost there (add credits, or lower max_tokens)",
  };
}

/** An endpoint routing left out: it returns fewer completion tokens than the caller's cap (`field`), which it would refuse. */
function cappedEndpoint({ endpoint, maxOutput }: Capped, field: string, cap: number): Skipped {
  return {
    provider: endpoint.providerEntry.name,
    model: endpoint.modelId,
    kind: "unavailable",
    status: null,
    reason: `not tried: it returns at most ${maxOutput} completion tokens, fewer than ${field} ${cap}`,
  };
}

/** The caller's `user` as the carriers see it: hashed once per request (WebCrypto is async), before any attempt is built. */
function userHashOf(rc: RequestContext, body: ChatRequest): Promise<string | null> {
  return body.user === undefined ? Promise.resolve(null) : hashedUser(rc.caller.accountId, body.user);
}

/** What the caller asked for, as dispatch's errors name it. */
function label(rc: RequestContext, plan: Plan): string {
  return plan.candidates.length > 1 ? plan.candidates.map((x) => x.answerAs).join(", ") : rc.model;
}

/** The answer and the record name the model that served, as the caller sent its id, and the completion cap the router set on it. */
function servedBy(rc: RequestContext, plan: Plan, endpoint: PricedEndpoint, adjustedMaxTokens: number | null): void {
  rc.served = endpoint;
  rc.model = plan.candidateOf.get(endpoint)!.answerAs;
  rc.adjustedMaxTokens = adjustedMaxTokens;
}
