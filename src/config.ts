/** A Worker var holding a whole number (a size, a time, a count): the fallback when unset or not a positive integer. */
export function positiveIntVar(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}
