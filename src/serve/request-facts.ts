import type { Context } from "hono";
import type { Env } from "../env";
import type { AppEnv, Caller } from "../keys/caller";
import type { Settings } from "../settings";
import { newGenerationId } from "../generations/generation-id";
import type { InboundApi } from "../generations/record";
import type { Sealer } from "../protocols/inbound/caller-protocol";
import type { CarrierAccess } from "../carriers/carrier-call";
import type { AccountKeys } from "../carriers/carrier-keys";
import { noteByokError } from "../byok/byok-store";
import { logError } from "../log-error";
import { ApiError } from "../request/errors";
import { reasoningSealer } from "./reasoning-sealer";

/**
 * What is known of a model request when it opens (after authentication), whichever API it came in, and
 * fixed from then on: its generation id, the caller, what its headers say, the deployment's settings
 * (read once, here) and the account's sealer. The stages after it return what they decide (src/serve/stages.ts).
 */
export type RequestFacts = Readonly<{
  env: Env;
  settings: Settings;
  waitUntil: (p: Promise<unknown>) => void;
  genId: string;
  caller: Caller;
  startedAt: number;
  /** The API the caller spoke (its caller protocol's `api`). */
  inboundApi: InboundApi;
  app: string | null;
  httpReferer: string | null;
  userAgent: string | null;
  headers: Headers;
  /** Aborts when the caller goes away. */
  signal: AbortSignal;
  /** This deployment's origin, for the links errors give. */
  origin: string;
  carriers: CarrierAccess;
  sealer: Sealer | null;
}>;

/** A request's facts from its request, as it opens. */
export function requestFacts(
  env: Env,
  settings: Settings,
  waitUntil: (p: Promise<unknown>) => void,
  caller: Caller,
  req: Request,
  inboundApi: InboundApi,
): RequestFacts {
  const startedAt = Date.now();
  const headers = req.headers;
  return {
    env,
    settings,
    waitUntil,
    genId: newGenerationId(startedAt),
    caller,
    startedAt,
    inboundApi,
    app: appName(headers),
    httpReferer: headers.get("http-referer")?.slice(0, 500) ?? null,
    userAgent: headers.get("user-agent")?.slice(0, 300) ?? null,
    headers,
    signal: req.signal,
    origin: new URL(req.url).origin,
    // Embeddings are served with the platform's keys only (docs/byok.md).
    carriers: { env, settings, ...(inboundApi === "embeddings" ? {} : { account: accountKeys(env, settings, waitUntil, caller) }) },
    sealer: reasoningSealer(settings, caller.accountId),
  };
}

/** The account's own carrier keys for this request (docs/byok.md); undefined when it has none, or BYOK is off (no keyring). */
function accountKeys(env: Env, settings: Settings, waitUntil: (p: Promise<unknown>) => void, caller: Caller): AccountKeys | undefined {
  if (caller.byok.length === 0 || settings.BYOK_ENCRYPTION_KEYS.length === 0) return undefined;
  return {
    accountId: caller.accountId,
    entries: caller.byok,
    ring: settings.BYOK_ENCRYPTION_KEYS,
    feeMilli: Math.round(settings.BYOK_FEE_PERCENT * 1000),
    refused: (entry, message) =>
      waitUntil(
        noteByokError(env.DB, caller.accountId, entry.id, message, Date.now()).catch((err: unknown) => logError("byok: noting a refused key failed", err)),
      ),
  };
}

/** The facts of the request a route serves, in the API it came in; its generation id is on every answer. */
export function openFacts(c: Context<AppEnv>, api: InboundApi): RequestFacts {
  const facts = requestFacts(c.env, c.var.settings, (p) => c.executionCtx.waitUntil(p), c.get("caller"), c.req.raw, api);
  c.header("x-generation-id", facts.genId);
  return facts;
}

/** A management key manages keys; it never runs a model. */
export function refuseManagementKey(caller: Caller): void {
  if (caller.key.isManagement)
    throw new ApiError(403, "This is a management key: it manages API keys through /api/v1/keys and cannot run completions. Use an API key for completions.");
}

/** The calling app: `X-Title` (or `X-OpenRouter-Title`), else the host of `HTTP-Referer`. */
export function appName(headers: Headers): string | null {
  const title = headers.get("x-title") ?? headers.get("x-openrouter-title");
  if (title) return title.slice(0, 200);
  const referer = headers.get("http-referer");
  if (!referer) return null;
  try {
    return new URL(referer).host || null;
  } catch {
    return null;
  }
}
