import { describe, it, expect, afterEach, vi } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import worker from "../../src/index";
import { createScheduledController } from "cloudflare:test";
import { db } from "../../src/db/client";
import { generations, type NewGeneration } from "../../src/db/schema";
import { UPTIME_KV_KEY, forgetUptimeMemo } from "../../src/uptime/uptime-snapshot";

// Uptime is public and anonymous: the request path must never run an aggregate over D1 for it. The
// Cron Trigger computes every model's figures in one query and stores them in KV; requests read that.

const MODEL = "qwen/qwen3-32b";
let n = 0;
const row = (providerName: string, status: number, agoMs: number): NewGeneration => ({
  id: `gen-uptimecache-${Date.now()}-${n++}`, accountId: "acct_uptime_cache", keyHash: "uptime", model: MODEL, providerName, streamed: false,
  createdAt: Date.now() - agoMs, tokensPrompt: 1, tokensCompletion: 1, tokensReasoning: 0, costNano: 0, status,
});

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

async function fetchWith(path: string, overrides: Partial<typeof env>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request("https://switchyard.test" + path), { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

async function cron(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), env, ctx);
  await waitOnExecutionContext(ctx);
}

afterEach(() => {
  vi.restoreAllMocks();
  forgetUptimeMemo();
});

describe("uptime from the Cron Trigger's snapshot", () => {
  it("the endpoints API and the model page serve uptime without a single D1 statement", async () => {
    const rows = [row("Groq", 200, 60_000), row("Groq", 502, 120_000), row("Groq", 200, 3 * 3600_000), row("Groq", 200, 3 * 3600_000)];
    const d = db(env.DB);
    await d.batch([d.insert(generations).values(rows[0]!), ...rows.slice(1).map((r) => d.insert(generations).values(r))]);
    await cron();
    forgetUptimeMemo();

    const { d1, seen } = watchedDb();
    const res = await fetchWith(`/api/v1/models/${MODEL}/endpoints`, { DB: d1 });
    expect(res.status).toBe(200);
    const groq = ((await res.json()) as { data: { endpoints: Array<Record<string, unknown>> } }).data.endpoints.find((e) => e.provider_name === "Groq")!;
    expect(groq).toMatchObject({ uptime_last_5m: 50, uptime_last_30m: 50, uptime_last_1d: 75 });

    const page = await fetchWith(`/models/${MODEL}`, { DB: d1 });
    expect(page.status).toBe(200);
    const html = (await page.text()).replace(/\s+/g, " ");
    expect(html).toMatch(/<th scope="row">Groq<\/th>.*?<td class="num">75\.0%<\/td>/);
    expect(seen.statements).toBe(0);
  });

  it("many anonymous requests read KV at most once per isolate memo, never D1", async () => {
    await cron();
    forgetUptimeMemo();
    const { d1, seen } = watchedDb();
    const reads = { n: 0 };
    const kv = new Proxy(env.CATALOG, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== "get" || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
        return (key: string, ...rest: unknown[]) => {
          if (key === UPTIME_KV_KEY) reads.n++;
          return (value as (...a: unknown[]) => unknown).call(target, key, ...rest);
        };
      },
    });
    for (let i = 0; i < 20; i++) expect((await fetchWith(`/api/v1/models/${MODEL}/endpoints`, { DB: d1, CATALOG: kv })).status).toBe(200);
    expect(seen.statements).toBe(0);
    expect(reads.n).toBe(1);
  });

  it("with no snapshot yet (or KV failing), uptime is unknown (null), never an error", async () => {
    await env.CATALOG.delete(UPTIME_KV_KEY);
    forgetUptimeMemo();
    const { d1 } = watchedDb();
    const res = await fetchWith(`/api/v1/models/${MODEL}/endpoints`, { DB: d1 });
    expect(res.status).toBe(200);
    for (const e of ((await res.json()) as { data: { endpoints: Array<Record<string, unknown>> } }).data.endpoints)
      expect(e).toMatchObject({ uptime_last_5m: null, uptime_last_30m: null, uptime_last_1d: null });
  });

  it("a refresh whose D1 query fails keeps the last snapshot and logs no query parameters", async () => {
    await cron();
    const before = await env.CATALOG.get(UPTIME_KV_KEY);
    expect(before).not.toBeNull();
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const { d1 } = watchedDb();
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), { ...env, DB: d1 }, ctx);
    await waitOnExecutionContext(ctx);
    expect(await env.CATALOG.get(UPTIME_KV_KEY)).toBe(before);
    expect(JSON.stringify(spy.mock.calls)).toContain("uptime refresh");
    expect(JSON.stringify(spy.mock.calls)).not.toContain("D1 must not be queried");
  });
});
