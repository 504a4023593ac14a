import { describe, it, expect } from "vitest";
import { demoteUnhealthy, healthThresholds, isDown } from "../../src/routing/health-order.ts";
import { settings } from "../../src/settings.ts";
import type { EndpointHealth } from "../../src/routing/order-endpoints.ts";
import { IsolateHealth } from "../../src/health/isolate-health.ts";
import type { CarrierAttempt } from "../../src/db/carrier-attempt.ts";

// Pure: outage ordering and the isolate's failure streaks, without a runtime.

const T = healthThresholds(settings({})); // defaults: 3 failures in a row, or < 80 % over ≥ 10 attempts in 5 min

describe("healthThresholds", () => {
  it("reads the vars, falling back to the defaults on unset or invalid values", () => {
    expect(T).toEqual({ consecutiveFailures: 3, outageUptimePercent: 80, minAttempts: 10 });
    expect(healthThresholds(settings({ HEALTH_CONSECUTIVE_FAILURES: "5", HEALTH_OUTAGE_UPTIME_PERCENT: "50", HEALTH_MIN_ATTEMPTS: "x" }))).toEqual({
      consecutiveFailures: 5,
      outageUptimePercent: 50,
      minAttempts: 10,
    });
  });
});

describe("isDown", () => {
  const cases: Array<[string, EndpointHealth | undefined, boolean]> = [
    ["nothing known", undefined, false],
    ["no figures", {}, false],
    ["2 failures in a row", { consecutiveFailures: 2 }, false],
    ["3 failures in a row", { consecutiveFailures: 3 }, true],
    ["3 failures in a row despite full uptime", { consecutiveFailures: 3, uptime5m: 100, counted5m: 50 }, true],
    ["79 % over 10 attempts", { uptime5m: 79, counted5m: 10 }, true],
    ["80 % over 10 attempts (not below)", { uptime5m: 80, counted5m: 10 }, false],
    ["0 % over 9 attempts (too few)", { uptime5m: 0, counted5m: 9 }, false],
    ["uptime unknown", { uptime5m: null, counted5m: 0 }, false],
    ["slow but up", { uptime5m: 100, counted5m: 100, latency: { p50: 30 } }, false],
  ];
  it.each(cases)("%s", (_, h, down) => expect(isDown(h, T)).toBe(down));
});

describe("demoteUnhealthy", () => {
  const H: Record<string, EndpointHealth> = {
    ok: {},
    streak: { consecutiveFailures: 4 },
    outage: { uptime5m: 10, counted5m: 20 },
    thin: { uptime5m: 0, counted5m: 1 },
  };
  const cases: Array<[string, string[], string[]]> = [
    ["all healthy: order kept", ["a:ok", "b:ok", "c:thin"], ["a:ok", "b:ok", "c:thin"]],
    ["a failing first endpoint goes last", ["a:streak", "b:ok", "c:ok"], ["b:ok", "c:ok", "a:streak"]],
    ["demoted keep their order, behind the healthy", ["a:outage", "b:streak", "c:ok", "d:thin"], ["c:ok", "d:thin", "a:outage", "b:streak"]],
    ["all down: all kept, order kept", ["a:streak", "b:outage"], ["a:streak", "b:outage"]],
    ["empty", [], []],
  ];
  it.each(cases)("%s", (_, input, expected) => {
    expect(demoteUnhealthy(input, (e) => H[e.split(":")[1]!], T)).toEqual(expected);
  });
});

describe("IsolateHealth", () => {
  const MEMORY = 30_000;
  const a = (status: number, at: number, provider = "groq", model = "m/a"): CarrierAttempt => ({
    model,
    provider,
    providerName: provider,
    status,
    at,
    latencyMs: 100,
    tokensPerSecond: null,
  });

  it("counts 5xx, timeouts and unreachable in a row; 429 neither counts nor resets; an answer resets", () => {
    const h = new IsolateHealth();
    const streak = (now: number) => h.consecutiveFailures("m/a", "groq", now, MEMORY);
    h.note(a(500, 0));
    h.note(a(504, 1000));
    h.note(a(429, 2000));
    h.note(a(502, 3000));
    expect(streak(3100)).toBe(3);
    h.note(a(400, 4000)); // the carrier answered (the caller's fault): the streak ends
    expect(streak(4100)).toBe(0);
    h.note(a(503, 5000));
    h.note(a(200, 6000));
    expect(streak(6100)).toBe(0);
    expect(h.size).toBe(0); // only streaks are kept
  });

  it("counts the carrier's own 4xx (401, 402, 403, 404) as failures; a rejection of the request (422) ends the streak", () => {
    const h = new IsolateHealth();
    const streak = (now: number) => h.consecutiveFailures("m/a", "groq", now, MEMORY);
    for (const [i, status] of [401, 402, 403, 404].entries()) h.note(a(status, i * 1000));
    expect(streak(4000)).toBe(4);
    h.note(a(422, 5000));
    expect(streak(5100)).toBe(0);
  });

  it("keeps endpoints apart by model and carrier", () => {
    const h = new IsolateHealth();
    h.note(a(500, 0, "groq", "m/a"));
    h.note(a(500, 0, "groq", "m/a"));
    h.note(a(500, 0, "cerebras", "m/a"));
    h.note(a(500, 0, "groq", "m/b"));
    expect([
      h.consecutiveFailures("m/a", "groq", 200, MEMORY),
      h.consecutiveFailures("m/a", "cerebras", 200, MEMORY),
      h.consecutiveFailures("m/b", "groq", 200, MEMORY),
      h.consecutiveFailures("m/b", "cerebras", 200, MEMORY),
    ]).toEqual([2, 1, 1, 0]);
  });

  it("forgets a streak the memory after its last failure (end of the attempt), and the next failure resumes it", () => {
    const h = new IsolateHealth();
    for (const at of [0, 100, 200]) h.note(a(500, at)); // last failure ends at 300
    expect(h.consecutiveFailures("m/a", "groq", 300 + MEMORY - 1, MEMORY)).toBe(3);
    expect(h.consecutiveFailures("m/a", "groq", 300 + MEMORY, MEMORY)).toBe(0); // probed again
    h.note(a(500, 300 + MEMORY)); // the probe fails: straight back on the streak
    expect(h.consecutiveFailures("m/a", "groq", 500 + MEMORY, MEMORY)).toBe(4);
  });

  it("is bounded: past the cap the endpoint failing longest ago is dropped", () => {
    const h = new IsolateHealth(3);
    for (const p of ["p1", "p2", "p3"]) h.note(a(500, 0, p));
    h.note(a(500, 10, "p1")); // p1 failed again: now the newest
    h.note(a(500, 20, "p4"));
    expect(h.size).toBe(3);
    expect(["p1", "p2", "p3", "p4"].map((p) => h.consecutiveFailures("m/a", p, 100, MEMORY))).toEqual([2, 0, 1, 1]);
  });
});
