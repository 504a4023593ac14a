import { Hono } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";
import { readChatRequest } from "./chat-request";
import { loadCatalog } from "../catalog/load";
import { AUTO_MODEL } from "../catalog/catalog";
import { accountLedger } from "../ledger/isolate-ledgers";
import { holdNano } from "../ledger/hold";
import { dispatch, UnusableAnswer } from "../carriers/dispatch";
import { carrierBodies } from "../carriers/carrier-call";
import { CarriersExhausted } from "../carriers/attempts";
import { readCompletion, finishCompletion } from "../relay/completion";
import { relayStream } from "../relay/stream-relay";
import { appName, newGenerationId, type RequestContext } from "../generations/request-context";
import { failedOutcome, generationRecord, settle } from "../generations/settle";
import { logError } from "../log-error";
import { paymentRequired } from "./payment-required";
import { rateLimited } from "./rate-limited";
import { freeLimits } from "../ledger/free-limits";
import { hashedUser } from "../routing/user-hash";
import { orderEndpoints } from "../routing/order-endpoints";
import { requestParameters } from "../routing/request-parameters";
import { modelShortcut, withShortcutSort } from "../routing/model-shortcuts";

export const chatRoutes = new Hono<AppEnv>();

/**
 * POST /chat/completions — the request path, top to bottom:
 * auth (middleware) → body → catalog → provider preferences → ledger admission (free-model rate limits, balance, key budget)
 * → carrier dispatch → relay → settle + record.
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
    stream: false,
    app: appName(c.req.raw.headers),
    httpReferer: c.req.header("http-referer")?.slice(0, 500) ?? null,
    userAgent: c.req.header("user-agent")?.slice(0, 300) ?? null,
    externalUser: null,
    startedAt,
    markSettled,
    ticket: null,
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

  let parsed: Awaited<ReturnType<typeof readChatRequest>>;
  try {
    parsed = await readChatRequest(c.req.raw);
  } catch (err) {
    throw fail(err instanceof ApiError ? err : new ApiError(400, "The request body could not be read."));
  }
  const { body, bytes } = parsed;
  rc.externalUser = body.user ?? null;
  // Without `model`, the first of `models` is the model (the contract's fallback list; the others are not tried yet).
  const requested = body.model ?? body.models?.[0];
  const catalog = await loadCatalog(c.env, waitUntil);
  // `:nitro` / `:floor` on any model id ask for a sort; the answer still names the id as sent.
  const shortcut = modelShortcut(requested, (id) => catalog.model(id) !== undefined);
  const model = catalog.resolve(shortcut.modelId);
  rc.requestedModel = requested ?? model?.id ?? AUTO_MODEL;
  rc.stream = body.stream === true;
  if (!model) throw fail(new ApiError(400, `Model ${requested} is not in the catalog. GET /api/v1/models lists the available models.`));

  // Provider preferences filter and order the carriers; nothing left is a 404 before anything is held.
  const routed = orderEndpoints(catalog.endpoints(model.id), withShortcutSort(body.provider, shortcut.sort), { parameters: requestParameters(body) });
  if ("emptiedBy" in routed) throw fail(new ApiError(404, routed.message));
  const { endpoints } = routed;
  const paid = !catalog.isFree(model.id);
  const admitted = await accountLedger(c.env, caller.accountId).admit(
    {
      genId: rc.genId,
      keyHash: caller.key.hash,
      limitNano: caller.key.limitNano,
      limitReset: caller.key.limitReset,
      holdNano: paid ? holdNano(body, bytes, endpoints) : 0,
      paid,
      // Free models count against the account's free-model rate limits, in the same ledger call.
      ...(paid ? {} : { free: freeLimits(c.env) }),
      abandoned: () => generationRecord(rc, failedOutcome(500, "The request ended without settling (the Worker was stopped); nothing was charged."), startedAt),
    },
    waitUntil,
  );
  if (!admitted.ok) {
    const origin = new URL(c.req.url).origin;
    if (admitted.reason === "rate_limit") throw fail(rateLimited(admitted, model.id, `${origin}/settings/credits`));
    throw fail(paymentRequired(admitted.reason, caller.key, model.id, origin));
  }
  rc.ticket = admitted.ticket;

  const clientSignal = c.req.raw.signal;
  // Hashed once per request (WebCrypto is async), before any attempt is built.
  const userHash = body.user === undefined ? null : await hashedUser(caller.accountId, body.user);
  try {
    if (rc.stream) {
      const served = await dispatch(c.env, model.id, endpoints, carrierBodies(body, true, userHash), async (call) => {
        if (!call.response.body || !(call.response.headers.get("content-type") ?? "").includes("text/event-stream"))
          throw new UnusableAnswer("the carrier did not answer with an event stream");
      }, clientSignal);
      return new Response(relayStream(rc, body, served.endpoint, served.call, clientSignal), {
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          "x-generation-id": rc.genId,
        },
      });
    }
    const served = await dispatch(c.env, model.id, endpoints, carrierBodies(body, false, userHash), readCompletion, clientSignal);
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
