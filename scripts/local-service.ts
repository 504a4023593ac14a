import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { Miniflare } from "miniflare";
import { randomBytes } from "node:crypto";
import { startSimulator, type Simulator } from "../simulator/server.ts";
import { startStripeSimulator, type StripeSimulator } from "../simulator/stripe/server.ts";
import { carrierSecretBindings } from "./carrier-secrets.ts";
import { applyMigrations, buildWorker, workerOptions } from "./worker-bundle.ts";
import { readWranglerConfig } from "./wrangler-config.ts";
import { devVarNames } from "./dev-vars.ts";
import { workerdErrorLines } from "./workerd-error-lines.ts";
import { DEV_ADMIN_TOKEN } from "./dev-admin-token.ts";

/** Local development only: the admin token of `npm start` (a deploy sets its own secret). */
export { DEV_ADMIN_TOKEN };
/** Local development only: the key /responses seals reasoning with under `npm start`, unless `.dev.vars` sets one (a deploy sets its own secret: docs/deploy.md). */
export const DEV_REASONING_SEAL_KEY = "dev-reasoning-seal-key-for-local-use-only";
/** Local development only: the keyring accounts' own carrier keys are encrypted under with `npm start`, unless `.dev.vars` sets one (docs/byok.md). */
export const DEV_BYOK_ENCRYPTION_KEYS = "1:dev-byok-encryption-key-for-local-use-only";

/**
 * Locally anyone may sign up (a deployment's default is invite-only: docs/deploy.md), and records reach R2 a
 * second after they settle (a deployment's flush delay grows for quiet accounts, up to 10 minutes, which
 * would leave a local session's records in the ledger for minutes); `.dev.vars` or `vars` may say otherwise.
 */
function localVars(): Record<string, string> {
  const names = devVarNames(".dev.vars");
  return {
    ...(names.has("REASONING_SEAL_KEY") ? {} : { REASONING_SEAL_KEY: DEV_REASONING_SEAL_KEY }),
    ...(names.has("BYOK_ENCRYPTION_KEYS") ? {} : { BYOK_ENCRYPTION_KEYS: DEV_BYOK_ENCRYPTION_KEYS }),
    ...(names.has("SIGN_UP") ? {} : { SIGN_UP: "open" }),
    ...(names.has("RECORDS_FLUSH_MAX_DELAY_MS") ? {} : { RECORDS_FLUSH_MAX_DELAY_MS: "1000" }),
  };
}

export type LocalService = {
  url: string;
  simulator: Simulator;
  /** The Stripe simulator the console pays through (absent with `payments: "real"` or `"off"`). */
  stripe?: StripeSimulator;
  stop(): Promise<void>;
  /** From now on wrangler's request log is shown too (`npm start` calls it after its banner). */
  showRequestLog(): void;
};
export type LocalServiceOptions = {
  /**
   * Default 8787. 0: a free port, taken when the service starts listening (tests): with wrangler dev, chosen
   * just before it starts and chosen again once if wrangler exits before answering (another process may have
   * taken the port in between).
   */
  port?: number;
  simulatorPort?: number;
  persistTo?: string;
  /** Nothing of wrangler's output (tests). Otherwise `npm start`'s: the migrations in one line, wrangler's start-up noise dropped, its warnings and errors shown. */
  quiet?: boolean;
  /**
   * `simulated` (default): every carrier played by the simulator, each with a stand-in key. `real`: carriers at
   * their catalog base URLs with the keys in `.dev.vars` (wrangler dev reads it), none set here.
   */
  carriers?: "simulated" | "real";
  /** With simulated carriers: the keys to set (default one per catalog carrier); a carrier left out is unconfigured. */
  carrierKeys?: Record<string, string>;
  /**
   * `simulated` (default): the console pays through the Stripe simulator (the same SDK and webhook code as
   * production), its webhooks posted to this service. `real`: Stripe's keys from `.dev.vars`. `off`: no payments.
   */
  payments?: "simulated" | "real" | "off";
  stripePort?: number;
  /** Extra Worker vars, e.g. a short CARRIER_TIMEOUT_MS for fault tests. */
  vars?: Record<string, string>;
  /** How often to run the Worker's Cron Trigger (wrangler dev does not on its own), ms; 0 = never. Default 60000, as deployed. */
  cronEveryMs?: number;
  /**
   * `wrangler-dev` (default): as `npm start` runs it. `bundle`: the `wrangler deploy --dry-run` bundle in
   * Miniflare, no dev proxy (scripts/worker-bundle.ts) — for load: under a loaded machine wrangler dev's
   * proxy answers 503 "Your worker restarted mid-request" to requests in flight that the Worker never saw.
   */
  runtime?: "wrangler-dev" | "bundle";
  /** The wrangler executable (default node_modules/.bin/wrangler; a test stands one in). */
  wrangler?: string;
  /** Where wrangler's shown lines go (default: stdout); a test reads them. */
  output?: (line: string) => void;
};

