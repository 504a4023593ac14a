// The load generator of `npm run bench`: node:http with one keep-alive Agent per run, no dependency.
// Closed loop: N workers, each sends its next request as soon as the previous one ends, for a warm-up
// and then a fixed measured window. Latencies come from process.hrtime; a request counts in the window
// it ends in. Every request has a time limit, so every loop is bounded in time.
import http from "node:http";

export type RequestSpec = { method?: "GET" | "POST"; path: string; headers: Record<string, string>; body?: Buffer };

export type Phase = "warmup" | "measure" | "late";

export type Completion = {
  /** Which closed-loop worker sent it (0 … concurrency − 1). */
  worker: number;
  phase: Phase;
  ok: boolean;
  status: number;
  /** Why it is not ok: `status 500`, `timeout`, `ECONNRESET`, `no [DONE]`, `error chunk`, … */
  error?: string;
  /** Send to the first body byte, ms. */
  ttfbMs: number;
  /** Send to the last body byte, ms. */
  totalMs: number;
  bytes: number;
  /** The whole body, with `keepBody`; else only its last few KiB. */
  body: Buffer;
};

export type Stats = { p50: number; p90: number; p99: number; mean: number; max: number };

export type LoadResult = {
  concurrency: number;
  duration_s: number;
  requests: number;
  errors: number;
  /** Errors in the warm-up or after the window (not in `errors`). */
  errors_outside_window: number;
  error_kinds: Record<string, number>;
  /** A few failed responses, for the report: status and the start of the body. */
  error_samples: string[];
  rps: number;
  latency_ms: Stats;
  ttfb_ms: Stats;
  bytes: number;
  bytes_per_s: number;
};

export type LoadOptions = {
  origin: URL;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Per request, to the last byte. */
  timeoutMs: number;
  /** The request worker `w` sends next. */
  request(worker: number): RequestSpec;
  /** SSE: a success must end with `data: [DONE]` and carry no error chunk. */
  stream: boolean;
  keepBody?: boolean;
  /** Called for every finished request, warm-up and late ones included. */
  onCompletion?(c: Completion): void;
};

const TAIL_BYTES = 4096;
const nowNs = () => process.hrtime.bigint();
const ms = (from: bigint, to: bigint) => Number(to - from) / 1e6;

export function stats(values: number[]): Stats {
  if (values.length === 0) return { p50: NaN, p90: NaN, p99: NaN, mean: NaN, max: NaN };
  const sorted = Float64Array.from(values).sort();
  // Nearest rank.
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), mean: sum / sorted.length, max: sorted[sorted.length - 1]! };
}

export function keepAliveAgent(sockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets, scheduling: "fifo" });
}

/** `startNs`, `endNs`: process.hrtime (the machine's monotonic clock) when it was sent and when it ended. */
type Sent = Omit<Completion, "phase" | "worker"> & { startNs: bigint; endNs: bigint };

