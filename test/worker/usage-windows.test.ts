import { describe, it, expect } from "vitest";
import { windowEnd, windowStart, windowStarts } from "../../src/keys/usage-windows";

const at = (iso: string) => Date.parse(iso);

describe("key budget windows (UTC; weeks from Monday)", () => {
  // 2026-11-22 is a Sunday, 2026-11-23 a Monday; 2028 is a leap year.
  it.each([
    ["2026-11-22T23:59:59.999Z", { day: "2026-11-22", week: "2026-11-16", month: "2026-11-01" }],
    ["2026-11-23T00:00:00.000Z", { day: "2026-11-23", week: "2026-11-23", month: "2026-11-01" }],
    ["2026-11-30T12:00:00.000Z", { day: "2026-11-30", week: "2026-11-30", month: "2026-11-01" }],
    ["2026-12-01T00:00:00.000Z", { day: "2026-12-01", week: "2026-11-30", month: "2026-12-01" }],
    ["2027-01-01T00:00:00.000Z", { day: "2027-01-01", week: "2026-12-28", month: "2027-01-01" }],
    ["2028-02-29T08:00:00.000Z", { day: "2028-02-29", week: "2028-02-28", month: "2028-02-01" }],
  ])("%s starts its day, week and month at %o", (iso, starts) => {
    expect(windowStarts(at(iso))).toEqual(starts);
    expect(windowStart("daily", at(iso))).toBe(starts.day);
    expect(windowStart("weekly", at(iso))).toBe(starts.week);
    expect(windowStart("monthly", at(iso))).toBe(starts.month);
    expect(windowStart(null, at(iso))).toBeNull();
  });

  it.each([
    ["daily", "2026-11-22T23:59:59.999Z", "2026-11-23T00:00:00.000Z"],
    ["daily", "2026-11-23T00:00:00.000Z", "2026-11-24T00:00:00.000Z"],
    ["weekly", "2026-11-22T23:59:59.999Z", "2026-11-23T00:00:00.000Z"],
    ["weekly", "2026-11-23T00:00:00.000Z", "2026-11-30T00:00:00.000Z"],
    ["monthly", "2026-12-31T23:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    ["monthly", "2028-02-29T08:00:00.000Z", "2028-03-01T00:00:00.000Z"],
  ] as const)("a %s window containing %s ends at %s", (reset, iso, end) => {
    expect(new Date(windowEnd(reset, at(iso))!).toISOString()).toBe(end);
  });

  it("a limit without a reset never ends", () => {
    expect(windowEnd(null, at("2026-11-22T12:00:00Z"))).toBeNull();
  });
});
