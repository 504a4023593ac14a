import type { Context } from "hono";
import type { AppEnv } from "../keys/caller";
import { ApiError } from "../request/errors";
import { failedOutcome, type Outcome } from "../request/outcome";
import type { InboundApi } from "../generations/record";
import type { CallerProtocol } from "../protocols/inbound";
import { CarriersExhausted } from "../carriers/attempts";
import { isolateHealth } from "../health/isolate-health";
import { logError } from "../log-error";
import { openFacts, refuseManagementKey, type RequestFacts } from "./request-facts";
import { RequestTrail, settle } from "./settle";
import type { Stages } from "./stages";

/** What a request came to: the caller's response, and the outcome to settle (now, or when its stream ends). */
export type Answered = { response: Response; outcome: Outcome | Promise<Outcome> };

/** An API's stages after opening (read → plan → admit → dispatch → answer), each kept in `stages` as it returns. */
export type ApiStages = (facts: RequestFacts, trail: RequestTrail, stages: Stages) => Promise<Answered>;

/**
 * One model request in any API, top to bottom: open (its facts, after the route's authentication) → the
 * API's stages → settle, exactly once, here: what a carrier served is debited and recorded; anything else
 * is recorded at cost 0, with what the stages decided until it stopped. Every answer, errors included
 * (`errorBody`: in the caller's protocol), carries `x-generation-id`.
 */
export async function serveApi(c: Context<AppEnv>, api: InboundApi, errorBody: CallerProtocol["errorBody"], run: ApiStages): Promise<Response> {
  const facts = openFacts(c, api);
  // Every attempt also feeds this isolate's failure streaks, which the next request's routing reads.
  const trail = new RequestTrail(facts.waitUntil, (a) => isolateHealth().note(a));
  const stages: Stages = {};
  let answered: Answered;
  try {
    refuseManagementKey(facts.caller);
    answered = await run(facts, trail, stages);
  } catch (err) {
    answered = failure(facts, c, errorBody, err);
  }
  const { outcome } = answered;
  if (outcome instanceof Promise) facts.waitUntil(outcome.then((o) => settle(facts, trail, stages, o)));
  else void settle(facts, trail, stages, outcome);
  return answered.response;
}

/** A request refused or failed before anything was served: the caller's error in its protocol (`errorBody`), recorded at cost 0. */
function failure(facts: RequestFacts, c: Context<AppEnv>, errorBody: CallerProtocol["errorBody"], err: unknown): { response: Response; outcome: Outcome } {
  if (!(err instanceof ApiError) && facts.signal.aborted) {
    // The caller went away before any carrier answered: recorded as 499 (as nginx names it); no one reads the reply.
    return { response: new Response(null, { status: 499 }), outcome: failedOutcome(499, "The caller closed the request before a carrier answered.") };
  }
  if (!(err instanceof ApiError)) logError(`${facts.inboundApi} request failed`, err, { generation: facts.genId });
  const refused = err instanceof ApiError ? err : new ApiError(500, "Internal error while serving the request; nothing was charged.");
  return {
    response: c.json(errorBody(refused), refused.status, refused.headers),
    outcome: failedOutcome(refused.status, refused.message, refused instanceof CarriersExhausted ? refused.provider : null),
  };
}
