import type { Context } from "hono";
import type { Env } from "../../env";
import type { RateDecision } from "../../rate-limits/rate-limiter-object";
import { sha256Hex } from "../http/encoding";

/**
 * Attempt limits of the console, each counted by its own `RateLimiterObject` (a Durable Object
 * named by a hash of the subject): per email and per client for sign-in, per client for sign-up.
 * A successful sign-in clears its email's counter. The API's token count has counters of its own (one per key).
 */
export const SIGN_IN_PER_EMAIL = { limit: 5, windowMs: 15 * 60_000 } as const;
export const SIGN_IN_PER_CLIENT = { limit: 20, windowMs: 15 * 60_000 } as const;
export const SIGN_UP_PER_CLIENT = { limit: 10, windowMs: 60 * 60_000 } as const;

type Policy = { limit: number; windowMs: number };

/** The client's address as Cloudflare reports it; requests without one share a single counter. */
export function clientAddress(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}

async function limiter(env: Env, subject: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(await sha256Hex(subject)));
}

/** Takes one attempt from every counter; refused when any is exhausted (retry after the longest wait). */
async function takeAll(env: Env, counters: [subject: string, policy: Policy][]): Promise<RateDecision> {
  const decisions = await Promise.all(counters.map(async ([subject, p]) => (await limiter(env, subject)).take(p.limit, p.windowMs)));
  const refused = decisions.filter((d) => !d.ok);
  if (refused.length === 0) return { ok: true };
  return { ok: false, retryAfterMs: Math.max(...refused.map((d) => (d.ok ? 0 : d.retryAfterMs))) };
}

export function takeSignInAttempt(env: Env, email: string, client: string): Promise<RateDecision> {
  return takeAll(env, [
    [`sign-in:email:${email}`, SIGN_IN_PER_EMAIL],
    [`sign-in:client:${client}`, SIGN_IN_PER_CLIENT],
  ]);
}

export async function clearSignInAttempts(env: Env, email: string): Promise<void> {
  await (await limiter(env, `sign-in:email:${email}`)).reset();
}

export function takeSignUpAttempt(env: Env, client: string): Promise<RateDecision> {
  return takeAll(env, [[`sign-up:client:${client}`, SIGN_UP_PER_CLIENT]]);
}
