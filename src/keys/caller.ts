import type { ApiKey, MemberRole } from "../db/schema";
import type { Env } from "../env";
import type { Settings } from "../settings";
import type { GuardrailRules } from "../guardrails/rules";
import type { ByokEntry } from "../byok/byok-store";

/** The authenticated caller, set by the auth middleware (src/api/auth.ts), with the rules of its key's guardrails (docs/teams.md). */
export type Caller = { key: ApiKey; accountId: string; guardrails: readonly GuardrailRules[]; byok: readonly ByokEntry[]; actor?: ManagementActor };

/** Who a management key acts as (set by `requireManagementKey`): the member who made it, with their current role; the operator's keys (no member) act as an owner. */
export type ManagementActor = { memberId: string | null; role: MemberRole; email: string | null };

/** Hono environment of the API: the caller (its auth middleware) and the settings read once per request (src/http/read-settings.ts). */
export type AppEnv = { Bindings: Env; Variables: { caller: Caller; settings: Settings } };
