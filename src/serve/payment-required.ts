import type { ApiKey } from "../db/schema";
import { nanoToUsdString } from "../catalog/money";
import { windowEnd } from "../keys/usage-windows";
import { ApiError } from "../request/errors";
import type { Shortfall } from "../request/hold";

/**
 * The 402 for a refused admission. `metadata.limit_source` tells a key's budget (`key_limit`: raise the
 * key's limit or wait for its reset) from the balance (`credits`: add credits), so a client can tell
 * which to fix. With something left but not enough for the request (`shortfall`), the message gives the
 * figures in OpenRouter's words: the completion tokens asked for against those affordable (fewer
 * max_tokens, or more credits), or the prompt against what can be paid of it. A balance refusal says
 * whether the balance itself is spent (at or below zero) or is held for requests in flight (`heldNano`,
 * money reserved until they settle: `metadata.held_usd`), which waiting for them also fixes.
 */
export function paymentRequired(
  reason: "balance" | "key_limit",
  key: ApiKey,
  modelId: string,
  origin: string,
  shortfall: Shortfall | null,
  heldNano = 0,
): ApiError {
  const credits = `${origin}/settings/credits`;
  const resetsAt = reason === "key_limit" ? windowEnd(key.limitReset, Date.now()) : null;
  const reset = resetsAt === null ? {} : { limit_reset: key.limitReset, resets_at: new Date(resetsAt).toISOString() };
  // Held money matters only to a balance refusal.
  const heldUsd = reason === "balance" && heldNano > 0 ? nanoToUsdString(heldNano) : null;
  const source =
    reason === "balance" ? { limit_source: "credits", ...(heldUsd === null ? {} : { held_usd: heldUsd }) } : { limit_source: "key_limit", ...reset };
  const inFlight = heldUsd === null ? "" : ` ($${heldUsd} of the balance is held for requests in flight until they finish)`;
  const waitReset = resetsAt === null ? "" : `, or wait for its ${key.limitReset} reset at ${new Date(resetsAt).toISOString()}`;
  const raise =
    reason === "balance" ? `To increase, visit ${credits} and add more credits.` : `To increase, raise the key's limit at ${origin}/settings/keys${waitReset}.`;
  if (shortfall?.kind === "completion")
    return new ApiError(
      402,
      `This request requires more credits, or fewer max_tokens. You requested up to ${shortfall.requestedTokens} tokens, but can only afford ${shortfall.affordableTokens}${payer(reason)}${inFlight}. ${raise}`,
      { ...source, requested_tokens: shortfall.requestedTokens, affordable_tokens: shortfall.affordableTokens },
    );
  if (shortfall?.kind === "prompt")
    return new ApiError(
      402,
      `Prompt tokens limit exceeded: ${shortfall.promptTokens} > ${shortfall.affordablePromptTokens}. The prompt of this request may be billed up to ${shortfall.promptTokens} tokens on ${modelId}; ${reason === "key_limit" ? "this API key's remaining limit" : "the balance"} pays for ${shortfall.affordablePromptTokens}${inFlight}. Shorten it, or: ${raise}`,
      { ...source, prompt_tokens: shortfall.promptTokens, affordable_prompt_tokens: shortfall.affordablePromptTokens },
    );
  if (heldUsd !== null)
    return new ApiError(
      402,
      `Insufficient credits for ${modelId}: the balance is not spent but held for requests in flight ($${heldUsd} reserved until they finish), leaving nothing for this one. Retry when they have finished, or add credits at ${credits}`,
      source,
    );
  if (reason === "balance")
    return new ApiError(402, `Insufficient credits for ${modelId}: the balance is at or below zero. Add credits at ${credits}`, { limit_source: "credits" });
  const limit = nanoToUsdString(key.limitNano ?? 0);
  const reached =
    resetsAt === null ? `its credit limit of $${limit}` : `its ${key.limitReset} credit limit of $${limit}; it resets at ${new Date(resetsAt).toISOString()}`;
  return new ApiError(
    402,
    `This API key has reached ${reached}. Raise the key's limit at ${origin}/settings/keys; the account's credits are added at ${credits}`,
    source,
  );
}

/** Who could not pay, in the message: the key's remaining limit, or (implicitly) the balance. */
function payer(reason: "balance" | "key_limit"): string {
  return reason === "key_limit" ? " with this API key's remaining limit" : "";
}
