import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * A sliding-window attempt counter for one subject (an email or a client address, named by a hash; an
 * API key's token counts, named by the key's hash; an account's Stripe calls). One object per subject, so
 * limits hold across isolates; SQLite-backed, so a restart does not reset a limit. Used by the console's
 * sign-in and sign-up (src/console/auth/rate-limit.ts), by `POST /messages/count_tokens`
 * (src/serve/count-tokens.ts), and for the Stripe API calls the console makes
 * (src/console/credits/stripe-allowance.ts: one object per account, and one for the whole deployment's
 * page reconciliation, asked at most once per page load).
 */
export class RateLimiterObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS hits (at INTEGER NOT NULL)");
  }

  /** Records an attempt if fewer than `limit` happened in the last `windowMs`; otherwise refuses it. */
  take(limit: number, windowMs: number): RateDecision {
    const now = Date.now();
    this.sql.exec("DELETE FROM hits WHERE at <= ?", now - windowMs);
    const rows = this.sql.exec<{ n: number; oldest: number | null }>("SELECT COUNT(*) AS n, MIN(at) AS oldest FROM hits").one();
    if (rows.n >= limit) return { ok: false, retryAfterMs: Math.max(1000, (rows.oldest ?? now) + windowMs - now) };
    this.sql.exec("INSERT INTO hits (at) VALUES (?)", now);
    void this.ctx.storage.setAlarm(now + windowMs);
    return { ok: true };
  }

  /** Records up to `wanted` calls, as many as fit under `limit` in the last `windowMs`: how many it recorded (0 = none fit). */
  takeUpTo(wanted: number, limit: number, windowMs: number): number {
    const now = Date.now();
    this.sql.exec("DELETE FROM hits WHERE at <= ?", now - windowMs);
    const used = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM hits").one().n;
    const granted = Math.max(0, Math.min(wanted, limit - used));
    for (let i = 0; i < granted; i++) this.sql.exec("INSERT INTO hits (at) VALUES (?)", now);
    if (granted > 0) void this.ctx.storage.setAlarm(now + windowMs);
    return granted;
  }

  /** How many were recorded in the last `windowMs` (the log of what a limit let through). */
  count(windowMs: number): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM hits WHERE at > ?", Date.now() - windowMs).one().n;
  }

  /** Forgets every attempt (a successful sign-in clears its email's counter). */
  reset(): void {
    this.sql.exec("DELETE FROM hits");
  }

  /** Runs one window after the latest attempt (each `take` moves it), when every attempt has aged out. */
  override async alarm(): Promise<void> {
    this.sql.exec("DELETE FROM hits");
  }
}
