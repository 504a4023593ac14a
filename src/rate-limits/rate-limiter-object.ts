import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * A sliding-window attempt counter for one subject (an email or a client address, named by a hash; an
 * API key's token counts, named by the key's hash). One object per subject, so limits hold across
 * isolates and nothing global is shared; SQLite-backed, so a restart does not reset a limit. Used by the
 * console's sign-in and sign-up (src/console/auth/rate-limit.ts) and by `POST /messages/count_tokens`
 * (src/serve/count-tokens.ts).
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

  /** Forgets every attempt (a successful sign-in clears its email's counter). */
  reset(): void {
    this.sql.exec("DELETE FROM hits");
  }

  /** Runs one window after the latest attempt (each `take` moves it), when every attempt has aged out. */
  override async alarm(): Promise<void> {
    this.sql.exec("DELETE FROM hits");
  }
}