/** The schedule of wrangler.toml's `[triggers] crons`. */
const CRON = "* * * * *";

const offline = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "true" };

/**
 * Runs the service as `npm start` does: the carrier simulator, local D1 migrations, then `wrangler dev`
 * on 127.0.0.1 with local D1, KV and Durable Objects, every carrier pointed at the simulator.
 */
export async function startLocalService(opts: LocalServiceOptions = {}): Promise<LocalService> {
  if (opts.runtime === "bundle") return startBundleService(opts);
  const persist = opts.persistTo ?? ".wrangler/state";
  const simulator = await startSimulator({ port: opts.simulatorPort ?? 0 });
  const payments = await startPayments(opts);
  const wrangler = opts.wrangler ?? "node_modules/.bin/wrangler";
  const log = { requests: false };
  let dev: WranglerDev | undefined;
  let cron: ReturnType<typeof setInterval> | undefined;
  const stop = async () => {
    clearInterval(cron);
    if (dev) await stopChild(dev.child);
    await simulator.close();
    await payments.stripe?.close();
  };
  try {
    await migrate(wrangler, persist, opts.quiet);
    const carriers = opts.carriers === "real" ? {} : { CARRIER_BASE_URL_OVERRIDE: simulator.url, ...(opts.carrierKeys ?? carrierSecretBindings()) };
    const vars: Record<string, string> = { ADMIN_TOKEN: DEV_ADMIN_TOKEN, ...localVars(), ...carriers, ...payments.vars, ...opts.vars };
    const start = async () => startWranglerDev(wrangler, opts.port === 0 ? await freePort() : (opts.port ?? 8787), persist, vars, opts, log);
    dev = await start();
    if (dev.exited !== null && opts.port === 0) {
      console.error(`wrangler dev exited with ${dev.exited} before answering; starting it once more on another port. Its output:\n${dev.tail()}`);
      dev = await start();
    }
    if (dev.exited !== null) throw new Error(`wrangler dev exited with ${dev.exited} before answering:\n${dev.tail()}`);
  } catch (err) {
    await stop();
    throw err;
  }
  const url = dev.url;
  payments.stripe?.setWebhookUrl(`${url}/webhooks/stripe`);
  const every = opts.cronEveryMs ?? 60_000;
  if (every > 0) {
    cron = setInterval(() => void runCron(url).catch(() => {}), every);
    cron.unref();
  }
  return { url, simulator, stripe: payments.stripe, stop, showRequestLog: () => (log.requests = true) };
}

type WranglerDev = {
  child: ChildProcess;
  url: string;
  /** Its exit code if it exited before answering, else null (it answers at `url`). */
  exited: number | null;
  /** Its last lines (quiet: the only place they are kept). */
  tail(): string;
};

