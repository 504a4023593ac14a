/**
 * The fixed histogram buckets of endpoint health's latency and throughput samples (the
 * `endpoint_minute_histograms` table, src/db/schema.ts): what makes the health fold's cost independent
 * of traffic — a minute of an endpoint is one row per metric however many requests it served.
 *
 * Bucket i holds the samples v with BOUNDS[i-1] < v ≤ BOUNDS[i], in the metric's unit; the first also
 * holds everything below its bound, the last everything above its own (a clamp, not an overflow bucket:
 * both are beyond what a carrier answers within its timeout). The bounds are 23 "nice" numbers per decade
 * (1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2, 2.2, 2.4, 2.7, 3, 3.3, 3.6, 4, 4.5, 5, 5.5, 6, 7, 8, 9), so
 * neighbours differ by at most 16.7 % (6 → 7; 12.5 % or less elsewhere), over four decades:
 *   latency (ms to the first token): 10 ms … 100 s; throughput (tokens/s): 1 … 10,000.
 * 93 buckets: with the table's four key columns, inside D1's 100 columns per table.
 */
export const METRICS = ["latency", "throughput"] as const;
export type Metric = (typeof METRICS)[number];

const MANTISSAS = [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2, 2.2, 2.4, 2.7, 3, 3.3, 3.6, 4, 4.5, 5, 5.5, 6, 7, 8, 9];
const DECADES = 4;
/** The lowest bound of each metric, in its unit. */
const FIRST_BOUND: Record<Metric, number> = { latency: 10, throughput: 1 };

/** The upper bounds of a metric's buckets, ascending (parsed from decimal text, so 1.1e3 is exactly 1100). */
export function bucketBounds(metric: Metric): number[] {
  const exponent = Math.log10(FIRST_BOUND[metric]);
  const bounds: number[] = [];
  for (let d = 0; d < DECADES; d++) for (const m of MANTISSAS) bounds.push(Number(`${m}e${exponent + d}`));
  bounds.push(Number(`1e${exponent + DECADES}`));
  return bounds;
}

export const BUCKETS = MANTISSAS.length * DECADES + 1;
/** The histogram's columns, in bucket order: b0 … b92. */
export const BUCKET_COLUMNS = Array.from({ length: BUCKETS }, (_, i) => `b${i}`);

/** SQL: the bucket index of the value `expr` for `metric` (the first bound at or above it; the last for larger values). */
export function bucketOfSql(metric: Metric, expr: string): string {
  const bounds = bucketBounds(metric);
  return `CASE ${bounds
    .slice(0, -1)
    .map((b, i) => `WHEN ${expr} <= ${b} THEN ${i}`)
    .join(" ")} ELSE ${bounds.length - 1} END`;
}

export const PERCENTILES = [50, 75, 90, 99] as const;

/**
 * Nearest-rank percentiles of a histogram (counts per bucket): for p, the k-th smallest of n samples with
 * k = ceil(p·n/100) lies in the first bucket whose running count reaches k, and the figure is that
 * bucket's upper bound — exact when samples fall on bounds, otherwise at most one bucket (≤ 16.7 %) above
 * the sample. Undefined without samples.
 */
export function histogramPercentiles(metric: Metric, counts: readonly number[]): number[] | undefined {
  const n = counts.reduce((a, b) => a + b, 0);
  if (n <= 0) return undefined;
  const bounds = bucketBounds(metric);
  return PERCENTILES.map((p) => {
    const k = Math.ceil((p * n) / 100);
    let seen = 0;
    for (let i = 0; i < counts.length; i++) {
      seen += counts[i]!;
      if (seen >= k) return bounds[i]!;
    }
    return bounds[bounds.length - 1]!;
  });
}
