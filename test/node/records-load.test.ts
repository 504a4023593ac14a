import { describe, it, expect } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// `npm run records-load` at a small size, so CI runs the load test's code path: batching, duplicate and
// crashed deliveries, every check and the report (bench/RESULTS.md and docs/scale.md have the run at a
// million records).
describe("npm run records-load", () => {
  it("stores 3,000 records through storeBatch, some batches twice or crashed first: each record once in R2, the rollups' sums exact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-records-load-test-"));
    try {
      const json = join(dir, "figures.json");
      const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          "node_modules/.bin/tsx",
          [
            "scripts/records-load.ts",
            ...["--records", "3000", "--accounts", "12", "--days", "2", "--window-min", "240"],
            ...["--duplicate-every", "8", "--crash-every", "8", "--time-limit-s", "100", "--json", json],
          ],
          { timeout: 110_000, maxBuffer: 16 * 1024 * 1024 },
          (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }),
        ),
      );
      expect(run.code, run.stderr.slice(-3000)).toBe(0);
      for (const row of ["| batches (flush window 240 min, ≤ 100 records) |", "| read back |", "| D1 as stored:", "| checks | all hold |"])
        expect(run.stdout).toContain(row);
      const f = JSON.parse(readFileSync(json, "utf8")) as {
        ok: boolean;
        failures: string[];
        plan: { batches: number };
        store: { duplicates: number; crashes: number; crashes_by_step: Record<string, number> };
        seeded: { requests: number };
        index: { records: number; objects: number; writing: number };
        listed: { objects: number };
        verified: { records: number; missing: number; twice: number };
        sizes: { stored: { generations: number; parts: number; size_after: number; live_bytes: number } };
      };
      expect(f.failures).toEqual([]);
      expect(f.ok).toBe(true);
      expect(f.seeded.requests).toBe(3000);
      expect(f.index).toMatchObject({ records: 3000, writing: 0 });
      expect(f.listed.objects).toBe(f.index.objects);
      expect(f.verified).toMatchObject({ records: 3000, missing: 0, twice: 0 });
      // Every 8th batch twice, every 8th (another one) crashed first, after each step in turn.
      expect(f.store.duplicates).toBe(Math.ceil(f.plan.batches / 8));
      expect(f.store.crashes).toBeGreaterThanOrEqual(4);
      expect(Object.keys(f.store.crashes_by_step).sort()).toEqual(["acknowledged", "claimed", "committed", "written"]);
      // No record in D1: its parts' index, its rollups (and the attempts) only.
      expect(f.sizes.stored.generations).toBe(0);
      expect(f.sizes.stored.parts).toBe(f.index.objects);
      expect(f.sizes.stored.size_after).toBe(f.sizes.stored.live_bytes);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
