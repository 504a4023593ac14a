// Scenario 6 of `npm run bench` (issue 12): paced streams, as real traffic is. 64 streams of 300 tokens at
// 50 tokens a second through the router and, at the same time, 64 through the pass-through; per chunk, the
// delay the router adds = its arrival at the router's client minus the arrival of the same chunk (by index)
// at the pass-through's client.
//
// Why a pacer and not the simulator's `[sim tps=50]`: the simulator paces each stream with its own chain of
// timers (a sleep of 20 ms before each token), so two streams' chunk k would leave it at times that drift
// apart by the difference of k timer delays each — not measured, but nothing keeps it below the 1 ms the
// target is about. Here one pacer (an HTTP server in the benchmark's process, on 127.0.0.1) answers both Workers'
// carrier requests of one pair and writes chunk k to both sockets in the same tick, on one absolute
// schedule (no drift). The difference of the two arrivals is then what the two Worker paths add, plus the
// client's own jitter, which both sides share. The chunks themselves are the simulator's: one 300-token
// stream is fetched from it once and replayed (the router swaps the id anyway).
//
// Why concurrently (each router stream paired with a pass-through stream sent in the same tick) rather than
// interleaved runs: the two sides of a pair see the same moment of the machine — the same other processes,
// the same load from the 126 other streams — and the same chunk write, so the difference is not blurred by
// noise that changes between runs. The cost: both Workers run at once on the machine's 2 cores, so each one
// is slowed by the other's CPU; that is the same for both sides and is said in the report.
//
// The 64 pairs start spread evenly over 1 s (64 new streams a second, six times the rate at which 6-second
// streams must start to keep 64 open), not all in one tick: 128 requests in the same few milliseconds measure
// a start-up storm — every Worker's first byte then waits behind the others' — not what the relay adds to a
// chunk. All 64 are open together for the last ~5 s. Everything is bounded: each request has a 30 s limit,
// the whole scenario ends within ~8 s.
import http from "node:http";
import { keepAliveAgent, stats, type RequestSpec, type Stats } from "./load.ts";
import { cpuSnapshot, foreignCpuPercent } from "./processes.ts";
import { cpus } from "node:os";
import { cpuMs } from "./scenarios.ts";

const nowNs = () => process.hrtime.bigint();
const msBetween = (a: bigint, b: bigint) => Number(b - a) / 1e6;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Side = "r" | "p";

/** One pair's carrier answers: both sides' sockets, the schedule, and when each event was written. */
type PairState = {
  events: string[];
  lastToken: number;
  intervalMs: number;
  sides: Map<Side, http.ServerResponse>;
  next: number;
  startNs: bigint | null;
  written: Map<Side, bigint[]>;
  lateArrivals: number;
  backlog: Map<Side, number>;
};

export type Pacer = { url: string; pairs: Map<number, PairState>; close(): Promise<void> };

