import type { Catalog } from "../catalog/catalog";
import { AUTO_MODEL } from "../catalog/catalog";
import { ApiError } from "../request/errors";
import { MAX_ID_CHARS } from "../request/router-field-schemas";
import { candidateModels, type Candidate } from "../routing/candidate-models";
import { planRoute, routePolicy, type RoutePlan } from "../routing/route-plan";
import type { RouteQuery } from "../routing/route-query";
import { capTooHighMessage, contextTooLongMessage, unproducibleMessage, unsupportedPartsMessage } from "../routing/request-fit";
import { routingHealth } from "../health/routing-health";
import { allowed, allowedEndpoints, refusedMessage, type GuardrailRules } from "../guardrails/rules";
import type { RequestFacts } from "./request-facts";
import type { RouteNames } from "./stages";

export type Plan = RoutePlan & {
  candidates: Candidate[];
  /** The caller asked for routing metadata (`X-OpenRouter-Metadata: enabled`). */
  metadata: boolean;
};

/** A plan, or its refusal; either way what routing named of the request so far (the record names it). */
export type Planned = { names: RouteNames } & ({ plan: Plan } | { refused: ApiError });

/**
 * Catalog → routing: the candidate models (`model`, then `models`), and every endpoint the request may
 * be tried on, in order — fitted to the request, balanced by price or ordered by the preferences, those
 * that look down last (the Cron Trigger's snapshot and this isolate's failure streaks). Nothing left is a
 * 400 or 404, refused before anything is held, with the names known up to the refusal.
 */
export async function planRequest(facts: RequestFacts, query: RouteQuery, catalog: Catalog): Promise<Planned> {
  // `:nitro` / `:floor` ask for a sort; answers name ids as sent.
  const chosen = candidateModels(
    query.model,
    query.models,
    { has: (id) => catalog.model(id) !== undefined, resolve: (id) => catalog.resolve(id)?.id },
    AUTO_MODEL,
  );
  const requestedModel = query.model ?? query.models?.[0] ?? catalog.file.default_model;
  const named: RouteNames = { requestedModel, model: "unknown" in chosen ? requestedModel : chosen.candidates[0]!.answerAs, strategy: null, sessionId: null };
  if ("unknown" in chosen)
    return { names: named, refused: new ApiError(400, `Model ${chosen.unknown} is not in the catalog. GET /api/v1/models lists the available models.`) };
  const { candidates } = chosen;
  const refused = unservable(candidates, catalog, query.output);
  if (refused) return { names: named, refused };
  const routed = { ...named, strategy: chosen.strategy };
  if (typeof query.metadata === "object")
    return { names: routed, refused: new ApiError(400, `X-OpenRouter-Metadata must be "enabled" or "disabled", not "${query.metadata.invalid}".`) };
  const { session } = query;
  if (session !== undefined && session.length > MAX_ID_CHARS)
    return {
      names: routed,
      refused: new ApiError(400, `The x-session-id (or x-claude-code-session-id, session-id) header must be at most ${MAX_ID_CHARS} characters.`),
    };
  const names = { ...routed, sessionId: session ?? null };
  // The key's guardrails leave out every endpoint they forbid, before anything else decides: routing never falls back to one.
  const { guardrails } = facts.caller;
  // Each candidate's allowed endpoints are filtered once, for the check and for routing alike.
  const allowedOf = guardrails.length ? new Map(candidates.map((x) => [x.modelId, allowedEndpoints(catalog.endpoints(x.modelId), guardrails)])) : undefined;
  const endpointsOf = allowedOf
    ? (id: string) => allowedOf.get(id) ?? allowedEndpoints(catalog.endpoints(id), guardrails)
    : (id: string) => catalog.endpoints(id);
  if (allowedOf && [...allowedOf.values()].every((e) => e.length === 0)) return { names, refused: forbidden(candidates, catalog, guardrails) };

  const health = await routingHealth(facts.env, facts.waitUntil, facts.settings);
  const sticky = session ? { accountId: facts.caller.accountId, id: session } : undefined;
  const plan = planRoute(
    candidates,
    endpointsOf,
    query,
    { parameters: query.parameters, ...(query.adapted ? { adapted: query.adapted } : {}), health },
    routePolicy(facts.settings, sticky),
  );
  if (plan.endpoints.length === 0) return { names, refused: nothingLeft(plan, query.capField) };
  return { names, plan: { ...plan, candidates, metadata: query.metadata === "enabled" } };
}

/** Candidates of another output (an embeddings model answers POST /embeddings, never a completion; a completion model never embeds), or none configured. */
function unservable(candidates: Candidate[], catalog: Catalog, output: RouteQuery["output"]): ApiError | null {
  const other = candidates.find((x) => !catalog.model(x.modelId)?.output_modalities.includes(output));
  if (other)
    return new ApiError(
      400,
      output === "text"
        ? `Model ${other.answerAs} is an embeddings model: it answers POST /api/v1/embeddings, not completions. GET /api/v1/models lists the completion models.`
        : `Model ${other.answerAs} is not an embeddings model. GET /api/v1/embeddings/models lists the embeddings models.`,
    );
  // No configured carrier serves any candidate (their keys are not set): nothing to try, nothing held.
  if (candidates.every((x) => catalog.endpoints(x.modelId).length === 0))
    return new ApiError(
      503,
      `No carrier can serve ${candidates.length > 1 ? "these models" : `model ${candidates[0]!.answerAs}`} now: none of its carriers is configured.`,
    );
  return null;
}

/** The 403 of a request whose every candidate endpoint the key's guardrails forbid: which guardrail refused which, by which rule. */
function forbidden(candidates: Candidate[], catalog: Catalog, guardrails: readonly GuardrailRules[]): ApiError {
  const refusals = candidates.flatMap((x) => catalog.endpoints(x.modelId).map((e) => allowed(e, guardrails)!));
  return new ApiError(403, refusedMessage(refusals));
}

/**
 * Why no endpoint is left: the preferences emptied the list (404); otherwise no candidate returns as many
 * tokens as its cap, has room for it, produces its output modalities or takes its media: the caller's to fix (400).
 */
function nothingLeft(plan: RoutePlan, capField: string): ApiError {
  if (plan.emptied.length) return new ApiError(404, plan.emptied[0]!.message);
  if (plan.capTooHigh.length) return new ApiError(400, capTooHighMessage(plan.capTooHigh, capField));
  if (plan.tooLong.length) return new ApiError(400, contextTooLongMessage(plan.tooLong, capField));
  if (plan.unproducible.length) return new ApiError(400, unproducibleMessage(plan.unproducible));
  return new ApiError(400, unsupportedPartsMessage(plan.unsupported));
}
