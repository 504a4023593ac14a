/** A key's settled usage, in nano-USD: ever, and in the current UTC day, week (from Monday) and month. */
export type KeyUsage = { usageNano: number; dailyNano: number; weeklyNano: number; monthlyNano: number };
