import { describe, it, expect } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// `npm run archive-load` at a small size, so CI runs the load test's code path: seeding, both archive
// phases, every check, the lookups and the report (docs/scale.md has the run at a million records).
describe("npm run archive-load", () => {
  it("archives 5,000 records with a retention of 30 days, then the rest; every check holds and the report has its figures", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-archive-load-test-"));
    try {
      const json = join(dir, "figures.json");
      const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          "node_modules/.bin/tsx",
          ["scripts/archive-load.ts", "--records", "5000", "--accounts", "10", "--samples", "50", "--time-limit-s", "100", "--json", json],
          { timeout: 110_000, maxBuffer: 16 * 1024 * 1024 },
          (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }),
        ),
      );
      expect(run.code, run.stderr.slice(-3000)).toBe(0);
      for (const row of [
        "| seeding rate |",
        "| archive, retention 30 days |",
        "| compression (NDJSON ÷ gzip) |",
        "| R2 bytes per record |",
        "| checks | all hold |",
      ])
        expect(run.stdout).toContain(row);
      const f = JSON.parse(readFileSync(json, "utf8")) as {
        ok: boolean;
        failures: string[];
        seed: { records: number };
        retention: { records: number; check: { d1: { records: number; before_cutoff: number }; index: { records: number; writing: number } } };
        rest: { records: number };
        archive: { objects: number; compression: number };
        read: { samples: number; not_found: number; lookup_p50_ms: number };
        sizes: { seeded: { d1_size_after: number; live_bytes: number }; after_rest: { generations: number } };
      };
      expect(f.failures).toEqual([]);
      expect(f.ok).toBe(true);
      expect(f.seed.records).toBe(5000);
      // Records are spread evenly over 40 days: the 10 oldest days (a quarter) leave D1 first, then the rest.
      expect(f.retention.records).toBe(1250);
      expect(f.retention.check.d1).toMatchObject({ records: 3750, before_cutoff: 0 });
      expect(f.retention.check.index).toMatchObject({ records: 1250, writing: 0 });
      expect(f.rest.records).toBe(3750);
      expect(f.sizes.after_rest.generations).toBe(0);
      expect(f.archive.objects).toBe(10 * 40); // one part per account-day
      expect(f.archive.compression).toBeGreaterThan(2);
      expect(f.read).toMatchObject({ samples: 50, not_found: 0 });
      expect(f.read.lookup_p50_ms).toBeGreaterThan(0);
      // D1's own size figure is SQLite's pages in use, as read from its files.
      expect(f.sizes.seeded.d1_size_after).toBe(f.sizes.seeded.live_bytes);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