/** `wrangler dev` on 127.0.0.1:`port`, answering (or exited: see `exited`). */
async function startWranglerDev(
  wrangler: string,
  port: number,
  persist: string,
  vars: Record<string, string>,
  opts: LocalServiceOptions,
  log: { requests: boolean },
): Promise<WranglerDev> {
  const args = [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(await freePort()),
    "--persist-to",
    persist,
    "--show-interactive-dev-session=false",
    "--test-scheduled",
  ];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  // A process group of its own: stopping it stops workerd and esbuild under it too (stopChild).
  const child = spawn(wrangler, args, { env: offline, stdio: ["ignore", "pipe", "pipe"], detached: true });
  killGroupOnExit(child);
  const closed = once(child, "close"); // its output read to the end
  const last: string[] = [];
  const keep = (line: string) => {
    last.push(line);
    if (last.length > 40) last.shift();
  };
  const workerdErrors = workerdErrorLines();
  const shown = (line: string) => (shownLine(line, log.requests) ? workerdErrors(line) : null);
  const write = opts.output ?? ((line: string) => console.log(line));
  for (const out of [child.stdout!, child.stderr!])
    if (opts.quiet) forwardLines(out, (line) => line, keep);
    else forwardLines(out, shown, write);
  const url = `http://127.0.0.1:${port}`;
  const dev = { child, url, exited: null as number | null, tail: () => last.join("\n") };
  try {
    await waitForHttp(`${url}/api/v1/providers`, child, 90_000);
  } catch (err) {
    if (child.exitCode === null) {
      await stopChild(child);
      throw err;
    }
    dev.exited = child.exitCode;
    await stopChild(child); // what it left of its group (workerd) holds its output open
    await closed;
  }
  return dev;
}

/** The Stripe simulator and the Worker vars that point the official SDK at it (a fresh signing secret per run). */
async function startPayments(opts: LocalServiceOptions): Promise<{ stripe?: StripeSimulator; vars: Record<string, string> }> {
  if ((opts.payments ?? "simulated") !== "simulated") return { vars: {} };
  const webhookSecret = `whsec_local_${randomBytes(18).toString("hex")}`;
  const stripe = await startStripeSimulator({ port: opts.stripePort ?? 0, webhookSecret });
  return { stripe, vars: { STRIPE_API_URL: stripe.url, STRIPE_SECRET_KEY: "sk_test_local_switchyard", STRIPE_WEBHOOK_SECRET: webhookSecret } };
}

/** wrangler's start-up output that says nothing an operator needs (its banner, the bindings table, blank lines). */
const NOISE = [
  /^\s*$/,
  /⛅️ wrangler/,
  /^─+$/,
  /^Your Worker has access to the following bindings/,
  /^Binding\s+Resource/,
  /^env\.[A-Z_]+ /,
  /^⎔ Starting local server/,
  /Ready on http/,
];
/** wrangler's request log lines (`[wrangler:info] GET /… 200 OK`). */
const REQUEST_LOG = /^\[wrangler:info\] [A-Z]+ \//;

function shownLine(line: string, requests: boolean): boolean {
  if (REQUEST_LOG.test(line)) return requests;
  return !NOISE.some((re) => re.test(line));
}

function forwardLines(stream: Readable, shown: (line: string) => string | null, write: (line: string) => void): void {
  let rest = "";
  const forward = (line: string) => {
    const out = shown(line);
    if (out !== null) write(out);
  };
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    for (const line of lines) forward(line);
  });
  stream.on("end", () => {
    if (rest) forward(rest);
  });
}

/**
 * Applies the D1 migrations to local storage; `npm start` prints one line for them (wrangler's tables go
 * only to a failure's output). wrangler starts a workerd per migration; one of those starts can fail on a
 * loaded machine, so a failed apply is run once more — safe, as each migration is applied in one batch and
 * recorded with it, so a second run applies only what the first did not. The first failure's output is
 * printed either way, and a second failure throws with it.
 */
export async function migrate(wrangler: string, persist: string, quiet?: boolean): Promise<void> {
  let result = await applyOnce(wrangler, persist);
  if (result.code !== 0) {
    console.error(`wrangler d1 migrations apply exited with ${result.code}; running it once more. Its output:\n${tail(result.output)}`);
    result = await applyOnce(wrangler, persist);
  }
  if (result.code !== 0) {
    if (!quiet) console.error(result.output);
    throw new Error(`wrangler d1 migrations apply exited with ${result.code} twice; the second time:\n${tail(result.output)}`);
  }
  if (quiet) return;
  const applied = /About to apply (\d+) migration/.exec(result.output);
  console.log(applied ? `D1 (local): ${applied[1]} migration${applied[1] === "1" ? "" : "s"} applied.` : "D1 (local): migrations up to date.");
}

