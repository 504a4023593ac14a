import { describe, it, expect, afterEach, vi } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext, createScheduledController } from "cloudflare:test";
import { app } from "../../src/app";
import worker from "../../src/index";
import { flushGenerations } from "../../src/db/generations";
import type { NewGeneration } from "../../src/db/schema";
import type { CarrierAttempt } from "../../src/db/carrier-attempt";
import { HEALTH_KV_KEY, refreshHealth, type HealthSnapshot } from "../../src/health/health-snapshot";
import { forgetHealthMemo, readHealth } from "../../src/health/health-memo";
import { newAccount } from "./helpers";
import { rollUpAttempts, type SeedAttempt } from "./health-seed";
import { BUCKET_COLUMNS, bucketBounds, type Metric } from "../../src/db/health-buckets";
import { settings } from "../../src/settings";

// Endpoint health comes from every carrier attempt the records carry: counted into per-minute rollups as
// they are flushed, folded by the Cron Trigger into KV, read through an isolate memo. The request path
// never queries D1 for it.

const MIN = 60_000;
let n = 0;
const uid = () => `${Date.now()}-${n++}-${Math.random().toString(36).slice(2)}`;

type Row = SeedAttempt;
/** Attempts into the minute rollups, as flushed records' attempts get there. */
const insertAttempts = rollUpAttempts;

const attempt = (over: Partial<CarrierAttempt>): CarrierAttempt => ({
  model: "qwen/qwen3-32b",
  provider: "groq",
  providerName: "Groq",
  status: 200,
  at: Date.now(),
  latencyMs: 100,
  tokensPerSecond: 50,
  ...over,
});
const record = (id: string, attempts: CarrierAttempt[] | string | null, model = "qwen/qwen3-32b"): NewGeneration => ({
  id,
  accountId: "acct_health",
  keyHash: "health",
  model,
  providerName: "Groq",
  streamed: false,
  createdAt: Date.now(),
  tokensPrompt: 1,
  tokensCompletion: 1,
  tokensReasoning: 0,
  costNano: 0,
  status: 200,
  providerResponses: typeof attempts === "string" || attempts === null ? attempts : JSON.stringify(attempts),
});
/** A model's minute rollups: counts per (carrier, minute), and the non-empty histogram buckets as {bound: count}. */
async function rollupsOf(model: string) {
  const minutes = (
    await env.DB.prepare("SELECT provider, minute, counted, up FROM endpoint_minutes WHERE model = ? ORDER BY provider, minute").bind(model).all()
  ).results;
  const rows = (
    await env.DB.prepare("SELECT * FROM endpoint_minute_histograms WHERE model = ? ORDER BY provider, minute, metric")
      .bind(model)
      .all<Record<string, string | number>>()
  ).results;
  const histograms = rows.map((r) => {
    const metric = r.metric as Metric;
    const bounds = bucketBounds(metric);
    const buckets: Record<number, number> = {};
    BUCKET_COLUMNS.forEach((c, i) => {
      if (Number(r[c]) > 0) buckets[bounds[i]!] = Number(r[c]);
    });
    return { provider: r.provider, minute: r.minute, metric, buckets };
  });
  return { minutes, histograms };
}

/** A D1 binding that counts every statement and fails it. */
function watchedDb() {
  const seen = { statements: 0 };
  const fail = () => {
    seen.statements++;
    return Promise.reject(new Error("D1 must not be queried"));
  };
  const statement = { bind: () => statement, first: fail, all: fail, raw: fail, run: fail };
  const d1 = { prepare: () => statement, batch: fail, exec: fail } as unknown as D1Database;
  return { d1, seen };
}

async function fetchWith(path: string, overrides: Partial<typeof env>, headers: Record<string, string> = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request("https://switchyard.test" + path, { headers }), { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}
type Endpoint = Record<string, unknown> & { tag: string };
const endpointsOf = async (res: Response) => ((await res.json()) as { data: { endpoints: Endpoint[] } }).data.endpoints;

async function cron(e: typeof env = env): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), e, ctx);
  await waitOnExecutionContext(ctx);
}

afterEach(() => {
  vi.restoreAllMocks();
  forgetHealthMemo();
});

