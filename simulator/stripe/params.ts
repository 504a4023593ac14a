// Typed reads of one request's parsed form, Stripe's validation messages included. Every key
// must be read: what is left over is refused as `parameter_unknown`, as Stripe does.
import { invalid, missingParam, unknownParam } from "./errors";
import type { Form, FormValue } from "./form";

const METADATA_KEYS = 50;
const METADATA_KEY_CHARS = 40;
const METADATA_VALUE_CHARS = 500;

export class Params {
  private readonly read = new Set<string>();
  private readonly children: Params[] = [];

  constructor(
    private readonly form: Form,
    private readonly prefix = "",
  ) {}

  /** The full parameter name of a key, as Stripe reports it: `line_items[0][quantity]`. */
  name(key: string): string {
    return this.prefix === "" ? key : `${this.prefix}[${key}]`;
  }

  has(key: string): boolean {
    return this.form[key] !== undefined;
  }

  /** Marks keys as accepted without modelling them (they change nothing here). */
  ignore(...keys: string[]): void {
    for (const k of keys) this.read.add(k);
  }

  private take(key: string): FormValue | undefined {
    this.read.add(key);
    return this.form[key];
  }

  /** A string; "" counts as absent (Stripe's way of unsetting). */
  str(key: string, opts: { required?: boolean; max?: number } = {}): string | undefined {
    const v = this.take(key);
    if (v === undefined || v === "") {
      if (opts.required) throw missingParam(this.name(key));
      return undefined;
    }
    if (typeof v !== "string") throw invalid(this.name(key), "Invalid string: expected a single value", "parameter_invalid_string");
    if (opts.max !== undefined && v.length > opts.max)
      throw invalid(this.name(key), `Invalid string: ${v.slice(0, 20)}...; must be at most ${opts.max} characters`);
    return v;
  }

  oneOf<T extends string>(key: string, values: readonly T[], opts: { required?: boolean } = {}): T | undefined {
    const v = this.str(key, opts);
    if (v === undefined) return undefined;
    if (!(values as readonly string[]).includes(v)) {
      const list = values.length > 1 ? `${values.slice(0, -1).join(", ")}, or ${values.at(-1)}` : values[0];
      throw invalid(this.name(key), `Invalid ${this.name(key)}: must be one of ${list}`);
    }
    return v as T;
  }

  int(key: string, opts: { required?: boolean; min?: number; max?: number } = {}): number | undefined {
    const v = this.str(key, opts);
    if (v === undefined) return undefined;
    if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw invalid(this.name(key), `Invalid integer: ${v}`, "parameter_invalid_integer");
    const n = Number(v);
    if (opts.min !== undefined && n < opts.min)
      throw invalid(this.name(key), `This value must be greater than or equal to ${opts.min}.`, "parameter_invalid_integer");
    if (opts.max !== undefined && n > opts.max)
      throw invalid(this.name(key), `This value must be less than or equal to ${opts.max}.`, "parameter_invalid_integer");
    return n;
  }

  /** A nested hash, read by its own Params (its leftovers count as this request's). */
  hash(key: string, opts: { required?: boolean } = {}): Params | undefined {
    const v = this.take(key);
    if (v === undefined || v === "") {
      if (opts.required) throw missingParam(this.name(key));
      return undefined;
    }
    if (typeof v === "string" || Array.isArray(v)) throw invalid(this.name(key), "Invalid object", "parameter_invalid_object");
    const child = new Params(v, this.name(key));
    this.children.push(child);
    return child;
  }

  /** An array of hashes (`line_items[0][…]`), in index order. */
  hashes(key: string, opts: { required?: boolean } = {}): Params[] | undefined {
    const items = this.array(key, opts);
    return items?.map((item, i) => {
      const name = `${this.name(key)}[${i}]`;
      if (typeof item === "string" || Array.isArray(item)) throw invalid(name, "Invalid object", "parameter_invalid_object");
      const child = new Params(item, name);
      this.children.push(child);
      return child;
    });
  }

  /** An array of strings (`expand[0]=a` or `expand[]=a`). */
  strings(key: string): string[] {
    return (this.array(key) ?? []).map((item) => {
      if (typeof item !== "string") throw invalid(this.name(key), "Invalid array", "parameter_invalid_array");
      return item;
    });
  }

  private array(key: string, opts: { required?: boolean } = {}): FormValue[] | undefined {
    const v = this.take(key);
    if (v === undefined || v === "") {
      if (opts.required) throw missingParam(this.name(key));
      return undefined;
    }
    if (Array.isArray(v)) return v;
    if (typeof v === "string") throw invalid(this.name(key), "Invalid array", "parameter_invalid_array");
    const keys = Object.keys(v);
    if (!keys.every((k) => /^\d+$/.test(k))) throw invalid(this.name(key), "Invalid array", "parameter_invalid_array");
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => v[k]!);
  }

  /** `metadata[k]=v`: Stripe's limits (50 keys, 40-character keys, 500-character values); "" drops a key. */
  metadata(key: string): Record<string, string> | undefined {
    const v = this.take(key);
    if (v === undefined || v === "") return undefined;
    if (typeof v === "string" || Array.isArray(v)) throw invalid(this.name(key), "Invalid object", "parameter_invalid_object");
    const out: Record<string, string> = {};
    for (const [k, value] of Object.entries(v)) {
      const name = `${this.name(key)}[${k}]`;
      if (typeof value !== "string") throw invalid(name, "Invalid string: metadata values must be strings", "parameter_invalid_string");
      if (k.length > METADATA_KEY_CHARS) throw invalid(name, `Metadata keys can have up to ${METADATA_KEY_CHARS} characters. The key "${k}" is too long.`);
      if (value.length > METADATA_VALUE_CHARS)
        throw invalid(name, `Metadata values can have up to ${METADATA_VALUE_CHARS} characters, but you passed in a value that is ${value.length} characters.`);
      if (value !== "") out[k] = value;
    }
    if (Object.keys(out).length > METADATA_KEYS)
      throw invalid(
        this.name(key),
        `You can specify up to ${METADATA_KEYS} keys, with key names up to ${METADATA_KEY_CHARS} characters long and values up to ${METADATA_VALUE_CHARS} characters long.`,
      );
    return out;
  }

  /** Refuses the first key nobody read, here or in a nested hash. */
  done(): void {
    for (const key of Object.keys(this.form)) if (!this.read.has(key)) throw unknownParam(this.name(key));
    for (const child of this.children) child.done();
  }
}
