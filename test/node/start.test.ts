import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/local-service.ts";

// `npm start` as a newcomer runs it, in a fresh state: a few lines (the migrations in one) before its banner,
// none of wrangler's tables; the demo key it prints works.
describe("npm start", () => {
  it("prints at most a few lines before its banner, and the demo key works", async () => {
    const state = mkdtempSync(join(tmpdir(), "switchyard-start-"));
    const port = await freePort();
    const stripePort = await freePort();
    const otlpPort = await freePort();
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
      env: {
        ...process.env,
        PORT: String(port),
        SIM_PORT: String(await freePort()),
        STRIPE_SIM_PORT: String(stripePort),
        OTLP_SIM_PORT: String(otlpPort),
        STATE_DIR: join(state, "wrangler"),
        DEMO_KEY_FILE: join(state, "demo-key"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner within 120 s:\n${out}`)), 120_000);
        const check = () => {
          if (out.includes("Try it:")) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stdout.on("data", check);
        child.on("exit", (code) => reject(new Error(`npm start exited with ${code}:\n${out}`)));
      });
      const before = out
        .slice(0, out.indexOf("Switchyard is running."))
        .split("\n")
        .filter((l) => l.trim() !== "");
      const migrations = readdirSync("migrations").filter((f) => f.endsWith(".sql")).length;
      expect(before).toEqual([`D1 (local): ${migrations} migrations applied.`]);
      expect(out).not.toMatch(/┌|env\.[A-Z_]+ \(/);
      const key = readFileSync(join(state, "demo-key"), "utf8").trim();
      expect(out).toContain(`http://127.0.0.1:${port}/api/v1`);
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/key`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      // The console pays through the Stripe simulator it started.
      expect(out).toContain(`Payments       Stripe simulator at http://127.0.0.1:${stripePort}`);
      expect((await fetch(`http://127.0.0.1:${stripePort}/health`)).status).toBe(200);
      // The local OTLP receiver runs beside it (docs/observability.md).
      expect(out).toContain(`Traces         OTLP receiver at http://127.0.0.1:${otlpPort}/v1/traces`);
      const empty = await fetch(`http://127.0.0.1:${otlpPort}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(empty.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
      rmSync(state, { recursive: true, force: true });
    }
  });
});
