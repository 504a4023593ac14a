import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startLocalService, DEV_ADMIN_TOKEN, type LocalService, type LocalServiceOptions } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";

/** The service started as `npm start` starts it, in a fresh state directory, with its admin client. */
export type ServiceFixture = {
  url: string;
  /** The carrier simulator's URL (its request log: `/__sim/requests?tag=`). */
  simulatorUrl: string;
  admin: AdminClient;
  /** Where wrangler dev keeps local D1, KV and Durable Objects. */
  persistTo: string;
  stop(): Promise<void>;
};

export async function startServiceFixture(name: string, opts: Pick<LocalServiceOptions, "carrierKeys" | "vars"> = {}): Promise<ServiceFixture> {
  const state = mkdtempSync(join(tmpdir(), `switchyard-${name}-`));
  const persistTo = join(state, "wrangler");
  let service: LocalService;
  try {
    service = await startLocalService({ port: 0, persistTo, quiet: true, ...opts });
  } catch (err) {
    rmSync(state, { recursive: true, force: true });
    throw err;
  }
  return {
    url: service.url,
    simulatorUrl: service.simulator.url,
    admin: new AdminClient(service.url, DEV_ADMIN_TOKEN),
    persistTo,
    stop: async () => {
      await service.stop();
      rmSync(state, { recursive: true, force: true });
    },
  };
}

let accounts = 0;
/** A new account (`credits` USD, none by default) with one key (optionally with a USD limit). */
export async function newAccount(f: ServiceFixture, credits?: number, limit?: number) {
  const email = `fixture-${++accounts}@example.test`; // each fixture has its own fresh state
  const account = await f.admin.request<{ id: string }>("POST", "/accounts", credits ? { email, credits } : { email });
  const key = await newKey(f, account.id, limit);
  return { id: account.id, email, ...key };
}

export function newKey(f: ServiceFixture, accountId: string, limit?: number) {
  return f.admin.request<{ key: string; hash: string; label: string }>(
    "POST",
    "/keys",
    limit === undefined ? { account: accountId } : { account: accountId, limit },
  );
}

/** A management key of the account (as `npm run admin -- create-key --management` makes one). */
export function newManagementKey(f: ServiceFixture, accountId: string) {
  return f.admin.request<{ key: string; hash: string; label: string }>("POST", "/keys", { account: accountId, management: true });
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export function postChat(f: ServiceFixture, key: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${f.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Polls (bounded) until the caller's generation record is visible; returns the 200 response. */
export async function waitForGeneration(f: ServiceFixture, key: string, id: string, timeoutMs = 15_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${f.url}/api/v1/generation?id=${encodeURIComponent(id)}`, { headers: bearer(key) });
    if (res.status === 200) return res;
    const text = await res.text();
    if (res.status !== 404 || Date.now() > deadline) throw new Error(`generation ${id}: ${res.status} ${text}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const offline = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "true" };

/**
 * Runs one SQL statement on the fixture's local D1 (beside the running service) and returns its rows.
 * The service's own workerd may hold the SQLite file's lock at that moment (SQLITE_BUSY): tried again,
 * at most 5 times.
 */
export async function localD1<T>(f: ServiceFixture, sql: string): Promise<T[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { stdout } = await promisify(execFile)(
        "node_modules/.bin/wrangler",
        ["d1", "execute", "DB", "--local", "--persist-to", f.persistTo, "--json", "--command", sql],
        { env: offline },
      );
      return (JSON.parse(stdout) as Array<{ results: T[] }>).flatMap((r) => r.results);
    } catch (err) {
      if (attempt >= 5 || !String(err).includes("SQLITE_BUSY")) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

/**
 * Waits (bounded) until the account's records are all stored (none left in its ledger's outbox) and
 * returns how many it has: the admin audit's `records` (docs/admin.md).
 */
export async function storedRecordCount(f: ServiceFixture, accountId: string, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const audit = await f.admin.request<{ records: number; records_pending: number }>("GET", `/accounts/${accountId}/audit`);
    if ((audit.records > 0 && audit.records_pending === 0) || Date.now() > deadline) return audit.records;
    await new Promise((r) => setTimeout(r, 100));
  }
}
