import type * as z from "zod";
import type { Settings } from "../settings";
import { ApiError } from "../request/errors";
import { invalidInput } from "../request/json-body";
import type { ObservabilityDestination } from "../db/schema";
import { newWebhookSecret } from "../webhooks/sign";
import { config as collectorConfig, webhookConfig, type createDestinationBody, type updateDestinationBody } from "./observability-input";
import { destinationBox, headerHints, needsSealing, openSecrets, sealSecrets } from "../observability/destination-secrets";
import { createDestination, findDestination, updateDestination, type DestinationFields } from "../observability/destination-store";

/**
 * Creating and changing an account's observability destinations (docs/observability.md), once for both ways in:
 * the management API (observability-routes.ts) and the console's page (src/console/observability/). Inputs are
 * already checked against observability-input.ts; what is refused here (no sealing key, the account's limit, a
 * config wrong for the destination's kind) is an ApiError each way in shows in its own words.
 */

export type CreateDestination = z.infer<typeof createDestinationBody>;
export type UpdateDestination = z.infer<typeof updateDestinationBody>;
/** Who changes what, and when: every lookup and write is scoped to `accountId`. */
export type DestinationScope = {
  d1: D1Database;
  settings: Pick<Settings, "REASONING_SEAL_KEY" | "REASONING_SEAL_KEYS_PREVIOUS" | "OBSERVABILITY_DESTINATIONS_PER_ACCOUNT">;
  accountId: string;
  now: number;
};

/** The input as the schema takes it, or the 400 naming the first problem. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error);
}

export const cannotSeal = () =>
  new ApiError(
    503,
    "This deployment cannot store a destination's secrets (a webhook's signing secret, header values): its REASONING_SEAL_KEY secret is not set (docs/deploy.md). A collector without headers can still be created.",
  );

/** Creates the destination; a webhook's signing secret is made here and returned in full this once. */
export async function addDestination(
  x: DestinationScope,
  body: CreateDestination,
): Promise<{ created: ObservabilityDestination; signingSecret: string | null }> {
  const target =
    body.type === "webhook"
      ? { endpoint: body.config.url, encoding: "json" as const, method: body.config.method ?? "POST" }
      : { endpoint: body.config.endpoint, encoding: body.config.encoding ?? "protobuf", method: "POST" as const };
  // Sealed to the destination's id: it is chosen here. A webhook always has a secret; a collector, its headers if any.
  const id = crypto.randomUUID();
  const secrets = { headers: body.config.headers ?? {}, signingSecret: body.type === "webhook" ? newWebhookSecret() : null };
  const box = destinationBox(x.settings);
  if (!box && needsSealing(secrets)) throw cannotSeal();
  const fields: DestinationFields = {
    type: body.type,
    name: body.name,
    enabled: body.enabled ?? true,
    ...target,
    ...(await sealSecrets(box, id, secrets)),
    samplingRate: body.sampling_rate ?? 1,
    apiKeyHashes: body.api_key_hashes ? JSON.stringify(body.api_key_hashes) : null,
    privacyMode: true,
    broadcastCost: body.broadcast_generation_cost ?? false,
    broadcastIdentity: body.broadcast_generation_identity ?? false,
    broadcastRequestContext: body.broadcast_generation_request_context ?? false,
  };
  const max = x.settings.OBSERVABILITY_DESTINATIONS_PER_ACCOUNT;
  const created = await createDestination(x.d1, id, x.accountId, fields, max, x.now);
  if (!created)
    throw new ApiError(
      400,
      `An account can have at most ${max} observability destinations (OBSERVABILITY_DESTINATIONS_PER_ACCOUNT); delete one to create another.`,
    );
  return { created, signingSecret: secrets.signingSecret };
}

/** Changes the account's destination `id`; undefined when it has none by that id (another account's included). */
export async function changeDestination(x: DestinationScope, id: string, body: UpdateDestination): Promise<ObservabilityDestination | undefined> {
  const found = await findDestination(x.d1, x.accountId, id);
  if (!found) return undefined;
  const fields: Partial<DestinationFields> = {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    ...(body.sampling_rate !== undefined ? { samplingRate: body.sampling_rate } : {}),
    ...(body.api_key_hashes !== undefined ? { apiKeyHashes: body.api_key_hashes === null ? null : JSON.stringify(body.api_key_hashes) } : {}),
    ...(body.broadcast_generation_cost !== undefined ? { broadcastCost: body.broadcast_generation_cost } : {}),
    ...(body.broadcast_generation_identity !== undefined ? { broadcastIdentity: body.broadcast_generation_identity } : {}),
    ...(body.broadcast_generation_request_context !== undefined ? { broadcastRequestContext: body.broadcast_generation_request_context } : {}),
    ...(body.config !== undefined ? await configFields(x, found, body.config) : {}),
  };
  return updateDestination(x.d1, x.accountId, id, fields, x.now);
}

/**
 * Headers as given, except a value sent back as its masked form (a GET's config PATCHed back, the console's
 * edit form unchanged): the stored one stays. Only then are the stored headers opened; the merged headers are
 * sealed again.
 */
async function mergeHeaders(x: DestinationScope, found: ObservabilityDestination, given: Record<string, string> | undefined) {
  const hints = headerHints(found);
  const keeps = ([k, v]: [string, string]) => hints[k] !== undefined && v === hints[k];
  const entries = Object.entries(given ?? {});
  const box = destinationBox(x.settings);
  if (entries.length > 0 && !box) throw cannotSeal();
  let stored: Record<string, string> = {};
  if (entries.some(keeps)) {
    const opened = await openSecrets(box, found);
    if (!opened) throw new ApiError(400, "The stored header values no longer open (the key that sealed them is gone): send them in full.");
    stored = opened.headers;
  }
  const headers = Object.fromEntries(entries.map(([k, v]) => [k, keeps([k, v]) ? (stored[k] ?? v) : v]));
  const { headersSealed, headerHints: hinted } = await sealSecrets(box, found.id, { headers, signingSecret: null });
  return { headersSealed, headerHints: hinted };
}

/** A change's config, checked against the destination's kind; header values sent back masked keep the stored ones. */
async function configFields(x: DestinationScope, found: ObservabilityDestination, given: Record<string, unknown>): Promise<Partial<DestinationFields>> {
  if (found.type === "webhook") {
    const w = parseInput(webhookConfig, given);
    return { endpoint: w.url, method: w.method ?? found.method, ...(await mergeHeaders(x, found, w.headers)) };
  }
  const o = parseInput(collectorConfig, given);
  return { endpoint: o.endpoint, encoding: o.encoding ?? found.encoding, ...(await mergeHeaders(x, found, o.headers)) };
}
