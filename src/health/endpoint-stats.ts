/** Percentiles as the contract's PercentileStats. */
export type PercentileStats = { p50: number; p75: number; p90: number; p99: number };

/** An endpoint's figures from our own traffic; null where there was none in the window (or, for latency and throughput, for callers without a key). */
export interface EndpointStats {
  uptime_last_5m: number | null;
  uptime_last_30m: number | null;
  uptime_last_1d: number | null;
  /** Time to first token, milliseconds, last 30 minutes. */
  latency_last_30m: PercentileStats | null;
  /** Completion tokens per second, last 30 minutes. */
  throughput_last_30m: PercentileStats | null;
}
