import { describe, it, expect, beforeEach } from "vitest";
import { env } from "cloudflare:test";
import { newAccount, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { chatWithVars } from "./with-vars";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { refreshHealth } from "../../src/health/health-snapshot";
import { forgetHealthMemo } from "../../src/health/health-memo";
import { rollUpAttempts } from "./health-seed";

// Live endpoint health steering the request path: this isolate's failure streaks act on the next
// request; the Cron Trigger's snapshot (attempts folded into KV) demotes endpoints in an outage and
// feeds `sort: latency | throughput`. Requests go through the app with these thresholds (the suite's
// config sets them out of reach so that other tests' deliberate failures never reorder their carriers).
const catalog = Catalog.parse(catalogJson);
const VARS = { HEALTH_CONSECUTIVE_FAILURES: "3", HEALTH_MIN_ATTEMPTS: "10", HEALTH_OUTAGE_UPTIME_PERCENT: "80" };
type Json = Record<string, any>;

async function carriersFor(model: string, extra: Json, directives = "") {
  const a = await newAccount(10);
  const tag = uniqueTag();
  // Non-stream: every attempt, the served one included, is noted before the answer is returned.
  const { res } = await chatWithVars(VARS, a.key, { model, ...extra, ...user(`hi ${directives} [sim tag=${tag}]`) });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return (await simRequests(tag)).map((r) => r.carrier);
}

/** Attempts into the fold's minute rollups (as flushed records' would be), `n` of them, spread over the last minutes. */
async function attempts(model: string, provider: string, n: number, row: (i: number) => { status: number; latencyMs: number; tps?: number }) {
  const now = Date.now();
  await rollUpAttempts(
    Array.from({ length: n }, (_, i) => {
      const r = row(i);
      return { model, provider, at: now - 60_000 - i * 1000, status: r.status, latencyMs: r.latencyMs, tokensPerSecond: r.tps ?? null };
    }),
  );
}

beforeEach(() => forgetHealthMemo());

describe("this isolate's failure streaks", () => {
  const MODEL = "google/gemma-3-27b-it";
  const [FIRST, SECOND] = catalog.endpoints(MODEL).map((e) => e.provider);

  it("after 3 failures in a row an endpoint goes to the back at once; it is still tried when the others fail", async () => {
    for (let i = 0; i < 3; i++) expect(await carriersFor(MODEL, {}, `[sim carrier=${FIRST} status=503]`)).toEqual([FIRST, SECOND]);
    expect(await carriersFor(MODEL, {})).toEqual([SECOND]);
    // Demoted, never removed: when the front carrier fails, the demoted one serves (and its streak ends).
    expect(await carriersFor(MODEL, {}, `[sim carrier=${SECOND} status=503]`)).toEqual([SECOND, FIRST]);
    expect(await carriersFor(MODEL, {})).toEqual([FIRST]);
  });

  it("an explicit provider.order is kept even for an endpoint on a streak", async () => {
    const model = "mistralai/mistral-small-3.2-24b-instruct";
    const [first, second] = catalog.endpoints(model).map((e) => e.provider);
    for (let i = 0; i < 3; i++) await carriersFor(model, {}, `[sim carrier=${first} status=503]`);
    expect(await carriersFor(model, {})).toEqual([second]);
    expect(await carriersFor(model, { provider: { order: [first] } })).toEqual([first]);
  });
});

describe("the Cron Trigger's snapshot", () => {
  it("an endpoint whose uptime over 5 minutes is below the threshold goes to the back", async () => {
    const model = "mistralai/mistral-nemo";
    const [first, second] = catalog.endpoints(model).map((e) => e.provider);
    expect(await carriersFor(model, {})).toEqual([first]);
    await attempts(model, first!, 10, (i) => ({ status: i < 3 ? 200 : 503, latencyMs: 100 })); // 30 % up
    await refreshHealth(env);
    forgetHealthMemo();
    expect(await carriersFor(model, {})).toEqual([second]);
  });

  it("sort: latency and throughput read the measured percentiles; :nitro sorts by throughput", async () => {
    const model = "qwen/qwen3-coder";
    const [cheap, dear] = catalog.endpoints(model).map((e) => e.provider);
    // The dear carrier answers faster and streams faster.
    await attempts(model, cheap!, 20, () => ({ status: 200, latencyMs: 900, tps: 40 }));
    await attempts(model, dear!, 20, () => ({ status: 200, latencyMs: 200, tps: 150 }));
    await refreshHealth(env);
    forgetHealthMemo();
    expect(await carriersFor(model, {})).toEqual([cheap]);
    expect(await carriersFor(model, { provider: { sort: "latency" } })).toEqual([dear]);
    expect(await carriersFor(model, { provider: { sort: "throughput" } })).toEqual([dear]);
    expect(await carriersFor(`${model}:nitro`, {})).toEqual([dear]);
    // preferred_max_latency is in seconds: the cheap carrier's 0.9 s p50 misses 0.5 s and moves back.
    expect(await carriersFor(model, { provider: { preferred_max_latency: 0.5 } })).toEqual([dear]);
    expect(await carriersFor(model, { provider: { preferred_min_throughput: 100 } })).toEqual([dear]);
    expect(await carriersFor(model, { provider: { preferred_min_throughput: 10 } })).toEqual([cheap]);
  });
});
