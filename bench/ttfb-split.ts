// Diagnostics (not a target): where each Worker's time to first byte goes on a stream. The simulator stamps when
// a request reached it and when it wrote the answer's first byte, on the machine's monotonic clock (the same
// `process.hrtime` clock as this process), so each stream's time to first byte splits into
//   before the carrier: the client sent → the carrier has read the request (the Worker's own work before its fetch);
//   carrier: the carrier's own time to its first byte (the same work for every Worker);
//   after the carrier: the carrier's first byte → the client's (the response headers, the first read, rewrite, write).
// Concurrency 1; the pass-through, the floor relay and the router take turns in rounds, each request tagged so its
// carrier record is found. Back to back (as in scenario 2, where the previous stream's settle overlaps the next
// request), and with a pause between requests.
import { setTimeout as sleep } from "node:timers/promises";
import { keepAliveAgent, send, stats } from "./load.ts";
import { chatBody, chatRequest, type Target, type TargetKind } from "./scenarios.ts";

export type TtfbParts = { requests: number; ttfb_ms: number; before_carrier_ms: number; carrier_ms: number; after_carrier_ms: number };
export type TtfbSplitRow = { chunks: number; pause_ms: number } & Partial<Record<TargetKind, TtfbParts>>;

type SimRecord = { tag: string | null; received_mono_ms: number; first_write_mono_ms: number | null };
type Timed = { sentMs: number; firstMs: number };

const ROUNDS = 10;
const PER_ROUND = 10;
/** The pause that lets the previous stream's drain and settle finish before the next request. */
const PAUSE_MS = 50;

const median = (values: number[]) => stats(values).p50;

export async function ttfbSplit(simulatorUrl: string, targets: Target[], o: { model: string; key: string; chunks: number[] }): Promise<TtfbSplitRow[]> {
  const rows: TtfbSplitRow[] = [];
  let serial = 0;
  for (const chunks of o.chunks)
    for (const pause of [0, PAUSE_MS]) {
      const timed = new Map<string, { kind: TargetKind; t: Timed }>();
      const run = `ttfb-${process.pid}-${chunks}-${pause}`;
      for (let round = -1; round < ROUNDS; round++)
        for (const target of targets) {
          const agent = keepAliveAgent(1);
          try {
            // Each block's first request opens the connection; round −1 warms every Worker up. Neither is counted.
            for (let i = 0; i <= PER_ROUND; i++) {
              const tag = `${run}-${serial++}`;
              const spec = chatRequest(
                target,
                o.key,
                chatBody({ model: o.model, stream: true, tokens: chunks, words: "TTFB split", extra: `[sim tag=${tag}]` }),
              );
              const r = await send(agent, target.origin, spec, { stream: true, timeoutMs: 60_000 });
              if (!r.ok) throw new Error(`${target.kind}: ${r.error}`);
              if (round >= 0 && i > 0)
                timed.set(tag, { kind: target.kind, t: { sentMs: Number(r.startNs) / 1e6, firstMs: Number(r.startNs) / 1e6 + r.ttfbMs } });
              if (pause > 0) await sleep(pause);
            }
          } finally {
            agent.destroy();
          }
        }
      const records = ((await (await fetch(`${simulatorUrl}/__sim/requests`, { signal: AbortSignal.timeout(10_000) })).json()) as { requests: SimRecord[] })
        .requests;
      const parts = new Map<TargetKind, Array<{ ttfb: number; before: number; carrier: number; after: number }>>();
      for (const rec of records) {
        const sent = rec.tag === null ? undefined : timed.get(rec.tag);
        if (!sent || rec.first_write_mono_ms === null) continue;
        const { sentMs, firstMs } = sent.t;
        const list = parts.get(sent.kind) ?? [];
        list.push({
          ttfb: firstMs - sentMs,
          before: rec.received_mono_ms - sentMs,
          carrier: rec.first_write_mono_ms - rec.received_mono_ms,
          after: firstMs - rec.first_write_mono_ms,
        });
        parts.set(sent.kind, list);
      }
      const row: TtfbSplitRow = { chunks, pause_ms: pause };
      for (const [kind, list] of parts)
        row[kind] = {
          requests: list.length,
          ttfb_ms: median(list.map((p) => p.ttfb)),
          before_carrier_ms: median(list.map((p) => p.before)),
          carrier_ms: median(list.map((p) => p.carrier)),
          after_carrier_ms: median(list.map((p) => p.after)),
        };
      rows.push(row);
    }
  return rows;
}
