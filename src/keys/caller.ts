import type { ApiKey } from "../db/schema";
import type { Env } from "../env";
import type { Settings } from "../settings";

/** The authenticated caller, set by the auth middleware (src/api/auth.ts). */
export type Caller = { key: ApiKey; accountId: string };

/** Hono environment of the API: the caller (its auth middleware) and the settings read once per request (src/http/read-settings.ts). */
export type AppEnv = { Bindings: Env; Variables: { caller: Caller; settings: Settings } };