/** Starts the pacer; `template` is the stream's SSE events (each with its "\n\n"). */
export async function startPacer(template: string[]): Promise<Pacer> {
  const pairs = new Map<number, PairState>();
  // The events after the last token (finish, usage, [DONE]) go out right behind it.
  const finishAt = template.findIndex((e) => /"finish_reason":"/.test(e));
  const lastToken = finishAt > 0 ? finishAt - 1 : template.length - 1;
  const writeTo = (pair: PairState, side: Side, upTo: number) => {
    const res = pair.sides.get(side)!;
    const times = pair.written.get(side)!;
    while (times.length < upTo) {
      res.write(pair.events[times.length]!);
      times.push(nowNs());
    }
    if (times.length === pair.events.length && !res.writableEnded) res.end();
  };
  const tick = (pair: PairState) => {
    // Token k (event k, k ≥ 1) at start + (k − 1) × interval; the events after the last token right behind it.
    const lastToken = pair.lastToken;
    let upTo = pair.next + 1;
    if (pair.next >= lastToken) upTo = pair.events.length;
    const order: Side[] = pair.next % 2 === 0 ? ["r", "p"] : ["p", "r"]; // neither side always first
    for (const side of order) if (pair.sides.has(side)) writeTo(pair, side, upTo);
    pair.next = upTo;
    if (pair.next >= pair.events.length) return;
    const due = pair.startNs! + BigInt(Math.round((pair.next - 1) * pair.intervalMs * 1e6));
    setTimeout(() => tick(pair), Math.max(0, msBetween(nowNs(), due)));
  };
  const server = http.createServer({ noDelay: true, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const m = /\[pace pair=(\d+) side=([rp]) ms=([\d.]+)\]/.exec(body);
      if (!m) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"pacer: no [pace …] directive","code":404}}');
        return;
      }
      const id = Number(m[1]);
      const side = m[2] as Side;
      let pair = pairs.get(id);
      if (!pair) {
        pair = {
          events: template,
          lastToken,
          intervalMs: Number(m[3]),
          sides: new Map(),
          next: 1,
          startNs: null,
          written: new Map(),
          lateArrivals: 0,
          backlog: new Map(),
        };
        pairs.set(id, pair);
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      pair.sides.set(side, res);
      pair.written.set(side, []);
      // The role chunk at once (a carrier's first byte), then the tokens on the pair's schedule.
      // A side that comes after tokens went out gets them at once (counted: its delay is in its figures).
      if (pair.startNs !== null && pair.next > 1) {
        pair.lateArrivals++;
        pair.backlog.set(side, pair.next);
      }
      writeTo(pair, side, pair.startNs === null ? 1 : pair.next);
      if (pair.startNs === null) {
        pair.startNs = nowNs() + BigInt(Math.round(pair.intervalMs * 1e6));
        const p = pair;
        setTimeout(() => tick(p), pair.intervalMs);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    pairs,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Fetches one stream from the simulator and splits it into its SSE events. */
export async function streamTemplate(simUrl: string, path: string, body: Buffer): Promise<string[]> {
  const res = await fetch(simUrl + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: body.toString("utf8"),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`template stream: ${res.status} ${text.slice(0, 200)}`);
  return text
    .split("\n\n")
    .filter((e) => e.trim() !== "")
    .map((e) => `${e}\n\n`);
}

type Received = { ok: boolean; error?: string; startNs: bigint; firstByteNs: bigint; events: bigint[] };

/** One streamed request; the arrival time of every complete SSE event ("\n\n"). Never rejects. */
function receive(agent: http.Agent, origin: URL, spec: RequestSpec, timeoutMs: number): Promise<Received> {
  return new Promise((resolve) => {
    const startNs = nowNs();
    let firstByteNs = 0n;
    const events: bigint[] = [];
    let lastWasLf = false;
    let status = 0;
    let tail = "";
    let done = false;
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (!error && status !== 200) error = `status ${status}`;
      if (!error && !tail.trimEnd().endsWith("data: [DONE]")) error = "no [DONE]";
      resolve({ ok: !error, error, startNs, firstByteNs, events });
    };
    const req = http.request(
      {
        agent,
        hostname: origin.hostname,
        port: origin.port,
        method: "POST",
        path: spec.path,
        headers: { ...spec.headers, "content-length": spec.body!.length },
      },
      (res) => {
        status = res.statusCode ?? 0;
        res.on("data", (chunk: Buffer) => {
          const at = nowNs();
          if (firstByteNs === 0n) firstByteNs = at;
          for (let i = 0; i < chunk.length; i++) {
            const lf = chunk[i] === 0x0a;
            if (lf && lastWasLf) {
              events.push(at);
              lastWasLf = false;
            } else lastWasLf = lf;
          }
          tail = (tail + chunk.toString("utf8")).slice(-200);
        });
        res.on("end", () => finish());
        res.on("error", (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
        res.on("close", () => finish(res.complete ? undefined : "closed early"));
      },
    );
    req.on("socket", (s) => s.setNoDelay(true));
    req.on("error", (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
    const timer = setTimeout(() => {
      finish("timeout");
      req.destroy();
    }, timeoutMs);
    req.end(spec.body);
  });
}

export type PacedSide = {
  streams: number;
  ok: number;
  error_kinds: Record<string, number>;
  /** Events each stream delivered (the carrier sent `carrier_events`). */
  events_per_stream: number;
  ttfb_ms: Stats;
  /** Per chunk: arrival at the client − the moment the pacer wrote it, ms (the whole Worker path). */
  chunk_latency_ms: Stats;
  /** workerd CPU during the scenario ÷ chunks relayed × 1,000, ms. */
  runtime_cpu_ms_per_1k_chunks: number;
};

export type PacedRun = {
  /** The Worker under test (side `r`): the router, or the floor relay to see what any JS relay adds. */
  relay: string;
  pairs: number;
  tokens: number;
  tps: number;
  carrier_events: number;
  wall_s: number;
  router: PacedSide;
  passthrough: PacedSide;
  /** Router arrival − pass-through arrival of the same chunk (by index, same pair), ms; chunks after the first event. */
  added_chunk_ms: Stats;
  /**
   * The same, only for chunks the pacer wrote to both sides on schedule: without the backlog a side gets at once
   * when its carrier request reaches the pacer after the pair's first token (a slow start, counted in TTFB).
   */
  added_chunk_on_schedule_ms: Stats;
  /** Router − pass-through time to the first body byte, per pair, ms. */
  added_ttfb_ms: Stats;
  /** Pairs in which the two sides delivered different numbers of events (then only the common prefix is compared). */
  mismatched_pairs: number;
  /** Carrier requests that reached the pacer after their pair's schedule had started (they get the backlog at once). */
  late_arrivals: number;
  foreign_cpu_pct: number;
};

/** `router`: the Worker under test (side `r`, the router or the floor relay); `passthrough`: the reference (side `p`). */
export type PacedTargets = {
  relay: string;
  router: { origin: URL; path: string; key: string; workerdPid?: number };
  passthrough: { origin: URL; path: string; workerdPid?: number };
};

/**
 * Runs `pairs` paired streams (router and pass-through at once) against a running pacer. `body(pair, side)`
 * is the request body for one side; the pacer finds `[pace pair=N side=r|p ms=…]` in it.
 */
export async function pacedStreams(
  pacer: Pacer,
  t: PacedTargets,
  opts: { pairs: number; firstPair: number; tokens: number; tps: number; spreadMs: number; body: (pair: number, side: Side, intervalMs: number) => Buffer },
): Promise<PacedRun> {
  const intervalMs = 1000 / opts.tps;
  const agentR = keepAliveAgent(opts.pairs);
  const agentP = keepAliveAgent(opts.pairs);
  const cpuR0 = cpuMs(t.router.workerdPid);
  const cpuP0 = cpuMs(t.passthrough.workerdPid);
  const machine0 = cpuSnapshot();
  const started = performance.now();
  try {
    const results = await Promise.all(
      Array.from({ length: opts.pairs }, async (_, i) => {
        await sleep((i * opts.spreadMs) / opts.pairs); // starts spread evenly
        const pair = opts.firstPair + i;
        const spec = (side: Side): RequestSpec => ({
          path: side === "r" ? t.router.path : t.passthrough.path,
          headers: { "content-type": "application/json", ...(side === "r" ? { authorization: `Bearer ${t.router.key}` } : {}) },
          body: opts.body(pair, side, intervalMs),
        });
        const timeout = (opts.tokens / opts.tps) * 1000 + 30_000;
        const sides: Side[] = i % 2 === 0 ? ["r", "p"] : ["p", "r"];
        const [a, b] = await Promise.all(
          sides.map((s) => receive(s === "r" ? agentR : agentP, s === "r" ? t.router.origin : t.passthrough.origin, spec(s), timeout)),
        );
        return { pair, r: sides[0] === "r" ? a! : b!, p: sides[0] === "p" ? a! : b! };
      }),
    );
    const wall = (performance.now() - started) / 1000;
    const foreign = foreignCpuPercent(machine0, cpuSnapshot(), cpus().length);
    const added: number[] = [];
    const addedOnSchedule: number[] = [];
    const addedTtfb: number[] = [];
    let mismatched = 0;
    const side = (which: Side, pid: number | undefined, cpu0: number): PacedSide => {
      const kinds: Record<string, number> = {};
      const latency: number[] = [];
      let ok = 0;
      let events = 0;
      for (const x of results) {
        const got = x[which];
        if (!got.ok) kinds[got.error!] = (kinds[got.error!] ?? 0) + 1;
        else ok++;
        events += got.events.length;
        const written = pacer.pairs.get(x.pair)?.written.get(which) ?? [];
        for (let k = 1; k < Math.min(got.events.length, written.length); k++) latency.push(msBetween(written[k]!, got.events[k]!));
      }
      return {
        streams: results.length,
        ok,
        error_kinds: kinds,
        events_per_stream: events / results.length,
        ttfb_ms: stats(results.filter((x) => x[which].firstByteNs > 0n).map((x) => msBetween(x[which].startNs, x[which].firstByteNs))),
        chunk_latency_ms: stats(latency),
        runtime_cpu_ms_per_1k_chunks: ((cpuMs(pid) - cpu0) / Math.max(1, events)) * 1000,
      };
    };
    for (const { pair, r, p } of results) {
      if (!r.ok || !p.ok) continue;
      const backlog = Math.max(...(pacer.pairs.get(pair)?.backlog.values() ?? []), 0);
      if (r.events.length !== p.events.length) mismatched++;
      addedTtfb.push(msBetween(r.startNs, r.firstByteNs) - msBetween(p.startNs, p.firstByteNs));
      const n = Math.min(r.events.length, p.events.length);
      for (let k = 1; k < n; k++) {
        const d = msBetween(r.startNs, r.events[k]!) - msBetween(p.startNs, p.events[k]!);
        added.push(d);
        if (k >= backlog) addedOnSchedule.push(d);
      }
    }
    let late = 0;
    for (const x of results) late += pacer.pairs.get(x.pair)?.lateArrivals ?? 0;
    return {
      relay: t.relay,
      pairs: opts.pairs,
      tokens: opts.tokens,
      tps: opts.tps,
      carrier_events: pacer.pairs.get(opts.firstPair)?.events.length ?? NaN,
      wall_s: wall,
      router: side("r", t.router.workerdPid, cpuR0),
      passthrough: side("p", t.passthrough.workerdPid, cpuP0),
      added_chunk_ms: stats(added),
      added_chunk_on_schedule_ms: stats(addedOnSchedule),
      added_ttfb_ms: stats(addedTtfb),
      mismatched_pairs: mismatched,
      late_arrivals: late,
      foreign_cpu_pct: foreign,
    };
  } finally {
    agentR.destroy();
    agentP.destroy();
    for (let i = 0; i < opts.pairs; i++) pacer.pairs.delete(opts.firstPair + i);
  }
}
