import { describe, it, expect, afterAll, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, migrate, startLocalService } from "../../scripts/local-service.ts";

// Starting the local service (`npm start`, every test's service) on a loaded machine: wrangler's migrations
// (one of its workerd starts can fail) and `wrangler dev` (its port can be taken between choosing and binding)
// each failed a whole CI run with no output to say why.
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

describe("wrangler dev exiting before it answers", () => {
  it("on a port of its choosing, the service starts wrangler once more on another port, printing why it stopped", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const service = await startLocalService({ wrangler, port: 0, persistTo: join(root, "dev-flaky"), quiet: true, payments: "off", cronEveryMs: 0 });
      try {
        expect((await fetch(`${service.url}/api/v1/providers`)).status).toBe(200);
        expect(errors.mock.calls.flat().join("\n")).toMatch(/wrangler dev exited with 1 before answering; starting it once more[\s\S]*Address already in use/);
      } finally {
        await service.stop();
      }
    } finally {
      errors.mockRestore();
    }
  });

  it("on a port the caller named, the start fails with wrangler's last lines", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const port = await freePort();
      await expect(startLocalService({ wrangler, port, persistTo: join(root, "dev-named"), quiet: true, payments: "off", cronEveryMs: 0 })).rejects.toThrow(
        /wrangler dev exited with 1 before answering:\n[\s\S]*Address already in use/,
      );
    } finally {
      errors.mockRestore();
    }
  });
});