describe("flush: records' attempts into the minute rollups", () => {
  it("counts every attempt once however often the records are flushed; a late settle after the abandoned record counts", async () => {
    const model = `test/flush-${uid()}`;
    const minute = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
    const id = `gen-health-flush-${uid()}`;
    const tried = [
      attempt({ model, provider: "cerebras", providerName: "Cerebras", status: 503, at: minute + 1000, latencyMs: 40, tokensPerSecond: null }),
      attempt({ model, at: minute + 2000, latencyMs: 250, tokensPerSecond: 80.5 }),
    ];
    await flushGenerations(env.DB, [JSON.stringify(record(id, tried, model))]);
    await flushGenerations(env.DB, [JSON.stringify(record(id, tried, model))]); // a retried flush (its first try committed unseen)
    const once = {
      minutes: [
        { provider: "cerebras", minute, counted: 1, up: 0 },
        { provider: "groq", minute, counted: 1, up: 1 },
      ],
      histograms: [
        { provider: "groq", minute, metric: "latency", buckets: { 270: 1 } }, // 250 ms: the bucket (240, 270]
        { provider: "groq", minute, metric: "throughput", buckets: { 90: 1 } }, // 80.5 tok/s: (80, 90]
      ],
    };
    expect(await rollupsOf(model)).toEqual(once);

    // The ledger's "abandoned" record (made at admission: no attempt yet), then the late settle's, which replaces it.
    const late = `gen-health-late-${uid()}`;
    await flushGenerations(env.DB, [JSON.stringify(record(late, "[]", model))]);
    expect(await rollupsOf(model)).toEqual(once);
    const served = attempt({ model, provider: "sambanova", providerName: "SambaNova", at: minute + 3000, latencyMs: 900, tokensPerSecond: 50 });
    await flushGenerations(env.DB, [JSON.stringify(record(late, [served], model))]);
    await flushGenerations(env.DB, [JSON.stringify(record(late, [served], model))]); // and retried
    const after = await rollupsOf(model);
    expect(after.minutes).toEqual([...once.minutes, { provider: "sambanova", minute, counted: 1, up: 1 }]);
    expect(after.histograms).toEqual([
      ...once.histograms,
      { provider: "sambanova", minute, metric: "latency", buckets: { 900: 1 } },
      { provider: "sambanova", minute, metric: "throughput", buckets: { 50: 1 } },
    ]);
    expect(await env.DB.prepare("SELECT provider_responses FROM generations WHERE id = ?").bind(late).first("provider_responses")).toBe(
      JSON.stringify([served]),
    );
  });

  it("a record without attempts, with invalid JSON or an incomplete attempt still lands, adding nothing", async () => {
    const model = `test/flush-none-${uid()}`;
    const ids = [`gen-health-none-${uid()}`, `gen-health-bad-${uid()}`, `gen-health-part-${uid()}`];
    const partial = JSON.stringify([{ model, status: 200 }]);
    await flushGenerations(
      env.DB,
      [record(ids[0]!, null, model), record(ids[1]!, "[{not json", model), record(ids[2]!, partial, model)].map((r) => JSON.stringify(r)),
    );
    for (const id of ids) expect(await env.DB.prepare("SELECT id FROM generations WHERE id = ?").bind(id).first()).not.toBeNull();
    expect(await rollupsOf(model)).toEqual({ minutes: [], histograms: [] });
  });
});

