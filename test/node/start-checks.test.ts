import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { nodeVersionProblem, satisfiesEngines } from "../../scripts/start-checks.ts";

// `npm start` refuses, in one clear line, what it would otherwise get wrong without a word: an option npm
// took as its own config (`npm start --real` without `--` would start simulated), an unsupported Node.

describe("npm start's checks", () => {
  it("`npm start --real` (without --) refuses, naming --real and `npm start -- --real`, and starts nothing", async () => {
    const npm = spawn("npm", ["start", "--real"], {
      env: { ...process.env, PORT: "1", SIM_PORT: "1", STRIPE_SIM_PORT: "1", OTLP_SIM_PORT: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    npm.stdout.on("data", (d: Buffer) => (out += d.toString()));
    npm.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => npm.kill("SIGKILL"), 50_000);
    const [code] = (await once(npm, "exit")) as [number | null];
    clearTimeout(timer);
    expect(code).toBe(2);
    expect(out).toContain("npm took --real as npm's own config, and npm start would ignore it");
    expect(out).toContain("npm start -- --real");
    expect(out).not.toContain("D1 (local)");
  });

  it("checks the Node version against package.json's engines.node, with a clear message", () => {
    const range = (JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } }).engines.node;
    expect(satisfiesEngines(process.versions.node, range)).toBe(true); // the Node running this, and a range npm start reads
    expect(nodeVersionProblem("18.19.0", ">=20")).toBe(
      "Node 18.19.0 is not supported: Switchyard needs Node >=20 (package.json engines). Install a supported Node and run npm start again.",
    );
    expect(nodeVersionProblem("v20.0.0", ">=20")).toBeNull();
    expect(nodeVersionProblem("22.3.1", ">=20.6")).toBeNull();
    expect(nodeVersionProblem("20.5.9", ">=20.6")).toContain("Node 20.5.9 is not supported");
    expect(nodeVersionProblem("20.11.0", ">=18.19 || >=20")).toBeNull();
    expect(nodeVersionProblem("20.11.0", "^20")).toBeNull();
    expect(nodeVersionProblem("20.18.3", "^20.19.0 || >=22.12.0")).toContain("Node 20.18.3 is not supported");
    expect(nodeVersionProblem("20.19.0", "^20.19.0 || >=22.12.0")).toBeNull();
    expect(nodeVersionProblem("21.7.0", "^20.19.0 || >=22.12.0")).toContain("Node 21.7.0 is not supported");
    expect(nodeVersionProblem("22.11.0", "^20.19.0 || >=22.12.0")).toContain("not supported");
    expect(nodeVersionProblem("24.1.0", "^20.19.0 || >=22.12.0")).toBeNull();
    expect(nodeVersionProblem("20.11.0", "20.x")).toContain('npm start reads only ">=version" and "^version" bounds');
  });
});
