import type { ApiKey } from "./db/schema";
import type { GuardrailRules } from "./guardrails/rules";
import type { SettingName, Settings, WranglerTomlVar } from "./settings";

/**
 * The Worker's environment. Bindings (D1, KV, Durable Objects, the settle queue) and wrangler.toml's
 * [vars] come from `wrangler types` (worker-configuration.d.ts, `Cloudflare.Env`; `npm run types`
 * regenerates it and `npm run typecheck` fails when it is stale). Every other setting — secrets and
 * optional vars — is named in src/settings.ts's table, which is where they are read and parsed. Carrier
 * API keys are secrets named after catalog.json's carriers, read through `carrierSecret`.
 */
export interface Env extends Cloudflare.Env, SettingVars {}

/** The settings that wrangler.toml's [vars] do not type: each an optional string. */
export type SettingVars = Partial<Record<Exclude<SettingName, WranglerTomlVar>, string>>;

/** The authenticated caller, set by the auth middleware, with the rules of its key's guardrails (docs/teams.md). */
export type Caller = { key: ApiKey; accountId: string; guardrails: readonly GuardrailRules[] };

/** Hono environment of the API: the caller (its auth middleware) and the settings read once per request (src/http/read-settings.ts). */
export type AppEnv = { Bindings: Env; Variables: { caller: Caller; settings: Settings } };
