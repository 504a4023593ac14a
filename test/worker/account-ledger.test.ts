import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { AccountLedger, type AdmitInput, type Ticket } from "../../src/ledger/account-ledger";
import { ledgerTimings } from "../../src/ledger/ledger-config";
import type { AdmitRequest, IsolateLedgerApi, LeaseRequest, RenewRequest, SettleRequest, SliceReport } from "../../src/ledger/contract";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import type { NewGeneration } from "../../src/db/schema";
import { ledgerRecord } from "./synthetic-record";
import { FakeClock, never } from "./fake-clock";

// The isolate's side of an account's ledger, alone: a fake clock, a fake ledger and a fake queue.

const record = (id: string): NewGeneration => ledgerRecord(id);
const item = (genId: string, costNano = 10) => ({ genId, keyHash: "k", costNano, record: record(genId) });
const paid = (genId: string, holdNano = 100, limitNano: number | null = null): AdmitInput => ({
  genId,
  keyHash: "k",
  limitNano,
  holdNano,
  paid: true,
  abandoned: () => record(genId),
});

class FakeLedger implements IsolateLedgerApi {
  batches: Array<{ at: number; items: string[]; slices: SliceReport[] }> = [];
  attempts: number[] = [];
  leases: LeaseRequest[] = [];
  renews: Array<{ at: number } & RenewRequest> = [];
  admits: AdmitRequest[] = [];
  gone: string[] = [];
  /** The ledger cannot be reached while this says so. */
  down: (at: number) => boolean = () => false;
  /** A settle RPC sent while this says so never answers (and is not applied). */
  hang: (at: number) => boolean = () => false;
  constructor(private readonly clock: FakeClock) {}
  /** Admissions and leases fail while this says so. */
  callsDown: (at: number) => boolean = () => false;
  /** What a lease grants (default: all that is asked). */
  grant: (req: LeaseRequest) => number = (req) => req.wantNano;
  async admit(req: AdmitRequest) {
    this.admits.push(req);
    if (this.callsDown(this.clock.now())) throw new Error("Network connection lost.");
    if (req.settle) this.batches.push({ at: this.clock.now(), items: req.settle.items.map((i) => i.genId), slices: req.settle.slices });
    return { ok: true as const, holdNano: req.holdNano };
  }
  async lease(req: LeaseRequest) {
    this.leases.push(req);
    if (this.callsDown(this.clock.now())) throw new Error("Network connection lost.");
    if (req.settle) this.batches.push({ at: this.clock.now(), items: req.settle.items.map((i) => i.genId), slices: req.settle.slices });
    return { ok: true as const, grantNano: this.grant(req) };
  }
  async renew(req: RenewRequest) {
    this.renews.push({ at: this.clock.now(), ...req });
    return { gone: this.gone };
  }
  settleBatch(items: SettleRequest[], slices: SliceReport[]): Promise<number> {
    const at = this.clock.now();
    this.attempts.push(at);
    if (this.hang(at)) return never;
    if (this.down(at)) return Promise.reject(new Error("Durable Object reset because its code was updated."));
    this.batches.push({ at, items: items.map((i) => i.genId), slices });
    return Promise.resolve(items.length);
  }
}

function setup() {
  const clock = new FakeClock();
  const ledger = new FakeLedger(clock);
  const queued: Array<{ accountId: string; items: SettleRequest[]; slices: SliceReport[] }> = [];
  const logs: string[] = [];
  let queueDown = false;
  let leases = 0;
  const account = new AccountLedger({
    accountId: "acct",
    ledger: () => clock.ledger(ledger),
    queue: async (accountId, items, slices) => {
      if (queueDown) throw new Error("queue unavailable");
      queued.push({ accountId, items, slices });
    },
    clock,
    timings: ledgerTimings({}),
    newLeaseId: () => `lease-${++leases}`,
    log: (message, detail) => logs.push(`${message} ${detail}`),
  });
  return { clock, ledger, account, queued, logs, t0: clock.now(), queueDown: () => (queueDown = true) };
}

const ids = (l: FakeLedger) => l.batches.map((b) => b.items);

