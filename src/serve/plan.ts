import type { Catalog } from "../catalog/catalog";
import { AUTO_MODEL } from "../catalog/catalog";
import type { ChatRequest } from "../request/chat-request";
import { ApiError } from "../request/errors";
import { MAX_ID_CHARS } from "../request/router-field-schemas";
import { candidateModels, type Candidate } from "../routing/candidate-models";
import { planRoute, type RoutePlan } from "../routing/route-plan";
import { requestParameters } from "../routing/request-parameters";
import { metadataLevel } from "../routing/routing-metadata";
import { healthThresholds } from "../routing/health-order";
import { balancing, routingRandom } from "../routing/routing-random";
import { capTooHighMessage, contextTooLongMessage, unproducibleMessage, unsupportedPartsMessage } from "../routing/request-fit";
import { routingHealth } from "../health/routing-health";
import { thinkingLeftOut } from "../protocols/outbound/thinking-rules";
import type { RequestContext } from "./request-context";

export type Plan = RoutePlan & { candidates: Candidate[]; /** The caller asked for routing metadata (`X-OpenRouter-Metadata: enabled`). */ metadata: boolean };

/**
 * Catalog → routing: the candidate models (`model`, then `models`), and every endpoint the request may
 * be tried on, in order — fitted to the request, balanced by price or ordered by the preferences, those
 * that look down last (the Cron Trigger's snapshot and this isolate's failure streaks). Records on `rc`
 * what the answer and the record name. Nothing left is a 400 or 404, before anything is held; `capField`
 * is the caller protocol's name of the completion cap, which a refusal of it names.
 */
export async function planRequest(
  rc: RequestContext,
  body: ChatRequest,
  catalog: Catalog,
  headers: Headers,
  { output = "text", capField = "max_tokens" }: { output?: "text" | "embeddings"; capField?: string } = {},
): Promise<Plan> {
  // `:nitro` / `:floor` ask for a sort; answers name ids as sent.
  const chosen = candidateModels(
    body.model,
    body.models,
    { has: (id) => catalog.model(id) !== undefined, resolve: (id) => catalog.resolve(id)?.id },
    AUTO_MODEL,
  );
  rc.requestedModel = body.model ?? body.models?.[0] ?? catalog.file.default_model;
  rc.model = "unknown" in chosen ? rc.requestedModel : chosen.candidates[0]!.answerAs;
  if ("unknown" in chosen) throw new ApiError(400, `Model ${chosen.unknown} is not in the catalog. GET /api/v1/models lists the available models.`);
  const { candidates } = chosen;
  // An embeddings model answers POST /embeddings, never a completion; a completion model never embeds.
  const other = candidates.find((x) => !catalog.model(x.modelId)?.output_modalities.includes(output));
  if (other)
    throw new ApiError(
      400,
      output === "text"
        ? `Model ${other.answerAs} is an embeddings model: it answers POST /api/v1/embeddings, not completions. GET /api/v1/models lists the completion models.`
        : `Model ${other.answerAs} is not an embeddings model. GET /api/v1/embeddings/models lists the embeddings models.`,
    );
  // No configured carrier serves any candidate (their keys are not set): nothing to try, nothing held.
  if (candidates.every((x) => catalog.endpoints(x.modelId).length === 0))
    throw new ApiError(
      503,
      `No carrier can serve ${candidates.length > 1 ? "these models" : `model ${candidates[0]!.answerAs}`} now: none of its carriers is configured.`,
    );
  rc.strategy = chosen.strategy;
  const level = metadataLevel(headers);
  if (typeof level === "object") throw new ApiError(400, `X-OpenRouter-Metadata must be "enabled" or "disabled", not "${level.invalid}".`);

  const health = await routingHealth(rc.env, rc.waitUntil);
  // Claude Code and Codex name their session in headers of their own: the same sticky key (its prompt cache stays with one carrier).
  const session = body.session_id ?? headers.get("x-session-id") ?? headers.get("x-claude-code-session-id") ?? headers.get("session-id") ?? undefined;
  if (session !== undefined && session.length > MAX_ID_CHARS)
    throw new ApiError(400, `The x-session-id (or x-claude-code-session-id, session-id) header must be at most ${MAX_ID_CHARS} characters.`);
  rc.sessionId = session ?? null;
  const sticky = session ? { accountId: rc.caller.accountId, id: session } : undefined;
  const policy = { thresholds: healthThresholds(rc.env), random: balancing(rc.env) ? routingRandom(rc.env, sticky) : null };
  const plan = planRoute(
    candidates,
    (id) => catalog.endpoints(id),
    body,
    { parameters: requestParameters(body), adapted: (e) => thinkingLeftOut(body, e), health },
    policy,
  );
  if (plan.endpoints.length === 0) {
    // The preferences emptied the list (404); otherwise no candidate returns as many tokens as its cap, has room for it, produces its output modalities or takes its media: the caller's to fix (400).
    if (plan.emptied.length) throw new ApiError(404, plan.emptied[0]!.message);
    if (plan.capTooHigh.length) throw new ApiError(400, capTooHighMessage(plan.capTooHigh, capField));
    if (plan.tooLong.length) throw new ApiError(400, contextTooLongMessage(plan.tooLong, capField));
    if (plan.unproducible.length) throw new ApiError(400, unproducibleMessage(plan.unproducible));
    throw new ApiError(400, unsupportedPartsMessage(plan.unsupported));
  }
  return { ...plan, candidates, metadata: level === "enabled" };
}
