import type { ApiKey } from "../db/schema";

/** A key budget's reset period: its limit applies to the usage of the current UTC day, week (from Monday) or month. */
export type LimitReset = NonNullable<ApiKey["limitReset"]>;

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a UTC instant: the unit key usage is stored in. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The first UTC day of each window containing `ms`: today, this week's Monday, the 1st of this month. */
export function windowStarts(ms: number): { day: string; week: string; month: string } {
  const day = utcDay(ms);
  const week = utcDay(ms - ((new Date(ms).getUTCDay() + 6) % 7) * DAY_MS);
  return { day, week, month: day.slice(0, 8) + "01" };
}

/** The first day of the window a limit applies to; null = all usage ever (no reset). */
export function windowStart(reset: LimitReset | null, ms: number): string | null {
  if (reset === null) return null;
  const starts = windowStarts(ms);
  return reset === "daily" ? starts.day : reset === "weekly" ? starts.week : starts.month;
}

/** When the window containing `ms` ends (ms epoch, 00:00 UTC of the next day, Monday or 1st); null = never. */
export function windowEnd(reset: LimitReset | null, ms: number): number | null {
  if (reset === null) return null;
  const d = new Date(ms);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (reset === "daily") return midnight + DAY_MS;
  if (reset === "weekly") return midnight + (7 - ((d.getUTCDay() + 6) % 7)) * DAY_MS;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