describe("settle batches", () => {
  it("a batch is sent one window after the settle that opened it, also after a quiet spell; settles meanwhile join it", async () => {
    const { clock, ledger, account, t0 } = setup();
    const opened = account.settle(null, item("g1"), clock.waitUntil);
    await clock.advance(5);
    await account.settle(null, item("g2"), clock.waitUntil); // joins and ends at once
    expect(ids(ledger)).toEqual([]); // nothing goes at once: the ledger's commit stays off the isolate's next request
    await clock.advance(15);
    await opened;
    await clock.advance(1_000); // quiet
    const next = account.settle(null, item("g3"), clock.waitUntil);
    await clock.advance(19);
    expect(ids(ledger)).toEqual([["g1", "g2"]]);
    await clock.advance(1);
    await next;
    expect(ledger.batches.map((b) => [b.at - t0, b.items])).toEqual([
      [20, ["g1", "g2"]],
      [1_040, ["g3"]],
    ]);
  });

  it("a batch whose opener died during its wait is sent by the next settle, and by an admission, never left open", async () => {
    const { clock, ledger, account } = setup();
    const first = account.settle(null, item("g1"), clock.waitUntil);
    await clock.advance(20);
    await first;
    void account.settle(null, item("g2"), clock.waitUntil); // opens a batch, its timer sends it in 20 ms
    void account.settle(null, item("g3"), clock.waitUntil); // joins it
    clock.kill(); // the opening request died: its timer never fires
    await clock.advance(1_000);
    expect(ids(ledger)).toEqual([["g1"]]);
    expect(account.unsentRecord("g3")?.id).toBe("g3"); // still found by /generation meanwhile
    await account.settle(null, item("g4"), clock.waitUntil); // the batch is overdue: this settle sends it
    expect(ids(ledger)).toEqual([["g1"], ["g2", "g3", "g4"]]);

    void account.settle(null, item("g5"), clock.waitUntil);
    void account.settle(null, item("g6"), clock.waitUntil);
    clock.kill();
    await clock.advance(1_000);
    await account.admit({ ...paid("a1"), paid: false, holdNano: 0 }, clock.waitUntil); // any admission of the account sends an overdue batch
    await clock.drain();
    expect(ids(ledger).at(-1)).toEqual(["g5", "g6"]);
    expect(account.unsentRecord("g6")).toBeUndefined();
  });

  it("a ledger that is back within the retry budget gets the batch: retried with backoff, never dropped after a few tries", async () => {
    const { clock, ledger, account, queued, t0 } = setup();
    ledger.down = (at) => at < t0 + 5_000; // a Durable Object restart of 5 s
    const p = account.settle(null, item("g1", 123), clock.waitUntil);
    await clock.advance(10_000);
    await p;
    expect(ids(ledger)).toEqual([["g1"]]);
    expect(ledger.attempts.length).toBeGreaterThan(5);
    expect(queued).toEqual([]);
  });

  it("after the whole retry budget the batch goes to the settle queue, with its slice reports; the ids and amounts are logged", async () => {
    const { clock, ledger, account, queued, logs, t0 } = setup();
    ledger.down = () => true;
    const admitted = await account.admit(paid("g1"), clock.waitUntil);
    if (!admitted.ok) throw new Error("not admitted");
    const p = account.settle(admitted.ticket, item("g1", 123), clock.waitUntil);
    await clock.advance(60_000);
    await p;
    const budget = ledgerTimings({}).settleRetryBudgetMs;
    expect(ledger.attempts.at(-1)! - t0).toBeLessThanOrEqual(budget);
    expect(ledger.attempts.at(-1)! - t0).toBeGreaterThan(budget - 5_000);
    expect(queued[0]).toEqual({ accountId: "acct", items: [{ ...item("g1", 123), leaseId: "lease-1" }], slices: [{ leaseId: "lease-1", admitted: 1 }] });
    expect(queued[1]).toEqual({ accountId: "acct", items: [], slices: [{ leaseId: "lease-1", admitted: 1, release: true }] }); // the idle slice's release
    expect(logs.join("\n")).toContain('"gen":"g1","cost_nano":123');
    expect(account.unsentRecord("g1")).toBeUndefined();
  });

  it("a settle RPC that never answers is given up after SETTLE_ATTEMPT_TIMEOUT_MS and retried; the batch is stored, and logged", async () => {
    const { clock, ledger, account, queued, logs, t0 } = setup();
    const timeout = ledgerTimings({}).settleAttemptTimeoutMs;
    ledger.hang = (at) => at < t0 + 2 * timeout; // the first attempts hang (say, a Durable Object stuck mid-restart)
    const p = account.settle(null, item("g1", 77), clock.waitUntil);
    await clock.advance(4 * timeout);
    await p;
    expect(ids(ledger)).toEqual([["g1"]]);
    expect(ledger.attempts.filter((at) => at < t0 + 2 * timeout).length).toBeGreaterThanOrEqual(2);
    expect(queued).toEqual([]);
    expect(account.unsentRecord("g1")).toBeUndefined();
    expect(logs.join("\n")).toMatch(new RegExp(`did not answer a settle batch within ${timeout} ms.*"gen":"g1","cost_nano":77`));
  });

  it("a settle RPC that always hangs goes to the settle queue within the retry budget", async () => {
    const { clock, ledger, account, queued, t0 } = setup();
    ledger.hang = () => true;
    const p = account.settle(null, item("g1", 77), clock.waitUntil);
    await clock.advance(60_000);
    await p;
    expect(queued.map((q) => q.items.map((i) => i.genId))).toEqual([["g1"]]);
    expect(ledger.attempts.at(-1)! - t0).toBeLessThanOrEqual(ledgerTimings({}).settleRetryBudgetMs);
    expect(account.unsentRecord("g1")).toBeUndefined();
  });

  it("settles still gathering ride on the next admission the ledger is asked for, applied first; nothing is sent twice", async () => {
    const { clock, ledger, account } = setup();
    clock.waitUntil(account.settle(null, item("g1"), clock.waitUntil));
    clock.waitUntil(account.settle(null, item("g2"), clock.waitUntil));
    await account.admit(paid("g3", 100, 5_000), clock.waitUntil); // a key with a limit: the ledger is asked
    expect(ledger.admits[0]!.settle!.items.map((i) => i.genId)).toEqual(["g1", "g2"]);
    await clock.advance(1_000); // the batch's window passes: its opener finds it gone
    expect(ledger.attempts).toEqual([]);
    expect(ids(ledger)).toEqual([["g1", "g2"]]);
    expect(account.unsentRecord("g1")).toBeUndefined();
  });

  it("a carried batch whose call fails is sent on its own, retries included", async () => {
    const { clock, ledger, account, t0 } = setup();
    ledger.callsDown = (at) => at === t0;
    clock.waitUntil(account.settle(null, item("g1"), clock.waitUntil));
    await expect(account.admit(paid("g2", 100, 5_000), clock.waitUntil)).rejects.toThrow();
    await clock.advance(100);
    expect(ledger.attempts.length).toBe(1);
    expect(ids(ledger)).toEqual([["g1"]]);
  });

  it("when the queue fails too, the generation ids and amounts are logged", async () => {
    const { clock, ledger, account, logs, queueDown } = setup();
    ledger.down = () => true;
    queueDown();
    const p = account.settle(null, item("g-lost", 4567), clock.waitUntil);
    await clock.advance(60_000);
    await p;
    expect(logs.join("\n")).toMatch(/NOT stored.*"gen":"g-lost","cost_nano":4567/);
  });
});

