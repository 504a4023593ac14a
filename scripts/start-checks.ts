// What `npm start` checks before it starts anything: the Node version, and options npm took for its own.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** `npm start`'s own options (after `--`). */
export const START_OPTIONS = ["--real"] as const;

/**
 * Whether `version` (e.g. "20.11.1") satisfies `range`, package.json's `engines.node`: one or more
 * `>=major[.minor[.patch]]` or `^major[.minor[.patch]]` bounds joined by `||` (the forms it is written in).
 * Undefined for another form.
 */
export function satisfiesEngines(version: string, range: string): boolean | undefined {
  const have = version.replace(/^v/, "").split(".").map(Number);
  const bounds = range.split("||").map((part) => /^\s*(>=|\^)\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(part));
  if (bounds.some((b) => b === null)) return undefined;
  const atLeast = (want: number[]) => {
    for (let i = 0; i < 3; i++) if ((have[i] ?? 0) !== (want[i] ?? 0)) return (have[i] ?? 0) > (want[i] ?? 0);
    return true;
  };
  return bounds.some((b) => {
    const want = b![2]!.split(".").map(Number);
    // `^20.19.0`: at least 20.19.0 within major 20.
    return atLeast(want) && (b![1] === ">=" || have[0] === want[0]);
  });
}

/** The problem with this Node for package.json's `engines.node`, if any. */
export function nodeVersionProblem(version: string, range: string | undefined): string | null {
  if (range === undefined) return null;
  const ok = satisfiesEngines(version, range);
  if (ok === undefined) return `package.json engines.node is "${range}": npm start reads only ">=version" and "^version" bounds.`;
  return ok
    ? null
    : `Node ${version.replace(/^v/, "")} is not supported: Switchyard needs Node ${range} (package.json engines). Install a supported Node and run npm start again.`;
}

/**
 * The config keys npm itself knows (its definitions, from the npm that runs the script), or null when
 * this npm's are not where npm 9–11 keep them.
 */
function npmConfigKeys(execPath: string | undefined): Set<string> | null {
  if (!execPath) return null;
  try {
    const require = createRequire(import.meta.url);
    const { definitions } = require(join(dirname(execPath), "../node_modules/@npmcli/config/lib/definitions/index.js")) as { definitions: object };
    // npm sets these for scripts beside its definitions.
    return new Set([...Object.keys(definitions), "local-prefix", "global-prefix", "npm-version", "nodedir"].map((k) => k.replace(/-/g, "_")));
  } catch {
    return null;
  }
}

/**
 * Options npm took as its own config and would drop: `npm start --real` (without `--`) reaches the script
 * only as `npm_config_real`, so it would start simulated without a word. Any `npm_config_*` npm does not
 * know is such an option (when npm's definitions cannot be read: only the names of start's own options).
 */
export function npmConfigProblem(env: NodeJS.ProcessEnv): string | null {
  const known = npmConfigKeys(env.npm_execpath);
  const taken = Object.keys(env)
    .filter((k) => k.startsWith("npm_config_"))
    .map((k) => k.slice("npm_config_".length))
    .filter((k) => (known ? !known.has(k) : START_OPTIONS.includes(`--${k}` as (typeof START_OPTIONS)[number])));
  if (taken.length === 0) return null;
  const flags = taken.map((k) => `--${k.replace(/_/g, "-")}`).join(" ");
  return `npm took ${flags} as npm's own config, and npm start would ignore it. npm start's options go after --: npm start -- ${flags}   (--real: real carriers, keys from .dev.vars)`;
}
