import { Hono } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../request/errors";
import { parseChatRequest } from "../request/chat-request";
import { readJsonObject } from "../request/json-body";

/** Largest request body accepted, in bytes (413 above it). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
import { loadCatalog } from "../catalog/load";
import { AUTO_MODEL, isFree, type PricedEndpoint } from "../catalog/catalog";
import { accountLedger } from "../ledger/isolate-ledgers";
import { holdNano } from "../request/hold";
import { dispatch, UnusableAnswer } from "../carriers/dispatch";
import { carrierBodies } from "../carriers/carrier-call";
import { CarriersExhausted } from "../carriers/attempts";
import { readCompletion, finishCompletion } from "../relay/answer";
import { relayStream } from "../relay/stream-relay";
import { appName, newGenerationId, type RequestContext } from "../serve/request-context";
import { failedOutcome, generationRecord, settle } from "../serve/settle";
import { logError } from "../log-error";
import { paymentRequired } from "../serve/payment-required";
import { rateLimited } from "../serve/rate-limited";
import { freeLimits } from "../ledger/free-limits";
import { hashedUser } from "../routing/user-hash";
import { requestParameters } from "../routing/request-parameters";
import { candidateModels } from "../routing/candidate-models";
import { planRoute } from "../routing/route-plan";
import { metadataLevel } from "../routing/routing-metadata";
import { AttemptLog } from "../carriers/attempt-log";
import { isolateHealth } from "../health/isolate-health";
import { routingHealth } from "../health/routing-health";
import { healthThresholds } from "../routing/health-order";
import { balancing, routingRandom } from "../routing/routing-random";
import { contextTooLongMessage, unsupportedPartsMessage } from "../routing/request-fit";
import { MAX_ID_CHARS } from "../request/router-field-schemas";

export const chatRoutes = new Hono<AppEnv>();

/**
 * POST /chat/completions — the request path, top to bottom:
 * auth (middleware) → body → catalog → routing (candidate models, provider preferences) → ledger admission
 * (free-model rate limits, balance, key budget) → carrier dispatch (fallbacks) → relay → settle + record.
 */
