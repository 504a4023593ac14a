import type { Env } from "../env";

/** The signed-in account of a console request. `token` is the session cookie's value (never stored). */
export type SignedIn = { accountId: string; email: string; token: string };

/** Hono environment of the console: the Worker bindings, the CSP nonce and the session (null = signed out). */
export type ConsoleEnv = { Bindings: Env; Variables: { nonce: string; session: SignedIn | null } };
