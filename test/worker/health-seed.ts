import { env } from "cloudflare:test";
import { attemptRollupStatements } from "../../src/db/endpoint-minutes";

let n = 0;
export type SeedAttempt = { model: string; provider: string; at: number; status: number; latencyMs: number; tokensPerSecond?: number | null };

/**
 * Carrier attempts into endpoint health's minute rollups as flushed records' attempts get there: through
 * the writer (src/db/endpoint-minutes.ts), one record per attempt, in one batch.
 */
export async function rollUpAttempts(rows: SeedAttempt[]): Promise<void> {
  const records = rows.map((r) => ({
    id: `gen-health-seed-${Date.now()}-${n++}`,
    providerResponses: [{ ...r, providerName: r.provider, tokensPerSecond: r.tokensPerSecond ?? null }],
  }));
  await env.DB.batch(attemptRollupStatements(env.DB, JSON.stringify(records)));
}