describe("slices and renewals", () => {
  it("a running request reports its admission after a second and renews its slice every quarter lease TTL until it settles", async () => {
    const { clock, ledger, account, t0 } = setup();
    const a = await account.admit(paid("g1"), clock.waitUntil);
    if (!a.ok) throw new Error("not admitted");
    expect(ledger.leases).toEqual([{ leaseId: "lease-1", holdNano: 100, wantNano: 6_400 }]);
    await clock.advance(1_000);
    expect(ledger.renews.map((r) => [r.at - t0, r.slices])).toEqual([[1_000, [{ leaseId: "lease-1", admitted: 1 }]]]);
    await clock.advance(180_000); // a three-minute stream: longer than the lease TTL
    const every = ledgerTimings({}).renewEveryMs;
    const gaps = ledger.renews.slice(1).map((r, i) => r.at - ledger.renews[i]!.at);
    expect(gaps.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(every + 1_000);
    clock.waitUntil(account.settle(a.ticket, item("g1", 90), clock.waitUntil));
    const renewsAtSettle = ledger.renews.length;
    await clock.advance(300_000);
    expect(ledger.renews.length).toBe(renewsAtSettle);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("a request the ledger admitted on its own hold (a key with a limit) renews that hold while it runs", async () => {
    const { clock, ledger, account } = setup();
    const a = await account.admit(paid("g1", 100, 5_000), clock.waitUntil);
    if (!a.ok) throw new Error("not admitted");
    expect(ledger.admits.map((r) => r.genId)).toEqual(["g1"]);
    expect(ledger.leases).toEqual([]);
    await clock.advance(61_000);
    expect(ledger.renews.map((r) => r.holds)).toEqual([["g1"], ["g1"]]);
    const settled = account.settle(a.ticket, item("g1"), clock.waitUntil);
    await clock.advance(20);
    await settled;
    expect(ids(ledger)).toEqual([["g1"]]);
  });

  it("a slice retired with requests in flight gives back what they do not hold at once; its last settle releases it with its admitted count; an idle slice is released after a second", async () => {
    const { clock, ledger, account } = setup();
    const a = await account.admit(paid("g1"), clock.waitUntil);
    const b = await account.admit(paid("g2"), clock.waitUntil);
    if (!a.ok || !b.ok) throw new Error("not admitted");
    await clock.advance(3_000); // past the slice's use time
    const c = await account.admit(paid("g3"), clock.waitUntil); // retires lease-1, leases lease-2
    if (!c.ok) throw new Error("not admitted");
    expect(ledger.leases.map((l) => l.leaseId)).toEqual(["lease-1", "lease-2"]);
    // lease-1 granted 64 holds of 100; its two requests hold 200: the rest rides on the lease that replaces it.
    expect(ledger.leases[1]!.settle?.slices).toEqual([{ leaseId: "lease-1", admitted: 2, returnedNano: 6200 }]);
    for (const [t, id] of [
      [a.ticket, "g1"],
      [b.ticket, "g2"],
      [c.ticket, "g3"],
    ] as const)
      clock.waitUntil(account.settle(t, item(id), clock.waitUntil));
    await clock.advance(1_100);
    const slices = ledger.batches.flatMap((x) => x.slices);
    expect(slices).toContainEqual({ leaseId: "lease-1", admitted: 2, release: true, returnedNano: 6200 });
    expect(slices).toContainEqual({ leaseId: "lease-2", admitted: 1, release: true });
    expect(account.idle).toBe(true);
  });

  it("a free model's request asks the ledger (its admission counts it against the free-model rate limits) and still runs when the ledger cannot be reached; a paid one on a key without a limit makes no ledger call", async () => {
    const { clock, ledger, account } = setup();
    const limits = { perMinute: 20, perDay: 50, perDayBought: 1000, boughtNano: 10e9 };
    const free: AdmitInput = { ...paid("f1", 0), paid: false, free: limits };
    const a = await account.admit(free, clock.waitUntil);
    expect(a.ok && a.ticket.slice).toBeNull();
    expect(ledger.admits).toMatchObject([{ genId: "f1", paid: false, free: limits }]);
    for (const id of ["p1", "p2", "p3"]) expect((await account.admit(paid(id), clock.waitUntil)).ok).toBe(true);
    expect(ledger.admits).toHaveLength(1); // the paid ones: from one slice, no admit call
    expect(ledger.leases).toHaveLength(1);
    const failing = setup();
    failing.ledger.admit = async () => {
      throw new Error("unreachable");
    };
    const b = await failing.account.admit({ ...free, genId: "f2" }, failing.clock.waitUntil);
    expect(b.ok).toBe(true);
    expect(failing.logs.join("\n")).toContain('"gen":"f2"');
    await expect(failing.account.admit(paid("p1", 100, 1_000), failing.clock.waitUntil)).rejects.toThrow("unreachable");
  });

  it("a plan mixing free and priced endpoints asks the ledger; served by a priced endpoint, its settle gives the free slot back", async () => {
    const { clock, ledger, account } = setup();
    const limits = { perMinute: 20, perDay: 50, perDayBought: 1000, boughtNano: 10e9 };
    const mixed = (genId: string): AdmitInput => ({ ...paid(genId), free: limits });
    const a = await account.admit(mixed("m1"), clock.waitUntil);
    const b = await account.admit(mixed("m2"), clock.waitUntil);
    if (!a.ok || !b.ok) throw new Error("not admitted");
    expect(ledger.leases).toEqual([]);
    expect(ledger.admits.map((r) => [r.genId, r.paid, r.free])).toEqual([
      ["m1", true, limits],
      ["m2", true, limits],
    ]);
    clock.waitUntil(account.settle(a.ticket, { ...item("m1"), servedPriced: true }, clock.waitUntil));
    clock.waitUntil(account.settle(b.ticket, { ...item("m2"), servedPriced: false }, clock.waitUntil));
    await account.admit(mixed("m3"), clock.waitUntil); // carries both settles
    expect(ledger.admits.at(-1)!.settle!.items.map((i) => [i.genId, i.releaseFreeSlot ?? false])).toEqual([
      ["m1", true],
      ["m2", false],
    ]);
    // The ledger unreachable: the free endpoints may still serve (no money at risk), uncounted.
    ledger.callsDown = () => true;
    expect(await account.admit(mixed("m4"), clock.waitUntil)).toMatchObject({ ok: true, route: "free_only" });
  });

  it("a key newly given a limit is held to it with what this isolate has of it that the ledger cannot see yet", async () => {
    const { clock, ledger, account } = setup();
    const running = await account.admit(paid("g1", 300), clock.waitUntil); // no limit yet: from a slice
    const done = await account.admit(paid("g2", 300), clock.waitUntil);
    if (!running.ok || !done.ok) throw new Error("not admitted");
    const sent = account.settle(done.ticket, item("g2", 250), clock.waitUntil);
    await clock.advance(20);
    await sent;
    clock.waitUntil(account.settle(null, { ...item("g3", 40) }, clock.waitUntil)); // waits for the window
    await account.admit(paid("g4", 100, 1_000), clock.waitUntil); // the key now has a limit: the ledger is asked
    // g3's settle rides on that call (applied first), so only g1's hold is unseen.
    expect(ledger.admits.at(-1)).toMatchObject({ genId: "g4", limitNano: 1_000, unseenNano: 300 });
    expect(ledger.admits.at(-1)!.settle!.items.map((i) => i.genId)).toEqual(["g3"]);
    await clock.advance(100);
    await account.admit(paid("g5", 100, 1_000), clock.waitUntil);
    expect(ledger.admits.at(-1)).toMatchObject({ genId: "g5", unseenNano: 300 });
  });

  it("a slice with too little left for the next hold is retired first: its release rides on the lease that replaces it", async () => {
    const { clock, ledger, account } = setup();
    ledger.grant = (req) => req.holdNano; // a nearly empty account: one hold's worth
    const a = await account.admit(paid("g1", 100), clock.waitUntil);
    if (!a.ok) throw new Error("not admitted");
    clock.waitUntil(account.settle(a.ticket, item("g1", 10), clock.waitUntil));
    const b = await account.admit(paid("g2", 100), clock.waitUntil); // 90 left in lease-1: not enough
    expect(b.ok).toBe(true);
    expect(ledger.leases.map((l) => l.leaseId)).toEqual(["lease-1", "lease-2"]);
    expect(ledger.leases[1]!.settle).toEqual({
      items: [{ ...item("g1", 10), leaseId: "lease-1" }],
      slices: [{ leaseId: "lease-1", admitted: 1, release: true }],
    });
  });

  it("a slice the ledger no longer has admits nothing more", async () => {
    const { clock, ledger, account } = setup();
    const a = await account.admit(paid("g1"), clock.waitUntil);
    if (!a.ok) throw new Error("not admitted");
    ledger.gone = ["lease-1"];
    await clock.advance(1_000);
    await account.admit(paid("g2"), clock.waitUntil);
    expect(ledger.leases.map((l) => l.leaseId)).toEqual(["lease-1", "lease-2"]);
  });
});

const inLedger = <R>(stub: DurableObjectStub, fn: (ledger: LedgerObject) => R | Promise<R>) =>
  runInDurableObject(stub, (instance) => fn(instance as LedgerObject));

describe("overdraft bound, against the real ledger object", () => {
  it("credit 1000, holds of 100 costing 100: five requests running past the lease TTL stay backed, so later leases cannot overdraw", async () => {
    const clock = new FakeClock(Date.now());
    const stub = env.LEDGER.get(env.LEDGER.idFromName("overdraft-" + Math.random()));
    await inLedger(stub, (instance) => {
      instance.clock = () => clock.now(); // the object and the isolate share the test's time
      instance.grant({ grantId: "credits", amountNano: 1000, source: "test" });
    });
    let leases = 0;
    const account = new AccountLedger({
      accountId: "overdraft",
      ledger: () => clock.ledger<IsolateLedgerApi>(stub),
      queue: async () => {
        throw new Error("no queue in this test");
      },
      clock,
      timings: ledgerTimings({}),
      newLeaseId: () => `lease-${++leases}`,
      log: () => {},
    });
    const tickets: Ticket[] = [];
    let refused = 0;
    const admit = async (id: string) => {
      const a = await account.admit(paid(id, 100), clock.waitUntil);
      if (a.ok) tickets.push(a.ticket);
      else refused++;
    };
    for (let i = 0; i < 5; i++) await admit(`long-${i}`);
    expect(tickets).toHaveLength(5);
    await clock.advance(130_000); // long reasoning streams: past the 2-minute lease TTL
    await inLedger(stub, (instance) => instance.alarm());
    for (let i = 0; i < 9; i++) await admit(`later-${i}`);
    for (const t of tickets) clock.waitUntil(account.settle(t, item(t.genId, 100), clock.waitUntil));
    await clock.advance(5_000);
    const totals = await inLedger(stub, (instance) => instance.totals());
    expect(totals.usageNano).toBe(tickets.length * 100);
    expect(totals.creditsNano - totals.usageNano).toBeGreaterThanOrEqual(0); // nothing admitted past the balance
    expect(refused).toBe(4); // 1000 covers exactly ten requests (a slice retired with requests running gives its rest back)
    expect(totals.heldNano).toBe(0);
  });
});
