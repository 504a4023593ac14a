import * as z from "zod";
import { ApiError } from "../request/errors";

/**
 * The inputs of `/observability/destinations` (docs/observability.md), validated with zod: strict objects (a
 * field not listed is a 400 naming it). Only what Switchyard can do is accepted: the OpenTelemetry collector
 * kind, metadata only, a filter by key.
 */

/** The contract's kinds this router exports to; every other kind is a 400 naming these. */
export const SUPPORTED_TYPES = ["otel-collector", "webhook"] as const;

const MAX_HEADERS = 20;

/** https anywhere; plain http only to this machine (a local collector, as `npm start`'s receiver). */
const endpoint = z
  .string()
  .max(2048)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === "https:" || (u.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(u.hostname));
    } catch {
      return false;
    }
  }, "must be an https URL (plain http only to 127.0.0.1 or localhost)");

const headers = z
  .record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, "a header name"), z.string().max(4096))
  .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
  .optional();

export const config = z.strictObject({ endpoint, headers, encoding: z.enum(["protobuf", "json"]).optional() });
/** A webhook's config; `signing_secret` is what a GET shows of it (masked), accepted back and ignored. */
export const webhookConfig = z.strictObject({ url: endpoint, method: z.enum(["POST", "PUT"]).optional(), headers, signing_secret: z.string().optional() });

const apiKeyHashes = z
  .array(z.string().regex(/^[0-9a-f]{64}$/, "a key's hash (64 hex digits)"))
  .min(1)
  .max(1000)
  .nullable();
const noContent = z.boolean().refine((v) => v, {
  message:
    "must be true: generation records hold no prompt or completion content, so there is none to export (docs/observability.md#privacy); privacy_mode is always on here",
});
const noFilterRules = z.null({ message: "filter rules are not supported: api_key_hashes filters a destination by key" });

const common = {
  name: z.string().trim().min(1).max(100),
  enabled: z.boolean(),
  sampling_rate: z.number().min(0).max(1),
  api_key_hashes: apiKeyHashes,
  privacy_mode: noContent,
  filter_rules: noFilterRules,
  broadcast_generation_cost: z.boolean(),
  broadcast_generation_identity: z.boolean(),
  broadcast_generation_request_context: z.boolean(),
  workspace_id: z.uuid(),
};

const createFields = {
  name: common.name,
  enabled: common.enabled.optional(),
  sampling_rate: common.sampling_rate.optional(),
  api_key_hashes: common.api_key_hashes.optional(),
  privacy_mode: common.privacy_mode.optional(),
  filter_rules: common.filter_rules.optional(),
  broadcast_generation_cost: common.broadcast_generation_cost.optional(),
  broadcast_generation_identity: common.broadcast_generation_identity.optional(),
  broadcast_generation_request_context: common.broadcast_generation_request_context.optional(),
  workspace_id: common.workspace_id.optional(),
};

export const createDestinationBody = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("otel-collector"), config, ...createFields }),
  z.strictObject({ type: z.literal("webhook"), config: webhookConfig, ...createFields }),
]);

export const updateDestinationBody = z
  .strictObject({
    config: z.record(z.string(), z.unknown()).optional(), // checked against the destination's kind (config, webhookConfig)
    name: common.name.optional(),
    enabled: common.enabled.optional(),
    sampling_rate: common.sampling_rate.optional(),
    api_key_hashes: common.api_key_hashes.optional(),
    privacy_mode: common.privacy_mode.optional(),
    filter_rules: common.filter_rules.optional(),
    broadcast_generation_cost: common.broadcast_generation_cost.optional(),
    broadcast_generation_identity: common.broadcast_generation_identity.optional(),
    broadcast_generation_request_context: common.broadcast_generation_request_context.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, "give at least one field to change");

/** A kind the contract names but this router does not export to: a 400 saying which it does. */
export function refuseUnsupportedType(body: Record<string, unknown>): void {
  const type = body.type;
  if (typeof type === "string" && !(SUPPORTED_TYPES as readonly string[]).includes(type))
    throw new ApiError(
      400,
      `Destination type \`${type}\` is not supported: Switchyard exports to ${SUPPORTED_TYPES.map((t) => `\`${t}\``).join(", ")}: an OpenTelemetry collector over OTLP/HTTP, or a signed JSON webhook.`,
    );
}