describe("the Cron Trigger's fold", () => {
  it("computes uptime per window and nearest-rank percentiles exactly, and prunes day-old attempts", async () => {
    const NOW = Date.now();
    const model = `test/fold-${uid()}`;
    const at = (agoMs: number) => NOW - agoMs;
    // Ten served attempts in the last 5 minutes; latencies 100…1000 ms shuffled; throughput on seven of them.
    const latencies = [300, 100, 200, 500, 400, 1000, 700, 600, 900, 800];
    const tps = [10, null, 20, 30, null, 40, 50, 60, null, 70];
    const rows: Row[] = latencies.map((latencyMs, i) => ({ model, provider: "p1", at: at((i + 1) * 1000), status: 200, latencyMs, tokensPerSecond: tps[i] }));
    rows.push(
      { model, provider: "p1", at: at(20_000), status: 502, latencyMs: 5 }, // unreachable: down, no latency sample
      { model, provider: "p1", at: at(30_000), status: 500, latencyMs: 6 },
      { model, provider: "p1", at: at(1 * MIN), status: 429, latencyMs: 7 }, // rate limited: counted neither way
      { model, provider: "p1", at: at(2 * MIN), status: 400, latencyMs: 8 }, // the caller's fault: the carrier was up; not served
      { model, provider: "p1", at: at(10 * MIN), status: 504, latencyMs: 9 }, // timeout, only inside 30 min and 1 day
      { model, provider: "p1", at: at(2 * 60 * MIN), status: 200, latencyMs: 99_999, tokensPerSecond: 9_999 }, // older than 30 min: no percentile
      { model, provider: "p1", at: at(3 * 60 * MIN), status: 500, latencyMs: 10 },
      { model, provider: "p1", at: at(24 * 60 * MIN + 30 * MIN), status: 500, latencyMs: 11 }, // outside the day, inside the prune margin
      { model, provider: "p1", at: at(2 * 24 * 60 * MIN), status: 200, latencyMs: 12 }, // pruned
      { model, provider: "p2", at: at(MIN), status: 502, latencyMs: 13 },
      // The carrier's own 4xx (its key revoked, its account empty, the model retired) is its failure: down.
      { model, provider: "p3", at: at(MIN), status: 401, latencyMs: 14 },
      { model, provider: "p3", at: at(MIN), status: 402, latencyMs: 15 },
      { model, provider: "p3", at: at(MIN), status: 404, latencyMs: 16 },
      { model, provider: "p3", at: at(MIN), status: 422, latencyMs: 17 }, // it judged the request invalid: up
    );
    await insertAttempts(rows);

    const snapshot = await refreshHealth(env, NOW);
    expect(JSON.parse((await env.CATALOG.get(HEALTH_KV_KEY))!)).toEqual(snapshot);
    expect(snapshot.at).toBe(NOW);
    // 5 min: up = 10 served + the 400 = 11, counted = 11 + 502 + 500 = 13; 30 min adds the 504 (14);
    // the day adds the old 200 (up) and the 3 h 500: 12 of 16.
    // Latency, n = 10 sorted 100…1000, nearest rank k = ceil(p·n/100): p50 → k 5 = 500, p75 → k 8 = 800,
    // p90 → k 9 = 900, p99 → k 10 = 1000. Throughput, n = 7 sorted 10…70: p50 → k 4 = 40, p75 → k 6 = 60,
    // p90 → k 7 = 70, p99 → k 7 = 70.
    expect(snapshot.endpoints[model]).toEqual({
      p1: { up: [11, 11, 12], counted: [13, 14, 16], latencyMs: [500, 800, 900, 1000], tokensPerSecond: [40, 60, 70, 70] },
      p2: { up: [0, 0, 0], counted: [1, 1, 1] },
      p3: { up: [1, 1, 1], counted: [4, 4, 4] },
    });
    // Pruned: the counts of the minute two days ago (kept: the one a day and a half hour ago, inside the
    // margin), and the histograms older than 30 minutes and the margin (the served attempt 2 h ago's).
    const left = await rollupsOf(model);
    const minuteOf = (agoMs: number) => Math.floor(at(agoMs) / MIN) * MIN;
    expect(left.minutes.map((r) => r.minute)).not.toContain(minuteOf(2 * 24 * 60 * MIN));
    expect(left.minutes.map((r) => r.minute)).toContain(minuteOf(24 * 60 * MIN + 30 * MIN));
    expect(left.histograms.map((r) => r.minute)).not.toContain(minuteOf(2 * 60 * MIN));
    expect(left.histograms.length).toBeGreaterThan(0);
  });
});

