import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/local-service.ts";

// Stopping `npm start` by its pid (SIGTERM or SIGINT to the npm process alone, as a process manager or
// `kill <pid>` does) stops everything it started: tsx, the service's node process, wrangler, workerd.

/** The state letter of a process from /proc (null once it is gone; `Z` a zombie, as good as gone). */
function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!;
  } catch {
    return null;
  }
}

/** Every process under `root` (children, their children…), from /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const c of children.get(pid) ?? []) (found.push(c), walk(c));
  };
  walk(root);
  return found;
}

const commandOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
};

const CASES = [
  { signal: "SIGTERM", when: "running" },
  { signal: "SIGINT", when: "running" },
  // Before its banner: wrangler started, the service not answering yet. Until start.ts handled signals from
  // its first line, one here (or one just as the banner was printed, on a loaded machine) killed it outright
  // and left wrangler running.
  { signal: "SIGTERM", when: "starting" },
] as const;

describe("stopping npm start by its pid", () => {
  for (const { signal, when } of CASES)
    it(`${signal} to the npm process ${when === "running" ? "" : "while the service starts "}stops tsx, wrangler and workerd`, async () => {
      const state = mkdtempSync(join(tmpdir(), "switchyard-stop-"));
      const port = await freePort();
      // Its own process group: whatever is left at the end is cleaned up with it, by its id.
      const npm = spawn("npm", ["start"], {
        env: {
          ...process.env,
          PORT: String(port),
          SIM_PORT: String(await freePort()),
          STRIPE_SIM_PORT: String(await freePort()),
          OTLP_SIM_PORT: String(await freePort()),
          STATE_DIR: join(state, "wrangler"),
          DEMO_KEY_FILE: join(state, "demo-key"),
        },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      const exited = once(npm, "exit");
      let started: number[] = [];
      try {
        let out = "";
        npm.stderr.on("data", (d: Buffer) => (out += d.toString()));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`npm start did not get to "${when}" within 400 s:\n${out}`)), 400_000);
          // "starting": wrangler dev's workerd is up on the service's port (polled from /proc, bounded by the timer;
          // the migrations' workerd has no such socket) and the banner not out yet.
          const poll =
            when === "starting"
              ? setInterval(() => {
                  if (
                    !descendants(npm.pid!)
                      .map(commandOf)
                      .some((c) => c.includes("workerd serve") && c.includes(`entry=127.0.0.1:${port}`))
                  )
                    return;
                  clearInterval(poll);
                  clearTimeout(timer);
                  if (out.includes("Try it:")) reject(new Error("the service was up before its start-up could be caught"));
                  else resolve();
                }, 50)
              : undefined;
          npm.stdout.on("data", (d: Buffer) => {
            out += d.toString();
            if (when === "running" && out.includes("Try it:")) (clearTimeout(timer), resolve());
          });
          npm.on("exit", (code) => (clearTimeout(timer), clearInterval(poll), reject(new Error(`npm start exited with ${code}:\n${out}`))));
        });
        started = descendants(npm.pid!);
        const commands = started.map(commandOf).join("\n");
        expect(commands).toMatch(/tsx/);
        expect(commands).toMatch(/wrangler/);
        expect(commands).toMatch(/workerd/);

        process.kill(npm.pid!, signal);
        const timer = setTimeout(() => npm.kill("SIGKILL"), 60_000);
        const [code, killedBy] = (await exited) as [number | null, NodeJS.Signals | null];
        clearTimeout(timer);
        // A stop, not a death: start.ts handled the signal (npm's exit says how its script ended).
        expect({ code, killedBy }, `npm start's last output:\n${out.slice(-4000)}`).toEqual({ code: 0, killedBy: null });
        // npm exits while wrangler may still be stopping its children: wait (bounded) until none is left.
        const alive = () => started.filter((pid) => ![null, "Z"].includes(processState(pid)));
        const deadline = Date.now() + 30_000;
        while (alive().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        const left = alive().map((pid) => `${pid} ${commandOf(pid)}`);
        // On failure, what npm start said last (how it stopped) comes with the processes left.
        expect(left, `npm start's last output:\n${out.slice(-4000)}`).toEqual([]);
      } finally {
        // What a failed stop left: npm's group, and each process it started (wrangler has a group of its own).
        for (const target of [-npm.pid!, ...started])
          try {
            process.kill(target, "SIGKILL");
          } catch {
            // gone already
          }
        if (npm.exitCode === null && npm.signalCode === null) await exited;
        rmSync(state, { recursive: true, force: true });
      }
    }, 540_000); // start-up on a loaded machine, then a bounded stop
});
