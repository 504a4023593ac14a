import type { Env } from "../env";
import type { Settings } from "../settings";
import type { MemberRole } from "../db/schema";

/** The signed-in member of a console request, in their account, with their current role. `token` is the session cookie's value (never stored). */
export type SignedIn = { accountId: string; memberId: string; email: string; role: MemberRole; token: string };

/**
 * Hono environment of the console: the Worker bindings, the CSP nonce, the session (null = signed out),
 * and the origins other than ours a page's forms may lead to (Stripe's checkout, after the pay form's redirect).
 */
export type ConsoleEnv = { Bindings: Env; Variables: { nonce: string; session: SignedIn | null; formTargets?: readonly string[]; settings: Settings } };