describe("endpoint health on /models/…/endpoints and the console", () => {
  const MODEL = "qwen/qwen3-32b";

  it("serves uptime to everyone and percentiles to key holders, without a single D1 statement", async () => {
    forgetHealthMemo();
    const NOW = Date.now();
    // Groq: 3 served (latency 200/400/600 ms, 30/60/90 tok/s) and one 502 a minute ago; a 500 two hours ago.
    await insertAttempts([
      { model: MODEL, provider: "groq", at: NOW - 10_000, status: 200, latencyMs: 400, tokensPerSecond: 60 },
      { model: MODEL, provider: "groq", at: NOW - 20_000, status: 200, latencyMs: 200, tokensPerSecond: 30 },
      { model: MODEL, provider: "groq", at: NOW - 30_000, status: 200, latencyMs: 600, tokensPerSecond: 90 },
      { model: MODEL, provider: "groq", at: NOW - MIN, status: 502, latencyMs: 50 },
      { model: MODEL, provider: "groq", at: NOW - 120 * MIN, status: 200, latencyMs: 50 },
    ]);
    // Other tests' attempts may share the model: assert against this one fold's figures.
    const snapshot = await refreshHealth(env, NOW);
    const groq = snapshot.endpoints[MODEL]!.groq!;
    const { key } = await newAccount(1);

    const { d1, seen } = watchedDb();
    const anonymous = (await endpointsOf(await fetchWith(`/api/v1/models/${MODEL}/endpoints`, { DB: d1 }))).find((e) => e.tag === "groq")!;
    expect(anonymous).toMatchObject({
      uptime_last_5m: (groq.up[0]! / groq.counted[0]!) * 100,
      uptime_last_30m: (groq.up[1]! / groq.counted[1]!) * 100,
      uptime_last_1d: (groq.up[2]! / groq.counted[2]!) * 100,
      latency_last_30m: null,
      throughput_last_30m: null,
    });
    expect(anonymous.uptime_last_5m).toBeLessThan(100);
    const page = await fetchWith(`/models/${MODEL}`, { DB: d1 });
    expect(page.status).toBe(200);
    expect(seen.statements).toBe(0);
    const html = (await page.text()).replace(/\s+/g, " ");
    expect(html).toMatch(
      new RegExp(
        `<th scope="row">Groq</th>.*?<td class="num">${(anonymous.uptime_last_1d as number).toFixed(1)}%</td><td class="num">${(groq.latencyMs![0] / 1000).toFixed(2)} s</td>`,
      ),
    );

    // With a valid key (its lookup is the only D1 read), the percentiles as the contract's PercentileStats.
    const keyed = (await endpointsOf(await fetchWith(`/api/v1/models/${MODEL}/endpoints`, {}, { authorization: `Bearer ${key}` }))).find(
      (e) => e.tag === "groq",
    )!;
    const [p50, p75, p90, p99] = groq.latencyMs!;
    expect(keyed.latency_last_30m).toEqual({ p50, p75, p90, p99 });
    const [t50, t75, t90, t99] = groq.tokensPerSecond!;
    expect(keyed.throughput_last_30m).toEqual({ p50: t50, p75: t75, p90: t90, p99: t99 });
    // A wrong key is no key: the public figures, not a 401.
    const wrong = await fetchWith(`/api/v1/models/${MODEL}/endpoints`, {}, { authorization: "Bearer sk-sy-v1-nope" });
    expect(wrong.status).toBe(200);
    expect((await endpointsOf(wrong)).find((e) => e.tag === "groq")).toMatchObject({ latency_last_30m: null, throughput_last_30m: null });
  });

  it("an isolate reads KV once per memo period, and once it has a snapshot never waits on KV", async () => {
    await cron();
    const reads = { n: 0 };
    let hang = false;
    const kv = new Proxy(env.CATALOG, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== "get" || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
        return (key: string, ...rest: unknown[]) => {
          if (key !== HEALTH_KV_KEY) return (value as (...a: unknown[]) => unknown).call(target, key, ...rest);
          reads.n++;
          return hang ? new Promise(() => {}) : (value as (...a: unknown[]) => unknown).call(target, key, ...rest);
        };
      },
    });
    const { d1, seen } = watchedDb();
    for (let i = 0; i < 20; i++) expect((await fetchWith(`/api/v1/models/${MODEL}/endpoints`, { DB: d1, CATALOG: kv })).status).toBe(200);
    expect(seen.statements).toBe(0);
    expect(reads.n).toBe(1);

    // 31 s later, with KV hanging: the stale snapshot is served at once, one re-read goes to waitUntil.
    const first = await readHealth({ ...env, CATALOG: kv }, () => {}, settings(env).HEALTH_MEMO_MS);
    const later = Date.now() + 31_000;
    vi.spyOn(Date, "now").mockReturnValue(later);
    hang = true;
    const background: Promise<unknown>[] = [];
    expect(await readHealth({ ...env, CATALOG: kv }, (p) => background.push(p), settings(env).HEALTH_MEMO_MS)).toBe(first);
    expect(await readHealth({ ...env, CATALOG: kv }, (p) => background.push(p), settings(env).HEALTH_MEMO_MS)).toBe(first);
    expect(background).toHaveLength(1);
    expect(reads.n).toBe(2);
  });

  it("with no snapshot yet, health is unknown (null), never an error", async () => {
    await env.CATALOG.delete(HEALTH_KV_KEY);
    const { d1 } = watchedDb();
    const res = await fetchWith(`/api/v1/models/${MODEL}/endpoints`, { DB: d1 });
    expect(res.status).toBe(200);
    for (const e of await endpointsOf(res))
      expect(e).toMatchObject({ uptime_last_5m: null, uptime_last_30m: null, uptime_last_1d: null, latency_last_30m: null, throughput_last_30m: null });
  });

  it("a fold whose D1 batch fails keeps the last snapshot and logs no query parameters", async () => {
    await cron();
    const before = await env.CATALOG.get(HEALTH_KV_KEY);
    expect((JSON.parse(before!) as HealthSnapshot).at).toBeGreaterThan(0);
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    await cron({ ...env, DB: watchedDb().d1 });
    expect(await env.CATALOG.get(HEALTH_KV_KEY)).toBe(before);
    expect(JSON.stringify(spy.mock.calls)).toContain("endpoint health fold");
    expect(JSON.stringify(spy.mock.calls)).not.toContain("D1 must not be queried");
  });
});
