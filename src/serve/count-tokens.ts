import type { Context } from "hono";
import type { AppEnv } from "../env";
import { loadCatalog } from "../catalog/load";
import { ApiError } from "../request/errors";
import { estimatePromptTokens } from "../request/token-estimate";
import type { CallerProtocol } from "../protocols/inbound";

/**
 * A token count (`POST /messages/count_tokens`): our prompt estimate (src/request/token-estimate.ts) for
 * the model named, with its media allowances — the one the hold and the fit use, so it errs high (its
 * bound: docs/money.md). Free: nothing is held, charged or recorded.
 */
export async function countTokens(c: Context<AppEnv>, protocol: CallerProtocol): Promise<Response> {
  try {
    if (!protocol.readPrompt) throw new ApiError(404, "This API has no token count.");
    const body = await protocol.readPrompt(c.req.raw);
    const catalog = await loadCatalog(c.env, (p) => c.executionCtx.waitUntil(p));
    const model = catalog.resolve(body.model);
    if (!model) throw new ApiError(400, `Model ${body.model ?? ""} is not in the catalog. GET /api/v1/models lists the available models.`);
    const endpoint = catalog.endpoints(model.id)[0]!;
    return c.json({ input_tokens: estimatePromptTokens(body, endpoint.partTokens) });
  } catch (err) {
    const refused = err instanceof ApiError ? err : new ApiError(400, "The request body could not be read.");
    return c.json(protocol.errorBody(refused), refused.status, refused.headers);
  }
}
