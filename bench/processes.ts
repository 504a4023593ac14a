// Process management for the benchmark: the carrier simulator as its own Node process, Workers in
// Miniflare (each instance with its own workerd process), memory readings from /proc, and a cleanup
// list that stops everything this process started — by pid, on success, on error and on SIGINT/SIGTERM.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { freePort } from "../scripts/local-service.ts";
import type { Readable } from "node:stream";
import { Miniflare, type MiniflareOptions } from "miniflare";

export { freePort };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * `--client-priority`: the bench process (load generator, pacer, the clocks every figure is read on) runs at
 * a higher priority than what it measures, as a client on another machine would not wait for a core. The
 * processes it starts inherit that priority, so each is put back to the bench's own, every thread of it
 * (threads inherit their creator's). Undefined: not raised.
 */
let measuredNice: number | undefined;

/** Raises this process's priority to `nice` (below its own; needs root or CAP_SYS_NICE). */
export function raiseOwnPriority(nice: number): { own: number } {
  const own = os.getPriority(0);
  if (nice >= own) throw new Error(`--client-priority ${nice} is not above the bench's own priority (nice ${own})`);
  try {
    os.setPriority(0, nice);
  } catch (err) {
    throw new Error(`--client-priority ${nice} needs root or CAP_SYS_NICE (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  measuredNice = own;
  return { own };
}

/** Puts a started process and its descendants, thread by thread, back to the bench's own priority. */
function lowerToMeasured(pid: number | undefined): void {
  if (measuredNice === undefined || pid === undefined) return;
  for (const p of [pid, ...descendantsOf(pid).map((d) => d.pid)]) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue; // already gone
    }
    for (const tid of tasks) {
      try {
        os.setPriority(Number(tid), measuredNice);
      } catch {
        // a thread that ended meanwhile
      }
    }
  }
}

/**
 * Things to stop, newest first; every step is bounded in time. Each step may also have a synchronous
 * fallback that runs when the process exits without the steps having run: Miniflare's own SIGINT/SIGTERM
 * hook stops its workerd and exits at once, which would otherwise leave the simulator behind.
 */
export class Cleanup {
  private readonly steps: Array<{ name: string; run: () => Promise<void>; atExit?: () => void }> = [];
  private running: Promise<void> | undefined;

  constructor() {
    process.on("exit", () => {
      for (const step of this.steps.reverse()) {
        try {
          step.atExit?.();
        } catch {
          // best effort at exit
        }
      }
    });
  }

  add(name: string, run: () => Promise<void>, atExit?: () => void): () => void {
    const step = { name, run, atExit };
    this.steps.push(step);
    return () => {
      const i = this.steps.indexOf(step);
      if (i >= 0) this.steps.splice(i, 1);
    };
  }

  runAll(): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length > 0) {
        const step = this.steps.pop()!;
        let timer: NodeJS.Timeout | undefined;
        const limit = new Promise<void>(
          (resolve) =>
            (timer = setTimeout(() => {
              console.error(`cleanup: ${step.name} did not stop within 15 s`);
              resolve();
            }, 15_000)),
        );
        await Promise.race([step.run().catch((err: unknown) => console.error(`cleanup: ${step.name}:`, err)), limit]);
        clearTimeout(timer);
      }
    })();
    return this.running;
  }
}

type ProcStat = { pid: number; ppid: number; comm: string };

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const ppid = Number(text.slice(close + 2).split(" ")[1]);
    return { pid, ppid, comm };
  } catch {
    return undefined; // gone
  }
}

function allProcesses(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) out.push(stat);
  }
  return out;
}

/** Every process below `pid` (children, grandchildren, …). */
export function descendantsOf(pid: number): ProcStat[] {
  const all = allProcesses();
  const found: ProcStat[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const p of all)
      if (p.ppid === parent) {
        found.push(p);
        queue.push(p.pid);
      }
  }
  return found;
}

const alive = (pid: number) => readStat(pid) !== undefined;

const TICK_MS = 10; // USER_HZ = 100 on Linux

/** CPU time (user + system) of one process, ms; 0 when gone. */
function processCpuMs(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // stat fields 14–17 (utime, stime, cutime, cstime), counted from after the command name: indexes 11–14.
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * TICK_MS;
  } catch {
    return 0;
  }
}

export type CpuSnapshot = { at: number; busyMs: number; oursMs: number };

/** The whole machine's busy CPU time and the part this process and its descendants used. */
export function cpuSnapshot(): CpuSnapshot {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  const busy = (cpu[0] ?? 0) + (cpu[1] ?? 0) + (cpu[2] ?? 0) + (cpu[5] ?? 0) + (cpu[6] ?? 0) + (cpu[7] ?? 0);
  let ours = processCpuMs(process.pid);
  for (const p of descendantsOf(process.pid)) ours += processCpuMs(p.pid);
  return { at: performance.now(), busyMs: busy * TICK_MS, oursMs: ours };
}

/** Share of the machine's CPU capacity that processes other than ours used between two snapshots, %. */
export function foreignCpuPercent(a: CpuSnapshot, b: CpuSnapshot, cores: number): number {
  const capacity = (b.at - a.at) * cores;
  if (capacity <= 0) return NaN;
  return Math.max(0, ((b.busyMs - a.busyMs - (b.oursMs - a.oursMs)) / capacity) * 100);
}

/** Resident set now and its high-water mark, in KiB (Linux /proc). */
export function memoryOf(pid: number): { rssKb: number; hwmKb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rssKb: field("VmRSS"), hwmKb: field("VmHWM") };
  } catch {
    return undefined;
  }
}

/** Resets the process's VmHWM to its current RSS (`5` → /proc/<pid>/clear_refs); false where not allowed. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Stops one process we started: SIGTERM, then SIGKILL after `graceMs`; then any of its descendants left behind. */
async function stopTree(child: ChildProcess, graceMs = 5000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const below = descendantsOf(pid).map((p) => p.pid);
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  }
  for (const p of below) {
    if (!alive(p)) continue;
    try {
      process.kill(p, "SIGTERM");
    } catch {
      continue;
    }
    for (let i = 0; i < 20 && alive(p); i++) await sleep(100);
    if (alive(p)) process.kill(p, "SIGKILL");
  }
}

export type SimulatorProcess = { url: string; pid: number; stop(): Promise<void> };

/**
 * `tsx simulator/main.ts --port <free port> --profiles off` as its own process; resolves once it answers /health.
 * Profiles off: no per-carrier latency, so results stay comparable with runs from before profiles.
 */
export async function startSimulatorProcess(root: string, cleanup: Cleanup): Promise<SimulatorProcess> {
  const port = await freePort();
  const child = spawn(`${root}/node_modules/.bin/tsx`, ["simulator/main.ts", "--port", String(port), "--host", "127.0.0.1", "--profiles", "off"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_ENV: "production" },
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const stop = () => stopTree(child);
  const signalAll = () => {
    for (const pid of [child.pid, ...descendantsOf(child.pid ?? -1).map((p) => p.pid)]) if (pid !== undefined && alive(pid)) process.kill(pid, "SIGTERM");
  };
  const forget = cleanup.add("simulator", stop, signalAll);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the simulator exited with ${child.exitCode}: ${output}`);
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the simulator did not answer within 30 s: ${output}`);
    await sleep(100);
  }
  lowerToMeasured(child.pid);
  // The process whose memory and CPU is the simulator's: tsx runs it in a child node process.
  const nodeChild = descendantsOf(child.pid!).find((p) => p.comm === "node");
  return {
    url,
    pid: nodeChild?.pid ?? child.pid!,
    stop: async () => {
      forget();
      await stop();
    },
  };
}

export type PeerProcess = { name: string; url: string; pid: number; log: RuntimeLog; stop(): Promise<void> };

/**
 * `node bench/peers/portkey.js --port <free port>`: Portkey's gateway as its own Node process (this Node, no
 * wrapper, so `pid` is the process that does the work), bound to 127.0.0.1; resolves once GET / answers and
 * its start-up banner is out. Its output after that goes to `log` (the report shows any line). The peer
 * package must be installed (bench/peer-gateways.ts ensurePeers).
 */
export async function startPortkeyProcess(root: string, cleanup: Cleanup): Promise<PeerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ["portkey.js", "--port", String(port)], {
    cwd: `${root}/bench/peers`,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_ENV: "production" },
  });
  const log = new RuntimeLog();
  let ready = false;
  let output = "";
  const take = (d: Buffer) => {
    if (ready) log.push(d.toString());
    else output = (output + d.toString()).slice(-4000);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  const stop = () => stopTree(child);
  const signal = () => {
    if (child.pid !== undefined && alive(child.pid)) process.kill(child.pid, "SIGTERM");
  };
  const forget = cleanup.add("portkey", stop, signal);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Portkey's gateway exited with ${child.exitCode}: ${output}`);
    try {
      const res = await fetch(`${url}/`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      // Listening on loopback (the launcher's line), answering, and done printing its start-up banner (≈ 1 s of spinner).
      if (res.ok && output.includes(`listening 127.0.0.1:${port}`) && output.includes("Ready for connections")) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`Portkey's gateway did not answer within 30 s: ${output}`);
    await sleep(100);
  }
  ready = true;
  lowerToMeasured(child.pid);
  return {
    name: "portkey",
    url,
    pid: child.pid!,
    log,
    stop: async () => {
      forget();
      await stop();
    },
  };
}

/** Recent runtime output of one workerd, kept for the report (router errors end up here). */
export class RuntimeLog {
  lines = 0;
  readonly recent: string[] = [];
  /** Sees every line (bench/gc-trace.ts reads V8's GC trace from it). */
  onLine?: (line: string) => void;
  push(text: string): void {
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      this.lines++;
      this.onLine?.(line);
      this.recent.push(line.slice(0, 500));
      if (this.recent.length > 40) this.recent.shift();
    }
  }
}

