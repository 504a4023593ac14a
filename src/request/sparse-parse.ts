import type * as z from "zod";

/**
 * Distinct sets of present fields a parser keeps a schema for; past it, inputs with a new set are parsed
 * with the whole schema (the same result, only slower). Clients send a handful of sets; this only bounds
 * memory against one sending every combination.
 */
const MAX_FIELD_SETS = 256;

/**
 * `schema.safeParse` for an object schema with many optional fields, running only the fields an input
 * has and those it cannot go without: the same result (values, key order, issues), since an absent
 * optional field adds nothing to either. zod runs every field of the shape for every input, allocating
 * for each (a chat request has 45 fields, most absent): garbage every request pays for in collector
 * pauses. The schema for each set of present fields is made once (`pick`, in the shape's order).
 */
export function sparseParser<T extends z.ZodObject>(schema: T): (input: Record<string, unknown>) => z.ZodSafeParseResult<z.output<T>> {
  const keys = Object.keys(schema.shape);
  const bit = new Map(keys.map((k, i) => [k, 2 ** i]));
  if (keys.length > 52) throw new Error("sparseParser: a shape of more than 52 fields does not fit the set's number");
  // Fields that must be run even when absent: required ones (their absence is an issue) and defaulted ones.
  let always = 0;
  keys.forEach((k, i) => {
    const { optin, optout } = (schema.shape[k] as z.ZodType)._zod;
    if (!(optin === "optional" && optout === "optional")) always += 2 ** i;
  });
  const picked = new Map<number, z.ZodType>();
  return (input) => {
    let set = always;
    for (const k in input) {
      const b = bit.get(k);
      if (b !== undefined && Math.floor(set / b) % 2 === 0) set += b;
    }
    let s = picked.get(set);
    if (!s) {
      if (picked.size >= MAX_FIELD_SETS) return schema.safeParse(input) as z.ZodSafeParseResult<z.output<T>>;
      const mask: Record<string, true> = {};
      keys.forEach((k, i) => {
        if (Math.floor(set / 2 ** i) % 2 === 1) mask[k] = true;
      });
      picked.set(set, (s = schema.pick(mask as never) as unknown as z.ZodType));
    }
    return s.safeParse(input) as z.ZodSafeParseResult<z.output<T>>;
  };
}
