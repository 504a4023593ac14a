import * as z from "zod";

/** `?offset=` of a list: a whole number ≥ 0. */
export const offsetParam = z
  .string()
  .regex(/^\d{1,9}$/, "must be a whole number ≥ 0")
  .transform(Number);

/** `?limit=` of a list that returns at most `max` items a page: a whole number from 1 to `max`. */
export const limitParam = (max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `must be a whole number from 1 to ${max}`)
    .transform(Number)
    .refine((n) => n >= 1, "must be at least 1")
    .refine((n) => n <= max, `must be at most ${max}`);