export type Runtime = {
  name: string;
  mf: Miniflare;
  /** Where the bench sends its traffic: the Worker's direct socket, or Miniflare's entry (`serveThroughEntry`). */
  url: URL;
  /** Miniflare's own address: its entry Worker, which forwards to ours. */
  entryUrl: URL;
  /** The workerd process this Miniflare instance started, when it could be found. */
  workerdPid: number | undefined;
  log: RuntimeLog;
  /** Constructor to `ready`, ms. */
  readyMs: number;
  stop(): Promise<void>;
};

const workerdChildren = () =>
  new Set(
    descendantsOf(process.pid)
      .filter((p) => p.comm.startsWith("workerd"))
      .map((p) => p.pid),
  );

/**
 * Miniflare answers its own address with an entry Worker of its own (in the same workerd: it adds `cf`,
 * rewrites the URL, renders errors) that then calls ours: a second isolate, more JavaScript, more garbage
 * per request, which production does not have (there the edge hands the request to the Worker). So the
 * bench measures each Worker on a direct socket (workerd's HTTP server straight to the Worker, as
 * `workerd serve` does) unless told to go through the entry (`--via-entry`, to show what it costs).
 */
let throughEntry = false;
export function serveThroughEntry(on: boolean): void {
  throughEntry = on;
}

