// The health fold scenario's Worker (`npm run bench -- --only fold`, bench/fold.ts): bench-only, never
// deployed. It imports the tree's own `foldMinutes` (src/db/endpoint-minutes.ts) and bucket bounds
// (src/db/health-buckets.ts) and is bundled by bench/fold.ts with esbuild; its D1 is the bench's local D1
// with the tree's migrations/ applied.
//
//   POST /fill {"rate": 10000, "now": ms} → {endpoints, minute_rows, histogram_rows, attempts, samples}
//   POST /fold {"now": ms}                → the Cron Trigger's fold as refreshHealth calls it:
//                                           {endpoints, statements: [{d1_ms, rows_read}]}
//
// /fill writes what a day of `rate` requests/s spread over the catalog's endpoints (SAMPLE, passed in by
// the bench) leaves in the minute rollups in steady state — the counts' day and hour of minutes, the
// histograms' 30 minutes and hour — as the writer would have summed them: each minute's attempts per
// endpoint drawn around rate × 60 / endpoints, 2 % of them the carrier's failures, and every served one's
// latency and throughput drawn from a log-normal around the endpoint's own median and counted in its
// bucket. Seeded (the tree's mulberry32): the same rows in every run.
import { foldMinutes } from "../src/db/endpoint-minutes";
import { BUCKET_COLUMNS, bucketBounds } from "../src/db/health-buckets";
import { PERCENTILES_WINDOW_MS, UPTIME_WINDOWS_MS } from "../src/health/health-snapshot";
import { mulberry32 } from "../src/routing/mulberry32";

const MIN = 60_000;
/** As refreshHealth keeps them (src/health/health-snapshot.ts: PRUNE_MARGIN_MS). */
const MARGIN_MS = 60 * MIN;
const ROWS_PER_STATEMENT = 2000;

/** A standard normal draw (Box–Muller). */
const normal = (random) => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
/** The bucket index of v: the first bound at or above it, the last for larger values (as the writer's SQL). */
function bucketOf(bounds, v) {
  let lo = 0;
  let hi = bounds.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bounds[mid] >= v) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

async function insertJson(db, sql, rows) {
  const statements = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) statements.push(db.prepare(sql).bind(JSON.stringify(rows.slice(i, i + ROWS_PER_STATEMENT))));
  for (let i = 0; i < statements.length; i += 20) await db.batch(statements.slice(i, i + 20));
}

async function fill(env, rate, now) {
  const sample = JSON.parse(env.SAMPLE);
  const endpoints = sample.models.flatMap((m) => m.carriers.map((c) => ({ model: m.id, provider: c.slug })));
  const random = mulberry32(36);
  const perMinute = (rate * 60) / endpoints.length;
  const last = now - (now % MIN);
  const countsFrom = last - UPTIME_WINDOWS_MS[2] - MARGIN_MS + MIN;
  const histogramsFrom = last - PERCENTILES_WINDOW_MS - MARGIN_MS + MIN;
  const latencyBounds = bucketBounds("latency");
  const throughputBounds = bucketBounds("throughput");
  const counts = [];
  const histograms = [];
  let attempts = 0;
  let samples = 0;
  for (const e of endpoints) {
    // Each endpoint its own medians: 150 ms … 2.5 s to the first token, 20 … 400 tokens/s.
    const latencyMedian = 150 * Math.exp(random() * Math.log(2500 / 150));
    const throughputMedian = 20 * Math.exp(random() * Math.log(400 / 20));
    for (let minute = countsFrom; minute <= last; minute += MIN) {
      // Poisson-like spread around the mean (normal approximation, at least 0).
      const n = Math.max(0, Math.round(perMinute + Math.sqrt(perMinute) * normal(random)));
      if (n === 0) continue;
      const down = Math.round(n * 0.02 * random() * 2);
      counts.push([e.model, e.provider, minute, n, n - down]);
      attempts += n;
      if (minute < histogramsFrom) continue;
      const served = n - down;
      const latency = new Array(BUCKET_COLUMNS.length).fill(0);
      const throughput = new Array(BUCKET_COLUMNS.length).fill(0);
      for (let s = 0; s < served; s++) {
        latency[bucketOf(latencyBounds, latencyMedian * Math.exp(0.5 * normal(random)))]++;
        throughput[bucketOf(throughputBounds, throughputMedian * Math.exp(0.4 * normal(random)))]++;
      }
      samples += served;
      histograms.push([e.model, e.provider, minute, "latency", ...latency], [e.model, e.provider, minute, "throughput", ...throughput]);
    }
  }
  const cols = (k) => Array.from({ length: k }, (_, i) => `json_extract(value, '$[${i}]')`).join(", ");
  await insertJson(env.DB, `INSERT INTO endpoint_minutes (model, provider, minute, counted, up) SELECT ${cols(5)} FROM json_each(?1)`, counts);
  await insertJson(
    env.DB,
    `INSERT INTO endpoint_minute_histograms (model, provider, minute, metric, ${BUCKET_COLUMNS.join(", ")}) SELECT ${cols(4 + BUCKET_COLUMNS.length)} FROM json_each(?1)`,
    histograms,
  );
  return { endpoints: endpoints.length, minute_rows: counts.length, histogram_rows: histograms.length, attempts, samples };
}

/** The D1 binding with its batch results kept: the meta says what D1 did per statement. */
function observed(db) {
  const seen = { results: [] };
  const d1 = new Proxy(db, {
    get(target, prop) {
      if (prop === "batch")
        return async (statements) => {
          const results = await target.batch(statements);
          seen.results.push(...results);
          return results;
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { d1, seen };
}

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (request.method === "POST" && url.pathname === "/fill") {
        const { rate, now } = await request.json();
        if (!(rate > 0) || !Number.isSafeInteger(now)) return json({ error: "rate > 0 and now (Unix ms)" }, 400);
        return json(await fill(env, rate, now));
      }
      if (request.method === "POST" && url.pathname === "/fold") {
        // As refreshHealth calls it (its windows and prune cuts at `now`): the filled minutes are all inside, nothing is pruned.
        const { now } = await request.json();
        const { d1, seen } = observed(env.DB);
        const folded = await foldMinutes(
          d1,
          UPTIME_WINDOWS_MS.map((w) => now - w),
          now - PERCENTILES_WINDOW_MS,
          now - UPTIME_WINDOWS_MS[2] - MARGIN_MS,
          now - PERCENTILES_WINDOW_MS - MARGIN_MS,
        );
        return json({
          endpoints: folded.uptime.length,
          percentiles: folded.percentiles.length,
          statements: seen.results.map((r) => ({
            d1_ms: r.meta?.duration ?? NaN,
            rows_read: r.meta?.rows_read ?? NaN,
            rows_written: r.meta?.rows_written ?? NaN,
          })),
        });
      }
      return json({ error: "not found" }, 404);
    } catch (err) {
      return json({ error: err instanceof Error ? `${err.message}${err.cause ? ` (${String(err.cause)})` : ""}` : String(err) }, 500);
    }
  },
};
