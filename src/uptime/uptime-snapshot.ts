import type { Env } from "../env";
import { AUTO_MODEL, type Catalog } from "../catalog/catalog";
import { loadCatalog } from "../catalog/load";
import type { EndpointUptime } from "../catalog/present";
import { uptimeCounts } from "../db/uptime";

/** KV key (in the CATALOG namespace) of the uptime snapshot the Cron Trigger writes. */
export const UPTIME_KV_KEY = "uptime:v1";
/** How long an isolate trusts the snapshot it read before it reads KV again. */
const MEMO_TTL_MS = 30_000;

const MINUTE = 60_000;
/** The contract's windows: uptime_last_5m, uptime_last_30m, uptime_last_1d. */
export const UPTIME_WINDOWS_MS = [5 * MINUTE, 30 * MINUTE, 24 * 60 * MINUTE] as const;

/** `models[model][carrier display name]` = [up, counted] per window; `at` = when it was computed (Unix ms). */
export type UptimeSnapshot = { at: number; models: Record<string, Record<string, Array<[number, number]>>> };
const EMPTY: UptimeSnapshot = { at: 0, models: {} };

let memo: { snapshot: UptimeSnapshot; at: number } | undefined;

/**
 * Computes every catalog model's uptime per carrier for the three windows — one aggregate query over
 * D1's records — and stores it in KV. Run by the Cron Trigger, never on a request. Requests that named
 * `router/auto` (or no model) are kept apart and added to the default model's figures when read.
 */
export async function refreshUptime(env: Env, now = Date.now()): Promise<UptimeSnapshot> {
  const catalog = await loadCatalog(env);
  const pairs = catalog.models.flatMap((m) => catalog.endpoints(m.id).map((e) => [m.id, e.providerEntry.name] as const));
  for (const e of catalog.endpoints(catalog.file.default_model)) pairs.push([AUTO_MODEL, e.providerEntry.name]);
  const rows = await uptimeCounts(env.DB, pairs, UPTIME_WINDOWS_MS.map((w) => now - w));
  const snapshot: UptimeSnapshot = { at: now, models: {} };
  for (const r of rows) (snapshot.models[r.model] ??= {})[r.provider] = r.counts;
  await env.CATALOG.put(UPTIME_KV_KEY, JSON.stringify(snapshot));
  return snapshot;
}

/** The latest snapshot, through the isolate memo; empty (uptime unknown) when there is none or KV fails. */
export async function readUptime(env: Env): Promise<UptimeSnapshot> {
  const now = Date.now();
  if (memo && now - memo.at < MEMO_TTL_MS) return memo.snapshot;
  let snapshot = EMPTY;
  try {
    snapshot = parseSnapshot(await env.CATALOG.get(UPTIME_KV_KEY)) ?? EMPTY;
  } catch {
    snapshot = memo?.snapshot ?? EMPTY; // KV unavailable: keep what we had
  }
  memo = { snapshot, at: now };
  return snapshot;
}

function parseSnapshot(raw: string | null): UptimeSnapshot | undefined {
  if (raw === null) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<UptimeSnapshot>;
    return typeof parsed.at === "number" && typeof parsed.models === "object" && parsed.models !== null ? (parsed as UptimeSnapshot) : undefined;
  } catch {
    return undefined;
  }
}

/** A model's uptime per carrier display name, as percentages; null for a window without counted records. */
export function modelUptime(snapshot: UptimeSnapshot, catalog: Catalog, modelId: string): (carrier: string) => EndpointUptime {
  const sources = [snapshot.models[modelId], modelId === catalog.file.default_model ? snapshot.models[AUTO_MODEL] : undefined];
  return (carrier) => {
    const percent = (window: number): number | null => {
      let up = 0;
      let counted = 0;
      for (const s of sources) {
        const c = s?.[carrier]?.[window];
        if (c) {
          up += c[0];
          counted += c[1];
        }
      }
      return counted > 0 ? (up / counted) * 100 : null;
    };
    return { uptime_last_5m: percent(0), uptime_last_30m: percent(1), uptime_last_1d: percent(2) };
  };
}

/** Tests use this to make the next request re-read KV. */
export function forgetUptimeMemo(): void {
  memo = undefined;
}