chatRoutes.post("/chat/completions", async (c) => {
  const startedAt = Date.now();
  const caller = c.get("caller");
  const ctx = c.executionCtx;
  const waitUntil = (p: Promise<unknown>) => ctx.waitUntil(p);
  let markSettled = () => {};
  waitUntil(new Promise<void>((resolve) => (markSettled = resolve)));

  const rc: RequestContext = {
    env: c.env,
    waitUntil,
    genId: newGenerationId(),
    caller,
    requestedModel: "",
    model: "",
    strategy: null,
    // Every attempt also feeds this isolate's failure streaks, which the next request's routing reads.
    attempts: new AttemptLog((a) => isolateHealth().note(a)),
    metadata: null,
    stream: false,
    app: appName(c.req.raw.headers),
    httpReferer: c.req.header("http-referer")?.slice(0, 500) ?? null,
    userAgent: c.req.header("user-agent")?.slice(0, 300) ?? null,
    externalUser: null,
    sessionId: null,
    startedAt,
    markSettled,
    ticket: null,
    served: null,
  };
  // On every answer, errors included, so a client can look up what was recorded for any request.
  c.header("x-generation-id", rc.genId);
  const fail = (err: ApiError, provider: string | null = null) => {
    // Every failure after authentication is recorded with cost 0; nothing is debited.
    void settle(rc, failedOutcome(err.status, err.message, provider));
    return err;
  };

  if (caller.key.isManagement)
    throw fail(new ApiError(403, "This is a management key: it manages API keys through /api/v1/keys and cannot run completions. Use an API key for completions."));

  let parsed: { body: ReturnType<typeof parseChatRequest>; bytes: number };
  try {
    const { json, bytes } = await readJsonObject(c.req.raw, MAX_BODY_BYTES);
    parsed = { body: parseChatRequest(json), bytes };
  } catch (err) {
    throw fail(err instanceof ApiError ? err : new ApiError(400, "The request body could not be read."));
  }
  const { body, bytes } = parsed;
  rc.externalUser = body.user ?? null;
  rc.stream = body.stream === true;
  const catalog = await loadCatalog(c.env, waitUntil);
  // `model`, then the fallbacks in `models`; `:nitro` / `:floor` ask for a sort; answers name ids as sent.
  const chosen = candidateModels(body.model, body.models, { has: (id) => catalog.model(id) !== undefined, resolve: (id) => catalog.resolve(id)?.id }, AUTO_MODEL);
  rc.requestedModel = body.model ?? body.models?.[0] ?? catalog.file.default_model;
  rc.model = "unknown" in chosen ? rc.requestedModel : chosen.candidates[0]!.answerAs;
  if ("unknown" in chosen) throw fail(new ApiError(400, `Model ${chosen.unknown} is not in the catalog. GET /api/v1/models lists the available models.`));
  const { candidates } = chosen;
  rc.strategy = chosen.strategy;
  const level = metadataLevel(c.req.raw.headers);
  if (typeof level === "object") throw fail(new ApiError(400, `X-OpenRouter-Metadata must be "enabled" or "disabled", not "${level.invalid}".`));

  // Each candidate's carriers: those the request fits, balanced by price or ordered by the preferences,
  // those that look down last. Nothing left is a 400 or 404 before anything is held.
  // Live health: the Cron Trigger's snapshot through the isolate memo, and this isolate's failure streaks.
  const health = await routingHealth(c.env, waitUntil);
  const session = body.session_id ?? c.req.header("x-session-id");
  if (session !== undefined && session.length > MAX_ID_CHARS) throw fail(new ApiError(400, `The x-session-id header must be at most ${MAX_ID_CHARS} characters.`));
  rc.sessionId = session ?? null;
  const sticky = session ? { accountId: caller.accountId, id: session } : undefined;
  const policy = { thresholds: healthThresholds(c.env), random: balancing(c.env) ? routingRandom(c.env, sticky) : null };
  const plan = planRoute(candidates, (id) => catalog.endpoints(id), body, { parameters: requestParameters(body), health }, policy);
  if (plan.endpoints.length === 0) {
    // The preferences emptied the list (404); otherwise no candidate takes the request's media or has room for it: the caller's to fix (400).
    if (plan.emptied.length) throw fail(new ApiError(404, plan.emptied[0]!.message));
    if (plan.tooLong.length) throw fail(new ApiError(400, contextTooLongMessage(plan.tooLong)));
    throw fail(new ApiError(400, unsupportedPartsMessage(plan.unsupported)));
  }
  // A priced endpoint makes the request paid (balance, hold); a free one makes it count against the
  // free-model rate limits, in the same ledger call. With both, the ledger says which may serve it.
  const paid = plan.endpoints.some((e) => !isFree(e));
  const free = plan.endpoints.some(isFree);
  const admitted = await accountLedger(c.env, caller.accountId).admit(
    {
      genId: rc.genId,
      keyHash: caller.key.hash,
      limitNano: caller.key.limitNano,
      limitReset: caller.key.limitReset,
      holdNano: paid ? holdNano(body, bytes, plan.endpoints) : 0,
      paid,
      ...(free ? { free: freeLimits(c.env) } : {}),
      abandoned: () => generationRecord(rc, failedOutcome(500, "The request ended without settling (the Worker was stopped); nothing was charged."), startedAt),
    },
    waitUntil,
  );
  if (!admitted.ok) {
    const origin = new URL(c.req.url).origin;
    const modelId = candidates[0]!.modelId;
    if (admitted.reason === "rate_limit") throw fail(rateLimited(admitted, modelId, `${origin}/settings/credits`));
    throw fail(paymentRequired(admitted.reason, caller.key, modelId, origin));
  }
  rc.ticket = admitted.ticket;
  // No free slot left: only the priced endpoints; no money: only the free ones.
  const endpoints = admitted.route === undefined ? plan.endpoints : plan.endpoints.filter((e) => isFree(e) === (admitted.route === "free_only"));
  if (level === "enabled") rc.metadata = { available: endpoints };

  const clientSignal = c.req.raw.signal;
  // Hashed once per request (WebCrypto is async), before any attempt is built.
  const userHash = body.user === undefined ? null : await hashedUser(caller.accountId, body.user);
  // The answer and the record name the model that served, as the caller sent its id.
  const servedBy = (e: PricedEndpoint) => {
    rc.served = e;
    rc.model = plan.candidateOf.get(e)!.answerAs;
  };
  const label = candidates.length > 1 ? candidates.map((x) => x.answerAs).join(", ") : rc.model;
  try {
    if (rc.stream) {
      const served = await dispatch(c.env, label, endpoints, carrierBodies(body, true, userHash), async (call) => {
        if (!call.response.body || !(call.response.headers.get("content-type") ?? "").includes("text/event-stream"))
          throw new UnusableAnswer("the carrier did not answer with an event stream");
      }, rc.attempts, clientSignal);
      servedBy(served.endpoint);
      return new Response(relayStream(rc, body, served.endpoint, served.call, clientSignal), {
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          "x-generation-id": rc.genId,
        },
      });
    }
    const served = await dispatch(c.env, label, endpoints, carrierBodies(body, false, userHash), readCompletion, rc.attempts, clientSignal);
    servedBy(served.endpoint);
    const { completion, outcome } = finishCompletion(rc, body, served.endpoint, served.value, Date.now());
    void settle(rc, outcome);
    return new Response(JSON.stringify(completion), { headers: { "content-type": "application/json", "x-generation-id": rc.genId } });
  } catch (err) {
    if (err instanceof ApiError) throw fail(err, err instanceof CarriersExhausted ? err.provider : null);
    if (clientSignal.aborted) {
      // The caller went away before any carrier answered: record it (499, as nginx names it); no one reads the reply.
      void settle(rc, failedOutcome(499, "The caller closed the request before a carrier answered."));
      return new Response(null, { status: 499 });
    }
    logError("chat request failed", err, { generation: rc.genId });
    throw fail(new ApiError(500, "Internal error while serving the request; nothing was charged."));
  }
});
