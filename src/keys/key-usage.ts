/**
 * A key's settled usage, in nano-USD: ever, and in the current UTC day, week (from Monday) and month — what it
 * was debited (`usage…`), and what carriers charged the account's own keys for its BYOK requests (`byok…`).
 */
export type KeyUsage = {
  usageNano: number;
  dailyNano: number;
  weeklyNano: number;
  monthlyNano: number;
  byokNano: number;
  byokDailyNano: number;
  byokWeeklyNano: number;
  byokMonthlyNano: number;
};

/** No usage at all. */
export const NO_USAGE: KeyUsage = {
  usageNano: 0,
  dailyNano: 0,
  weeklyNano: 0,
  monthlyNano: 0,
  byokNano: 0,
  byokDailyNano: 0,
  byokWeeklyNano: 0,
  byokMonthlyNano: 0,
};
