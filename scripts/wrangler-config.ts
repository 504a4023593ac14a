// The few wrangler.toml settings needed to run the bundle in Miniflare the way wrangler would:
// compatibility date and flags, the D1, KV, R2, Durable Object and queue bindings, and the [vars]. A small reader for the TOML
// subset wrangler.toml uses (tables, arrays of tables, strings, booleans, numbers, one-line or multi-line arrays).
import { readFileSync } from "node:fs";

export type WranglerConfig = {
  compatibilityDate: string;
  compatibilityFlags: string[];
  d1Databases: string[];
  kvNamespaces: string[];
  r2Buckets: string[];
  /** binding name → class name, and whether its migrations made it SQLite-backed (`new_sqlite_classes`) */
  durableObjects: Record<string, { className: string; useSQLite: boolean }>;
  /** queue producer binding → queue name */
  queueProducers: Record<string, string>;
  /** queues this Worker consumes */
  queueConsumers: string[];
  /** `[vars]`, as the Worker sees them (strings); `npm run bench -- --var NAME=VALUE` adds to or overrides them */
  vars: Record<string, string>;
};

type Value = string | number | boolean | Value[];
type Table = Record<string, Value>;

/** Drops a `#` comment that is not inside a string. */
function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "#") return line.slice(0, i);
  }
  return line;
}

function parseValue(raw: string): Value {
  const text = raw.trim();
  if (text.startsWith("'") && text.endsWith("'")) return text.slice(1, -1);
  if (text === "true" || text === "false") return text === "true";
  const json: unknown = JSON.parse(text.replace(/,\s*]$/, "]"));
  if (typeof json === "string" || typeof json === "number" || typeof json === "boolean") return json;
  if (Array.isArray(json) && json.every((v) => typeof v === "string" || typeof v === "number" || typeof v === "boolean")) return json as Value[];
  throw new Error(`unsupported TOML value: ${text}`);
}

/** Top-level keys under "", `[name]` tables under "name", `[[name]]` entries appended to arrays under "name". */
function parseToml(source: string): { tables: Map<string, Table>; arrays: Map<string, Table[]> } {
  const tables = new Map<string, Table>([["", {}]]);
  const arrays = new Map<string, Table[]>();
  let current: Table = tables.get("")!;
  const lines = source.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = stripComment(lines[i]!).trim();
    if (!line) continue;
    const arrayHeader = /^\[\[\s*([^\]]+?)\s*\]\]$/.exec(line);
    const tableHeader = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (arrayHeader) {
      const list = arrays.get(arrayHeader[1]!) ?? [];
      arrays.set(arrayHeader[1]!, list);
      current = {};
      list.push(current);
      continue;
    }
    if (tableHeader) {
      current = tables.get(tableHeader[1]!) ?? {};
      tables.set(tableHeader[1]!, current);
      continue;
    }
    const kv = /^([A-Za-z0-9_.-]+)\s*=\s*(.*)$/.exec(line);
    if (!kv) throw new Error(`wrangler.toml: cannot read line ${i + 1}: ${line}`);
    let value = kv[2]!;
    // A multi-line array: read on until its brackets balance.
    while (value.trim().startsWith("[") && count(value, "[") > count(value, "]") && i + 1 < lines.length) {
      line = stripComment(lines[++i]!).trim();
      value += " " + line;
    }
    current[kv[1]!] = parseValue(value);
  }
  return { tables, arrays };
}

const count = (s: string, ch: string) => s.split(ch).length - 1;
const str = (v: Value | undefined): string | undefined => (typeof v === "string" ? v : undefined);

export function readWranglerConfig(path: string): WranglerConfig {
  const { tables, arrays } = parseToml(readFileSync(path, "utf8"));
  const top = tables.get("")!;
  const compatibilityDate = str(top.compatibility_date);
  if (!compatibilityDate) throw new Error(`${path}: no compatibility_date`);
  const flags = top.compatibility_flags;
  const bindings = (name: string) => (arrays.get(name) ?? []).map((t) => str(t.binding)).filter((b): b is string => b !== undefined);
  const sqlite = new Set<string>();
  for (const m of arrays.get("migrations") ?? []) {
    const classes = m.new_sqlite_classes;
    if (Array.isArray(classes)) for (const c of classes) if (typeof c === "string") sqlite.add(c);
  }
  const durableObjects: WranglerConfig["durableObjects"] = {};
  for (const t of arrays.get("durable_objects.bindings") ?? []) {
    const name = str(t.name);
    const className = str(t.class_name);
    if (name && className) durableObjects[name] = { className, useSQLite: sqlite.has(className) };
  }
  return {
    compatibilityDate,
    compatibilityFlags: Array.isArray(flags) ? flags.filter((f): f is string => typeof f === "string") : [],
    d1Databases: bindings("d1_databases"),
    kvNamespaces: bindings("kv_namespaces"),
    r2Buckets: bindings("r2_buckets"),
    durableObjects,
    queueProducers: Object.fromEntries(
      (arrays.get("queues.producers") ?? []).flatMap((t) => (str(t.binding) && str(t.queue) ? [[str(t.binding)!, str(t.queue)!]] : [])),
    ),
    queueConsumers: (arrays.get("queues.consumers") ?? []).map((t) => str(t.queue)).filter((q): q is string => q !== undefined),
    vars: Object.fromEntries(Object.entries(tables.get("vars") ?? {}).map(([k, v]) => [k, String(v)])),
  };
}
