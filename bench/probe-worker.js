// The counting probe of `npm run bench` (diagnostics only, never timed): an entry module in front of the
// unchanged Switchyard bundle (`./index.js`) that hands the router and its ledger Durable Object bindings
// wrapped in counters — Durable Object RPCs by method, D1 statements run and batches, KV calls, outgoing
// fetches, and (best effort) the ledger's SQL statements. GET /__bench/counts returns the counters;
// POST /__bench/counts resets them. Everything else goes to the router.
import router, * as routerModule from "./index.js";

export * from "./index.js";

/** @type {Map<string, number>} */
const counts = new Map();
/** @param {string} key */
const bump = (key) => counts.set(key, (counts.get(key) ?? 0) + 1);

/** Proxies whose wrapped object must be unwrapped before the runtime sees it (D1 batch). */
const unwrap = new WeakMap();

/**
 * A proxy that counts calls of the object's methods as `<label>.<method>`; `wrapResult` may wrap what a call returns.
 * @template {object} T
 * @param {string} label
 * @param {T} target
 * @param {(method: string, result: unknown) => unknown} [wrapResult]
 * @param {(method: string) => boolean} [counted]
 * @returns {T}
 */
function counting(label, target, wrapResult, counted = () => true) {
  const proxy = new Proxy(target, {
    get(t, prop) {
      const value = Reflect.get(t, prop, t);
      if (typeof value !== "function" || typeof prop !== "string" || prop === "then" || prop === "constructor") return value;
      return (/** @type {unknown[]} */ ...args) => {
        if (counted(prop)) bump(`${label}.${prop}`);
        // Reflect.apply: on an RPC stub, `value.apply` would be a remote method named "apply".
        const result = Reflect.apply(
          value,
          t,
          args.map((a) => (Array.isArray(a) ? a.map((x) => unwrap.get(x) ?? x) : (unwrap.get(a) ?? a))),
        );
        return wrapResult ? wrapResult(prop, result) : result;
      };
    },
  });
  unwrap.set(proxy, target);
  return proxy;
}

const RUN = new Set(["all", "run", "raw", "first"]);

/** @param {string} label @param {any} statement */
function countingStatement(label, statement) {
  return counting(
    label,
    statement,
    (method, result) => (method === "bind" ? countingStatement(label, result) : result),
    (m) => RUN.has(m),
  );
}

/** @param {string} side @param {Record<string, any>} env */
function countingEnv(side, env) {
  /** @type {Record<string, any>} */
  const out = { ...env };
  for (const [name, binding] of Object.entries(env)) {
    if (!binding || typeof binding !== "object") continue;
    if (typeof binding.prepare === "function" && typeof binding.batch === "function") {
      out[name] = counting(
        `${side}:D1`,
        binding,
        (method, result) => (method === "prepare" ? countingStatement(`${side}:D1 statement`, result) : result),
        (m) => m === "batch" || m === "exec",
      );
    } else if (typeof binding.idFromName === "function") {
      out[name] = counting(
        `${side}:${name}`,
        binding,
        (method, result) => (method === "get" || method === "getByName" ? counting(`${side}:${name} RPC`, /** @type {object} */ (result)) : result),
        () => false,
      );
    } else if (typeof binding.get === "function" && typeof binding.put === "function" && typeof binding.list === "function") {
      out[name] = counting(`${side}:KV`, binding);
    }
  }
  return out;
}

const realFetch = globalThis.fetch;
globalThis.fetch = (/** @type {Parameters<typeof fetch>} */ ...args) => {
  bump("outgoing fetch");
  return realFetch(...args);
};

const Ledger = /** @type {any} */ (routerModule).LedgerObject;

/** The router's ledger class with a counting env (its D1 flushes) and, when it keeps one in `sql`, counted SQL. */
export class LedgerObject extends Ledger {
  /** @param {any} ctx @param {any} env */
  constructor(ctx, env) {
    super(ctx, countingEnv("ledger", env));
    const self = /** @type {any} */ (this);
    if (self.sql && typeof self.sql.exec === "function") self.sql = counting("ledger:SQL", self.sql, undefined, (m) => m === "exec");
  }
}

export default {
  /** @param {Request} request @param {any} env @param {any} ctx */
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__bench/counts") {
      if (request.method === "POST") counts.clear();
      return Response.json(Object.fromEntries(counts));
    }
    bump(`request ${request.method} ${url.pathname.replace(/[^/]+$/, (last) => (/^(acct_|gen-)/.test(last) ? ":id" : last))}`);
    return router.fetch(request, countingEnv("worker", env), ctx);
  },
  /** The settle queue's consumer, as the router has it. @param {any} batch @param {any} env @param {any} ctx */
  queue(batch, env, ctx) {
    return router.queue(batch, countingEnv("worker", env), ctx);
  },
};
