// Scenario `cache` (not a target; only with --only): what the answer cache adds or saves against a carrier
// call (docs/caching.md). Concurrency 1, the router only, three kinds of request taking turns in blocks:
//   carrier: no X-OpenRouter-Cache — every request goes to the carrier (the local simulator: a carrier that
//            answers at once, so the difference is the router's own work, not a real carrier's seconds);
//   hit:     X-OpenRouter-Cache: true on one request whose answer is stored — every measured one a HIT;
//   miss:    X-OpenRouter-Cache: true on a request new each time — a MISS: the lookup, the carrier, the store.
// Each block's first request opens its connection and is not counted; round −1 warms every kind up.
import { setTimeout as sleep } from "node:timers/promises";
import { keepAliveAgent, send, stats, type Stats } from "./load.ts";
import { chatBody, chatRequest, type Target } from "./scenarios.ts";

export type CacheTimes = { requests: number; latency_ms: Stats; ttfb_ms: Stats };
export type AnswerCacheRow = {
  variant: "non-stream" | "stream";
  tokens: number;
  carrier: CacheTimes;
  hit: CacheTimes;
  miss: CacheTimes;
  /** Medians: the hit's and the miss's latency less the carrier call's, ms. */
  hit_minus_carrier_ms: number;
  miss_minus_carrier_ms: number;
};

const ROUNDS = 10;
const PER_ROUND = 10;
/** How long the first stored answer may take to become a hit (its store runs after the answer, off the response). */
const PRIME_DEADLINE_MS = 15_000;
const CACHE_HEADER = { "x-openrouter-cache": "true" };

type Kind = "carrier" | "hit" | "miss";

export async function answerCacheCost(router: Target, o: { model: string; key: string; tokens: number }): Promise<AnswerCacheRow[]> {
  const rows: AnswerCacheRow[] = [];
  let serial = 0;
  for (const stream of [false, true]) {
    const same = chatBody({ model: o.model, stream, tokens: o.tokens, words: `Answer cache ${process.pid}` });
    const cached: Target = { ...router, headers: { ...router.headers, ...CACHE_HEADER } };
    await primeHit(cached, o.key, same);
    const times: Record<Kind, { latency: number[]; ttfb: number[] }> = {
      carrier: { latency: [], ttfb: [] },
      hit: { latency: [], ttfb: [] },
      miss: { latency: [], ttfb: [] },
    };
    for (let round = -1; round < ROUNDS; round++)
      for (const kind of ["carrier", "hit", "miss"] as const) {
        const agent = keepAliveAgent(1);
        try {
          for (let i = 0; i <= PER_ROUND; i++) {
            const body = kind === "miss" ? chatBody({ model: o.model, stream, tokens: o.tokens, words: `Answer cache miss ${process.pid} ${serial++}` }) : same;
            const r = await send(agent, router.origin, chatRequest(kind === "carrier" ? router : cached, o.key, body), { stream, timeoutMs: 60_000 });
            if (!r.ok) throw new Error(`answer cache (${kind}): ${r.error}`);
            if (round >= 0 && i > 0) {
              times[kind].latency.push(r.totalMs);
              times[kind].ttfb.push(r.ttfbMs);
            }
          }
        } finally {
          agent.destroy();
        }
      }
    const of = (k: Kind): CacheTimes => ({ requests: times[k].latency.length, latency_ms: stats(times[k].latency), ttfb_ms: stats(times[k].ttfb) });
    const row = { variant: stream ? "stream" : "non-stream", tokens: o.tokens, carrier: of("carrier"), hit: of("hit"), miss: of("miss") } as const;
    rows.push({
      ...row,
      hit_minus_carrier_ms: row.hit.latency_ms.p50 - row.carrier.latency_ms.p50,
      miss_minus_carrier_ms: row.miss.latency_ms.p50 - row.carrier.latency_ms.p50,
    });
  }
  return rows;
}

/** Sends the request with the cache asked until the router answers it from the cache (bounded): the hits measured are hits. */
async function primeHit(cached: Target, key: string, body: Buffer): Promise<void> {
  const deadline = Date.now() + PRIME_DEADLINE_MS;
  for (;;) {
    const spec = chatRequest(cached, key, body);
    const res = await fetch(new URL(spec.path, cached.origin), {
      method: "POST",
      headers: spec.headers,
      body: new Uint8Array(body),
      signal: AbortSignal.timeout(60_000),
    });
    await res.arrayBuffer();
    const status = res.headers.get("x-openrouter-cache-status");
    if (status === "HIT") return;
    if (status === null || status === "BYPASS") throw new Error(`answer cache: the router answered ${res.status} without a cacheable status (${status})`);
    if (Date.now() > deadline) throw new Error(`answer cache: no HIT within ${PRIME_DEADLINE_MS / 1000} s`);
    await sleep(100); // the first answer's store runs after it (waitUntil): poll, bounded, until it is there
  }
}

export function answerCacheMarkdown(rows: AnswerCacheRow[], table: (head: string[], body: string[][]) => string, f: (v: number, d?: number) => string): string {
  const body = rows.flatMap((r) =>
    (["carrier", "hit", "miss"] as const).map((k) => [
      r.variant,
      k,
      String(r[k].requests),
      f(r[k].latency_ms.p50, 2),
      f(r[k].latency_ms.p90, 2),
      f(r[k].ttfb_ms.p50, 2),
      k === "carrier" ? "" : f(k === "hit" ? r.hit_minus_carrier_ms : r.miss_minus_carrier_ms, 2),
    ]),
  );
  return table(["request", "answered by", "requests", "latency p50 ms", "p90 ms", "TTFB p50 ms", "p50 − carrier ms"], body);
}
