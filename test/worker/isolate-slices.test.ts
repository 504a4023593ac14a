import { describe, it, expect } from "vitest";
import type { SliceReport } from "../../src/ledger/contract";
import { IDLE_RELEASE_MS, IsolateSlices } from "../../src/ledger/isolate-slices";
import { Slice } from "../../src/ledger/slice";
import { FakeClock } from "./fake-clock";

// src/ledger/isolate-slices.ts on its own: the slices an isolate holds of one account's balance, and what it tells the ledger of them.

function setup() {
  const clock = new FakeClock();
  const reports: SliceReport[] = [];
  const slices = new IsolateSlices(clock, async (r) => void reports.push(r));
  const lease = (id: string, grantNano: number, useMs = 2_000) => {
    const s = new Slice(id, grantNano, clock.now(), clock.now() + useMs);
    slices.add(s, clock.waitUntil);
    return s;
  };
  return { clock, reports, slices, lease };
}

describe("isolate slices", () => {
  it("admits from the current slice while it has room; a settle gives back the hold less the cost", () => {
    const { clock, slices, lease } = setup();
    expect(slices.take(100, clock.waitUntil)).toBeNull();
    const s = lease("s1", 250);
    expect(slices.take(100, clock.waitUntil)).toBe(s);
    expect(slices.take(100, clock.waitUntil)).toBe(s);
    expect(slices.take(100, clock.waitUntil)).toBeNull();
    expect(s.remainingNano).toBe(50);
    expect(slices.finish(s, 100, 37, clock.waitUntil)).toEqual({ leaseId: "s1", admitted: 2 });
    expect(s.remainingNano).toBe(113);
  });

  it("a slice replaced with requests in flight gives back what they do not hold, and is released with its last settle", async () => {
    const { clock, reports, slices, lease } = setup();
    const old = lease("old", 1_000);
    slices.take(300, clock.waitUntil);
    const fresh = lease("new", 1_000);
    expect(slices.current).toBe(fresh);
    await clock.drain();
    expect(reports).toEqual([{ leaseId: "old", admitted: 1, returnedNano: 700 }]);
    expect(slices.finish(old, 300, 120, clock.waitUntil)).toEqual({ leaseId: "old", admitted: 1, release: true, returnedNano: 700 });
    expect(slices.size).toBe(1);
  });

  it("a slice whose use time is over is retired when next asked (idle: released at once)", async () => {
    const { clock, reports, slices, lease } = setup();
    lease("s1", 1_000, 2_000);
    await clock.advance(2_000);
    expect(slices.take(10, clock.waitUntil)).toBeNull();
    await clock.drain();
    expect(reports).toEqual([{ leaseId: "s1", admitted: 0, release: true }]);
    expect(slices.size).toBe(0);
  });

  it("a slice left idle is released after the idle time", async () => {
    const { clock, reports, slices, lease } = setup();
    const s = lease("s1", 1_000, 60_000);
    slices.take(10, clock.waitUntil);
    slices.finish(s, 10, 10, clock.waitUntil);
    await clock.advance(IDLE_RELEASE_MS - 1);
    expect(reports).toEqual([]);
    await clock.advance(1);
    expect(reports).toEqual([{ leaseId: "s1", admitted: 1, release: true }]);
  });

  it("renewal picks busy slices with uncounted admissions or due renewals; gone ones admit no more", () => {
    const { clock, slices, lease } = setup();
    const a = lease("a", 1_000, 60_000);
    slices.take(10, clock.waitUntil);
    expect(slices.due(clock.now(), 5_000)).toEqual([a]);
    slices.acknowledge([a.report()]);
    expect(slices.due(clock.now(), 5_000)).toEqual([]);
    expect(slices.due(clock.now() + 5_000, 5_000)).toEqual([a]);
    slices.gone(["a", "unknown"]);
    expect(slices.current).toBeUndefined();
    expect(a.retired).toBe(true);
    expect(slices.take(10, clock.waitUntil)).toBeNull();
  });
});
