import { costNano, type TokenPrices } from "../../src/catalog/money";
import { plainUsage } from "../../src/request/usage";
import { exports } from "cloudflare:workers";
import { env } from "cloudflare:test";
import { recordStores, recordsPage } from "../../src/generations/record-pages";
import type { Generation } from "../../src/db/schema";
import { settings } from "../../src/settings";

export const ORIGIN = "https://switchyard.test";
const ADMIN = { authorization: "Bearer test-admin-token", "content-type": "application/json" };

export function call(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(ORIGIN + path, init));
}

export async function admin<T = Record<string, unknown>>(path: string, body?: unknown): Promise<T> {
  const res = await call("/admin" + path, body === undefined ? { headers: ADMIN } : { method: "POST", headers: ADMIN, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`admin ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

let counter = 0;
/** A fresh account with `credits` USD and one key (optionally with a USD limit). */
export async function newAccount(credits?: number, limit?: number) {
  const email = `user${Date.now()}-${counter++}-${Math.random().toString(36).slice(2)}@example.test`;
  const account = await admin<{ id: string; email: string }>("/accounts", credits === undefined ? { email } : { email, credits });
  const key = await admin<{ key: string; hash: string; label: string }>(
    "/keys",
    limit === undefined ? { account: account.id } : { account: account.id, limit },
  );
  return { accountId: account.id, email, key: key.key, hash: key.hash, label: key.label };
}

export function chat(key: string, body: unknown, headers: Record<string, string> = {}) {
  return call("/api/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export function get(path: string, key?: string) {
  return call("/api/v1" + path, key ? { headers: { authorization: `Bearer ${key}` } } : undefined);
}

export type Totals = { total_credits: number; total_usage: number; balance: number; held: number };

/** Waits (bounded) until every request of the account has settled: no hold left in its ledger. */
export async function settled(accountId: string, timeoutMs = 5000): Promise<Totals> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const t = await admin<Totals>(`/accounts/${accountId}`);
    if (t.held === 0) return t;
    if (Date.now() > deadline) throw new Error(`account ${accountId} still holds ${t.held} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Waits (bounded) until the ledger has stored `count` settles of the account (their records are in its
 * outbox or in D1): its usage is then exact, even while an idle slice is still held (released after 1 s).
 */
export async function debited(accountId: string, count = 1, timeoutMs = 5000): Promise<Totals> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const audit = await admin<{ records: number; records_pending: number }>(`/accounts/${accountId}/audit`);
    if (audit.records + audit.records_pending >= count) return admin<Totals>(`/accounts/${accountId}`);
    if (Date.now() > deadline)
      throw new Error(`account ${accountId}: ${audit.records + audit.records_pending} of ${count} settles stored after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Reads until `done` says the value is there (something another Worker or a queue writes), at most `ms`:
 * the last value read either way, for the test's own assertion to judge.
 */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await read();
  while (!done(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    v = await read();
  }
  return v;
}

export type Audit = { usage_nano: number; credits_nano: number; records: number; records_pending: number; records_cost_nano: number };

/** Waits (bounded) until `count` records of the account are stored (none left in its ledger's outbox): its audit then sums them all. */
export async function recorded(accountId: string, count: number, timeoutMs = 20_000): Promise<Audit> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const audit = await admin<Audit>(`/accounts/${accountId}/audit`);
    if (audit.records >= count && audit.records_pending === 0) return audit;
    if (Date.now() > deadline) throw new Error(`account ${accountId}: ${audit.records} of ${count} records stored after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits (bounded) until a generation record is visible to its owner, and returns it. */
export async function generation(key: string, id: string, timeoutMs = 5000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await get(`/generation?id=${id}`, key);
    if (res.status === 200) return ((await res.json()) as { data: Record<string, unknown> }).data;
    if (res.status !== 404 || Date.now() > deadline) throw new Error(`generation ${id}: ${res.status} ${await res.text()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const user = (content: string) => ({ messages: [{ role: "user", content }] });

/** What `prompt` and `completion` tokens cost at an endpoint, with no cache involved. */
export function uncachedCost(prompt: number, completion: number, price: TokenPrices): number {
  return costNano(plainUsage(prompt, completion, 0), price);
}

/** Waits (bounded) until `count` records of the account are stored, and returns them all as a reader finds them (newest first). */
export async function storedRecords(accountId: string, count: number): Promise<Generation[]> {
  await recorded(accountId, count);
  return (await recordsPage(recordStores(env, settings(env)), accountId, {}, "older", null, 10_000)).rows;
}

/** One function tool (a city's weather), as the carrier tests declare it in OpenAI's chat shape. */
export const WEATHER_TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];
