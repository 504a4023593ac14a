// One set of `npm run bench` runs as the small summary kept in git (bench/sets/): the targets and diagnostics
// over the set's runs, and every figure of the scenarios as its median and range over the runs. The raw runs
// (every round and sample) stay in the git-ignored bench/out/results.json.
import { spread } from "./peer-gateways.ts";
import { summarizeDiagnostics, type DiagnosticSummary, type Machine, type Results, type TargetSummary } from "./report.ts";

export type SetSummary = {
  format: "switchyard-bench-set/1";
  /** Its place among the summaries in bench/sets/, oldest first (1-based): "set 16" in bench/RESULTS.md. */
  set: number;
  started_at: string;
  mode: Results["mode"];
  repeat: number;
  runs: number;
  args: string[];
  source: string;
  machine?: Machine;
  targets: TargetSummary[];
  diagnostics: DiagnosticSummary[];
  /** Every number of the runs' scenarios, as a Figure over the runs that have it. */
  figures: FigureTree;
};

/** What a raw run holds that is not a figure of the set: samples and rounds (their medians are kept), logs, first-run-only diagnostics. */
const SKIPPED = new Set(["samples", "orders", "error_samples", "error_kinds", "runtime_logs", "diagnostics", "targets", "run", "machine", "settings"]);
/** Fields that name a row of a scenario's table, in the order they make its path. */
const ROW_KEYS = ["protocol", "variant", "model", "chunks", "concurrency", "round"] as const;

function rowName(row: unknown, index: number): string {
  if (!row || typeof row !== "object") return String(index);
  const r = row as Record<string, unknown>;
  const parts: string[] = [];
  const workload = r.workload as { id?: unknown } | undefined;
  if (typeof workload?.id === "string") parts.push(workload.id);
  for (const k of ROW_KEYS) if (typeof r[k] === "string" || typeof r[k] === "number") parts.push(`${k}=${String(r[k])}`);
  return parts.length > 0 ? parts.join(",") : String(index);
}

/** A figure over the runs: one number when every run had the same (a setting of the scenario), else [median, min, max]. */
export type Figure = number | [number | null, number | null, number | null];
/** The runs' scenarios as one tree of the same shape, each number a Figure; rows of a table keyed by what names them. */
export type FigureTree = { [key: string]: Figure | FigureTree };

function collect(value: unknown, path: string[], out: Map<string, { path: string[]; values: number[] }>): void {
  if (typeof value === "number") {
    const key = JSON.stringify(path);
    const entry = out.get(key) ?? { path, values: [] };
    entry.values.push(value);
    out.set(key, entry);
    return;
  }
  if (!value || typeof value !== "object") return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => collect(v, [...path, rowName(v, i)], out));
    return;
  }
  for (const [k, v] of Object.entries(value)) if (!SKIPPED.has(k)) collect(v, [...path, k], out);
}

/** Six significant digits: far past what a run repeats to, and the float noise of a median of two (1.5499999999999998) gone. */
const rounded = (v: number): number => (Number.isInteger(v) ? v : Number(v.toPrecision(6)));

function figureOf(values: number[]): Figure {
  if (values.every((v) => v === values[0])) return rounded(values[0]!);
  const s = spread(values);
  const fin = (v: number) => (Number.isFinite(v) ? rounded(v) : null);
  return [fin(s.median), fin(s.min), fin(s.max)];
}

/** The median and range of every figure over a set's runs. */
export function setFigures(runs: Results[]): FigureTree {
  const values = new Map<string, { path: string[]; values: number[] }>();
  for (const run of runs) collect(run, [], values);
  const tree: FigureTree = {};
  for (const { path, values: list } of values.values()) {
    let node = tree;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as FigureTree;
    node[path[path.length - 1]!] = figureOf(list);
  }
  return tree;
}

export type RawSet = { started_at: string; mode: Results["mode"]; repeat: number; args: string[]; source: string; summary: TargetSummary[]; runs: Results[] };

export function summarizeSet(set: RawSet, index: number): SetSummary {
  return {
    format: "switchyard-bench-set/1",
    set: index,
    started_at: set.started_at,
    mode: set.mode,
    repeat: set.repeat,
    runs: set.runs.length,
    args: set.args,
    source: set.source,
    machine: set.runs[0]?.machine,
    targets: set.summary,
    diagnostics: summarizeDiagnostics(set.runs),
    figures: setFigures(set.runs),
  };
}

/** The summary's file name under bench/sets/: its start time, sortable, e.g. 2026-11-26T17-30-52Z.json. */
export function setFileName(s: Pick<SetSummary, "started_at">): string {
  return `${s.started_at.replace(/\.\d+Z$/, "Z").replace(/:/g, "-")}.json`;
}

const isLeaf = (v: unknown): boolean => v === null || typeof v !== "object" || (Array.isArray(v) && v.every((x) => x === null || typeof x !== "object"));

/** Compact JSON with spaces: `{"p50": 1, "p99": [2, 1, 3]}`. */
function oneLine(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? "null" : oneLine(x))).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}: ${oneLine(x)}`).join(", ")}}`;
  }
  return JSON.stringify(v);
}

function indented(value: unknown, pad: string): string {
  if (isLeaf(value)) return oneLine(value);
  if (!Array.isArray(value) && Object.values(value as object).every(isLeaf)) {
    const line = oneLine(value);
    if (pad.length + line.length <= 240) return line;
  }
  const inner = `${pad}  `;
  const items = Array.isArray(value)
    ? value.map((v) => `${inner}${indented(v, inner)}`)
    : Object.entries(value as object)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${inner}${JSON.stringify(k)}: ${indented(v, inner)}`);
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  return items.length === 0 ? `${open}${close}` : `${open}\n${items.join(",\n")}\n${pad}${close}`;
}

/** The summary's JSON: a row of figures (or a target) on one line where it fits, small and readable in a diff. */
export function setJson(s: SetSummary): string {
  return `${indented(s, "")}\n`;
}