/** One Miniflare instance (one workerd process), on 127.0.0.1. */
export async function startRuntime(name: string, options: MiniflareOptions, cleanup: Cleanup): Promise<Runtime> {
  const before = workerdChildren();
  const log = new RuntimeLog();
  const startedAt = performance.now();
  const mf = new Miniflare({
    ...options,
    host: "127.0.0.1",
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.on("data", (d: Buffer) => log.push(d.toString()));
      stderr.on("data", (d: Buffer) => log.push(d.toString()));
    },
  });
  let disposed = false;
  const stop = async () => {
    if (disposed) return;
    disposed = true;
    await mf.dispose();
  };
  const forget = cleanup.add(`miniflare ${name}`, stop);
  const entryUrl = await mf.ready;
  const readyMs = performance.now() - startedAt;
  const url = throughEntry ? entryUrl : await mf.unsafeGetDirectURL();
  let workerdPid: number | undefined;
  for (let i = 0; i < 20 && workerdPid === undefined; i++) {
    workerdPid = [...workerdChildren()].find((pid) => !before.has(pid));
    if (workerdPid === undefined) await sleep(50);
  }
  lowerToMeasured(workerdPid);
  return {
    name,
    mf,
    url,
    entryUrl,
    workerdPid,
    log,
    readyMs,
    stop: async () => {
      forget();
      await stop();
    },
  };
}
