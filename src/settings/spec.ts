// The kinds of setting and how each is parsed: src/settings.ts puts the table together from src/settings/*.ts.

export type Spec<T> = {
  kind: "secret" | "var" | "var (wrangler.toml)" | "var, local only";
  /** What a valid value looks like, for the log line of an invalid one; absent = a whole number ≥ 1. */
  expected?: string;
  /** How the default reads in the docs; absent = no default (unset). */
  shown?: string;
  doc: string;
  /** The value, or `invalid` (then the default applies). */
  parse: (raw: string | undefined) => T | typeof invalid;
  fallback: T;
};

export const invalid = Symbol("invalid");

/** Who may create an account on the console (`SIGN_UP`). */
export type SignUpPolicy = "open" | "invite-only" | "closed";

/** A whole number ≥ 1 (a size, a time, a count). */
export function count(fallback: number, doc: string, shown = String(fallback)): Spec<number> {
  return {
    kind: "var",
    shown,
    doc,
    fallback,
    parse(raw) {
      if (raw === undefined || raw.trim() === "") return fallback;
      const n = Number(raw);
      return Number.isSafeInteger(n) && n > 0 ? n : invalid;
    },
  };
}

/** The same spec, refusing values outside [min, max]. */
export function between(min: number, max: number, spec: Spec<number>): Spec<number> {
  return {
    ...spec,
    expected: `a whole number from ${min} to ${max}`,
    parse: (raw) => {
      const n = spec.parse(raw);
      return n === invalid || n < min || n > max ? invalid : n;
    },
  };
}

/** A non-negative decimal with at most 3 decimals (a percentage, an amount of USD). */
export function decimal(fallback: number, doc: string): Spec<number> {
  return {
    kind: "var",
    shown: String(fallback),
    expected: "a decimal number ≥ 0 with at most 3 decimals",
    doc,
    fallback,
    parse(raw) {
      if (raw === undefined || raw.trim() === "") return fallback;
      return /^\d{1,6}(\.\d{1,3})?$/.test(raw.trim()) ? Number(raw.trim()) : invalid;
    },
  };
}

export function text(kind: Spec<string>["kind"], doc: string): Spec<string | undefined> {
  return { kind, doc, fallback: undefined, parse: (raw) => (raw === undefined || raw === "" ? undefined : raw) };
}

/** A setting wrangler.toml's [vars] set. */
export const inWranglerToml = <T>(s: Spec<T>): Spec<T> => ({ ...s, kind: "var (wrangler.toml)" });
