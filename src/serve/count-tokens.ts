import type { Context } from "hono";
import type { Env } from "../env";
import type { AppEnv, Caller } from "../keys/caller";
import { loadCatalog } from "../catalog/load";
import { isFree, type PricedEndpoint } from "../catalog/catalog";
import type { PartTokens } from "../catalog/modalities";
import { ApiError } from "../request/errors";
import { allowed, allowedEndpoints, refusedMessage } from "../guardrails/rules";
import type { ChatRequest } from "../request/chat-request";
import { estimatePromptTokens } from "../request/token-estimate";
import type { CallerProtocol } from "../protocols/inbound";
import { carrierProtocol, CARRIER_PROTOCOL_NAMES } from "../protocols/outbound";
import { carrierTokenCount } from "../carriers/carrier-token-count";
import type { CarrierAccess } from "../carriers/carrier-call";
import { carrierSecret } from "../catalog/carrier-secret";
import { keyUsageNow, totalsNow } from "../ledger/usage-now";
import { limitRemainingNano } from "../keys/key-budget";
import { paymentRequired } from "./payment-required";
import { tokenCountRateLimited } from "./rate-limited";
import { logError } from "../log-error";
import { withPreset } from "../presets/resolve-preset";

/** Which count the answer carries (the `X-Token-Count` header): the carrier's own, or our estimate. */
type Counted = { tokens: number; source: "exact" | "estimate"; fallback?: string };

/**
 * A token count (`POST /messages/count_tokens`), for a key that may spend (docs/api/messages.md): not a
 * management key (403); within the key's COUNT_TOKENS_PER_MINUTE (429, taken before the body is read);
 * a body within the model APIs' limit (413); for a paid model, an account with credit left and a key
 * under its limit (402, as a request would be); a model the key's guardrails forbid at every carrier, 403 (docs/teams.md). The count is exact for a model whose carrier counts
 * tokens itself (Anthropic's free endpoint, when configured): the carrier's count of the prompt as the
 * completion would send it. Otherwise — or when that carrier fails — our prompt estimate
 * (src/request/token-estimate.ts, the one the hold uses; its error: docs/money.md). `X-Token-Count` says
 * which (`exact`, `estimate`), and `X-Token-Count-Fallback` why a carrier's count was not used. A carrier
 * refusing the caller's input (400) is the caller's 400. Nothing is held, charged or recorded.
 */
export async function countTokens(c: Context<AppEnv>, protocol: CallerProtocol): Promise<Response> {
  const caller = c.get("caller");
  // Read once here; the steps below take their numbers.
  const s = c.var.settings;
  try {
    if (!protocol.readPrompt) throw new ApiError(404, "This API has no token count.");
    if (caller.key.isManagement)
      throw new ApiError(403, "This is a management key: it manages API keys through /api/v1/keys and cannot count tokens. Use an API key.");
    await takeCount(c.env, s.COUNT_TOKENS_PER_MINUTE, caller.key.hash);
    // A preset's model and system prompt count as the completion would send them (docs/teams.md#presets).
    const { body } = await withPreset(c.env.DB, caller.accountId, await readPrompt(protocol, c.req.raw), s.PRESET_CACHE_MS);
    const catalog = await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p));
    const model = catalog.resolve(body.model);
    if (!model) throw new ApiError(400, `Model ${body.model ?? ""} is not in the catalog. GET /api/v1/models lists the available models.`);
    // The key's guardrails as for a completion: a carrier they forbid never counts (it would be sent the prompt).
    const all = catalog.endpoints(model.id);
    const endpoints = allowedEndpoints(all, caller.guardrails);
    if (all.length && !endpoints.length) throw new ApiError(403, refusedMessage(all.map((e) => allowed(e, caller.guardrails)!)));
    if (!endpoints.some(isFree)) await mayPay(c.env, caller, model.id, new URL(c.req.url).origin);
    const counted = await count({ env: c.env, settings: s }, body, endpoints, catalog.partTokens(model.id), c.req.raw.signal);
    const headers: Record<string, string> = { "X-Token-Count": counted.source };
    if (counted.fallback) headers["X-Token-Count-Fallback"] = headerText(counted.fallback);
    return c.json({ input_tokens: counted.tokens }, 200, headers);
  } catch (err) {
    if (!(err instanceof ApiError)) logError("token count failed", err);
    const refused = err instanceof ApiError ? err : new ApiError(500, "Internal error while counting tokens.");
    return c.json(protocol.errorBody(refused), refused.status, refused.headers);
  }
}

/** One count from the key's counter (a RateLimiterObject named by the key's hash: per key, nothing global); 429 over it. */
async function takeCount(env: Env, limit: number, keyHash: string): Promise<void> {
  const decision = await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`count-tokens:${keyHash}`)).take(limit, 60_000);
  if (!decision.ok) throw tokenCountRateLimited(limit, decision.retryAfterMs, Date.now());
}

async function readPrompt(protocol: CallerProtocol, req: Request): Promise<ChatRequest> {
  try {
    return await protocol.readPrompt!(req);
  } catch (err) {
    throw err instanceof ApiError ? err : new ApiError(400, "The request body could not be read.");
  }
}

/** A paid model's count needs what a request needs to be admitted: credit left on the account, and on the key when it has a limit (402 otherwise). */
async function mayPay(env: Env, caller: Caller, modelId: string, origin: string): Promise<void> {
  const { key, accountId } = caller;
  const [totals, usage] = await Promise.all([totalsNow(env, accountId), key.limitNano === null ? null : keyUsageNow(env, accountId, key.hash)]);
  if (totals.creditsNano - totals.usageNano <= 0) throw paymentRequired("balance", key, modelId, origin, null);
  if (usage && limitRemainingNano(key, usage) === 0) throw paymentRequired("key_limit", key, modelId, origin, null);
}

/** The carrier's own count when the model has a configured carrier that counts (the first such endpoint); else, or when it fails, our estimate. */
async function count(access: CarrierAccess, body: ChatRequest, endpoints: PricedEndpoint[], partTokens: PartTokens, signal: AbortSignal): Promise<Counted> {
  const estimate = (): number => estimatePromptTokens(body, partTokens);
  // The catalog lists only configured carriers; the key is looked at here too, as a carrier call would.
  const counter = endpoints.find((e) => carrierProtocol(e).tokenCount !== null && carrierSecret(access.env, e.provider) !== undefined);
  if (!counter) return { tokens: estimate(), source: "estimate" };
  const counted = await carrierTokenCount(access, counter, body, signal);
  const name = counter.providerEntry.name;
  if ("tokens" in counted) return { tokens: counted.tokens, source: "exact" };
  if ("rejected" in counted) throw new ApiError(counted.rejected.status, `Carrier ${name} rejected the request: ${counted.rejected.reason}`);
  return { tokens: estimate(), source: "estimate", fallback: `${name}'s count failed: ${counted.failed}` };
}

/** A reason as a header value: printable ASCII only (a carrier's text may hold anything), at most 200 characters. */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 200);
}