async function applyOnce(wrangler: string, persist: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist], { env: offline, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const [code] = (await once(child, "close")) as [number | null]; // "close": after its output is read to the end
  return { code, output };
}

/** The last lines of a child's output, enough to say why it failed. */
function tail(output: string, lines = 30): string {
  return output.trimEnd().split("\n").slice(-lines).join("\n");
}

/** The same service from the deploy bundle in Miniflare (one workerd process, no wrangler dev proxy in front). */
async function startBundleService(opts: LocalServiceOptions): Promise<LocalService> {
  const port = opts.port ?? 8787;
  const persist = opts.persistTo ?? ".wrangler/state";
  const simulator = await startSimulator({ port: opts.simulatorPort ?? 0 });
  const payments = await startPayments(opts);
  let mf: Miniflare | undefined;
  let url = "";
  let cron: ReturnType<typeof setInterval> | undefined;
  const stop = async () => {
    clearInterval(cron);
    await mf?.dispose();
    await simulator.close();
    await payments.stripe?.close();
  };
  try {
    const root = process.cwd();
    const built = await buildWorker(root, root, join(persist, "bundle"));
    const cfg = readWranglerConfig(join(root, "wrangler.toml"));
    const options = workerOptions(built, {
      cfg,
      catalogPath: join(root, "catalog.json"),
      simulatorUrl: simulator.url,
      adminToken: DEV_ADMIN_TOKEN,
      vars: { ...localVars(), ...payments.vars, ...opts.vars },
      persistDir: persist,
      port,
    });
    const quiet = opts.quiet === true;
    const stdio = (out: Readable, err: Readable) => {
      if (quiet) (out.resume(), err.resume());
      else (out.pipe(process.stdout), err.pipe(process.stderr));
    };
    // unsafeTriggerHandlers: /cdn-cgi/handler/scheduled runs the Cron Trigger, as wrangler dev's --test-scheduled does.
    mf = new Miniflare({ ...options, host: "127.0.0.1", unsafeTriggerHandlers: true, handleRuntimeStdio: stdio });
    url = (await mf.ready).origin;
    await applyMigrations(mf, root, cfg.d1Databases[0] ?? "DB");
    payments.stripe?.setWebhookUrl(`${url}/webhooks/stripe`);
  } catch (err) {
    await stop();
    throw err;
  }
  const every = opts.cronEveryMs ?? 60_000;
  if (every > 0) {
    cron = setInterval(() => void runCron(url, "/cdn-cgi/handler/scheduled").catch(() => {}), every);
    cron.unref();
  }
  return { url, simulator, stripe: payments.stripe, stop, showRequestLog: () => {} };
}

/** Runs the Worker's Cron Trigger once, through `wrangler dev --test-scheduled` (or Miniflare's trigger route; local only; bounded in time). */
export async function runCron(url: string, path = "/__scheduled"): Promise<void> {
  const res = await fetch(`${url}${path}?cron=${encodeURIComponent(CRON)}`, { signal: AbortSignal.timeout(30_000) });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`the scheduled handler answered ${res.status}`);
}

/** A port the OS says is free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the service did not answer at ${url} within ${timeoutMs} ms`);
}

/**
 * Whatever way this process ends (a crash, an exit on a path that did not stop the service), the child's
 * process group goes with it: its own group, so nothing else would stop wrangler, esbuild and workerd.
 * `exit` handlers run synchronously, so this is a SIGKILL, the last resort after `stopChild`'s SIGTERM.
 */
function killGroupOnExit(child: ChildProcess): void {
  if (child.pid === undefined) return;
  const group = -child.pid;
  process.once("exit", () => {
    try {
      process.kill(group, "SIGKILL");
    } catch {
      // stopped already
    }
  });
}

/**
 * Stops the process we started and the processes under it (workerd, esbuild), by its process group's id
 * (its pid: it was started detached), and waits for it (bounded); whatever of its group outlives it is killed.
 */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return;
  const group = -child.pid;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(group, signal);
    } catch {
      // the group is empty already
    }
  };
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, "exit");
    signalGroup("SIGTERM");
    const timer = setTimeout(() => signalGroup("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
  signalGroup("SIGKILL");
}
