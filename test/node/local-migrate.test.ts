import { describe, it, expect, afterAll, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { migrate } from "../../scripts/local-service.ts";

// `npm start` and every test service apply the D1 migrations with wrangler first; on a loaded machine one of
// wrangler's workerd starts can fail, which failed a whole CI run with no output to say why.
const wrangler = resolve("test/node/fixtures/flaky-wrangler.mjs");
const root = mkdtempSync(join(tmpdir(), "switchyard-migrate-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("local migrations", () => {
  it("a failed apply is run once more, and its output printed", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      await migrate(wrangler, join(root, "flaky"));
      expect(errors.mock.calls.flat().join("\n")).toContain("The Workers runtime failed to start.");
      expect(logs.mock.calls.flat()).toEqual(["D1 (local): 2 migrations applied."]);
    } finally {
      errors.mockRestore();
      logs.mockRestore();
    }
  });

  it("a second failure is an error that carries wrangler's output", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await expect(migrate(wrangler, join(root, "always-fails"), true)).rejects.toThrow(/exited with 1 twice[\s\S]*The Workers runtime failed to start\./);
    } finally {
      errors.mockRestore();
    }
  });
});