/** One request on `agent`; never rejects. */
export function send(agent: http.Agent, origin: URL, spec: RequestSpec, opts: { stream: boolean; keepBody?: boolean; timeoutMs: number }): Promise<Sent> {
  return new Promise((resolve) => {
    const start = nowNs();
    let firstNs = 0n;
    let bytes = 0;
    let status = 0;
    let settled = false;
    const chunks: Buffer[] = [];
    let kept = 0;
    const finish = (error: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const end = nowNs();
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (!error && status !== 200) error = `status ${status}`;
      if (!error && opts.stream) {
        const tail = body.subarray(-TAIL_BYTES).toString("utf8");
        if (!tail.trimEnd().endsWith("data: [DONE]")) error = "no [DONE]";
        else if (tail.includes('"finish_reason":"error"') || tail.includes('{"error":')) error = "error chunk";
      }
      resolve({ ok: !error, status, error, ttfbMs: firstNs ? ms(start, firstNs) : NaN, totalMs: ms(start, end), bytes, body, startNs: start, endNs: end });
    };
    const headers: Record<string, string | number> = { ...spec.headers };
    if (spec.body) headers["content-length"] = spec.body.length;
    const req = http.request({ agent, hostname: origin.hostname, port: origin.port, method: spec.method ?? "POST", path: spec.path, headers }, (res) => {
      status = res.statusCode ?? 0;
      res.on("data", (chunk: Buffer) => {
        if (firstNs === 0n) firstNs = nowNs();
        bytes += chunk.length;
        chunks.push(chunk);
        kept += chunk.length;
        // Without keepBody only the last few KiB stay (enough to see how a stream ended).
        if (!opts.keepBody) while (chunks.length > 1 && kept - chunks[0]!.length >= TAIL_BYTES) kept -= chunks.shift()!.length;
      });
      res.on("end", () => finish(undefined));
      res.on("aborted", () => finish("aborted"));
      res.on("error", (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
      res.on("close", () => finish(res.complete ? undefined : "closed early"));
    });
    req.on("socket", (socket) => socket.setNoDelay(true));
    req.on("error", (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
    const timer = setTimeout(() => {
      finish("timeout");
      req.destroy();
    }, opts.timeoutMs);
    req.end(spec.body);
  });
}

/** A closed loop at `concurrency` for `warmupMs` + `durationMs`; figures cover the measured window. */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const agent = keepAliveAgent(o.concurrency);
  const t0 = nowNs();
  const measureStart = t0 + BigInt(Math.round(o.warmupMs * 1e6));
  const measureEnd = measureStart + BigInt(Math.round(o.durationMs * 1e6));
  const latency: number[] = [];
  const ttfb: number[] = [];
  const kinds: Record<string, number> = {};
  const samples: string[] = [];
  let bytes = 0;
  let errors = 0;
  let errorsOutside = 0;

  const worker = async (w: number) => {
    while (nowNs() < measureEnd) {
      const r = await send(agent, o.origin, o.request(w), { stream: o.stream, keepBody: o.keepBody, timeoutMs: o.timeoutMs });
      const phase: Phase = r.endNs < measureStart ? "warmup" : r.endNs <= measureEnd ? "measure" : "late";
      const { startNs: _s, endNs: _e, ...rest } = r;
      o.onCompletion?.({ ...rest, phase, worker: w });
      if (!r.ok) {
        kinds[r.error!] = (kinds[r.error!] ?? 0) + 1;
        if (samples.length < 5) samples.push(`${r.error}: ${r.body.subarray(0, 300).toString("utf8")}`);
      }
      if (phase !== "measure") {
        if (!r.ok) errorsOutside++;
        continue;
      }
      if (!r.ok) {
        errors++;
        continue;
      }
      latency.push(r.totalMs);
      ttfb.push(r.ttfbMs);
      bytes += r.bytes;
    }
  };
  try {
    await Promise.all(Array.from({ length: o.concurrency }, (_, w) => worker(w)));
  } finally {
    agent.destroy();
  }
  const seconds = o.durationMs / 1000;
  return {
    concurrency: o.concurrency,
    duration_s: seconds,
    requests: latency.length,
    errors,
    errors_outside_window: errorsOutside,
    error_kinds: kinds,
    error_samples: samples,
    rps: latency.length / seconds,
    latency_ms: stats(latency),
    ttfb_ms: stats(ttfb),
    bytes,
    bytes_per_s: bytes / seconds,
  };
}

/** `n` requests sent at once (not a loop), each bounded by `timeoutMs`. */
export async function burst(origin: URL, n: number, spec: (i: number) => RequestSpec, opts: { stream: boolean; timeoutMs: number }): Promise<Sent[]> {
  const agent = keepAliveAgent(n);
  try {
    return await Promise.all(Array.from({ length: n }, (_, i) => send(agent, origin, spec(i), opts)));
  } finally {
    agent.destroy();
  }
}
