import { describe, it, expect, vi, afterEach } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";

async function sha256Hex(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// A driver error's message carries the query's parameters (drizzle adds "params: …" with the key or
// session hash looked up; D1's own messages can carry values too): never logged, while the caller still
// gets a plain 500.
const SECRET_EMAIL = "secret.person@example.test";
const SECRET_HASH = "9f".repeat(32);
const driverError = () => new Error(`D1_ERROR: constraint failed: params ["${SECRET_EMAIL}","${SECRET_HASH}"]`);

/** A D1 binding whose every query fails like a driver error. */
const failingDb = {
  prepare() {
    const statement = {
      bind: () => statement,
      first: () => Promise.reject(driverError()),
      all: () => Promise.reject(driverError()),
      raw: () => Promise.reject(driverError()),
      run: () => Promise.reject(driverError()),
    };
    return statement;
  },
  batch: () => Promise.reject(driverError()),
  exec: () => Promise.reject(driverError()),
} as unknown as D1Database;

async function fetchWithFailingDb(path: string, init?: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request("https://switchyard.test" + path, init), { ...env, DB: failingDb }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

function logged(spy: { mock: { calls: unknown[][] } }): string {
  return JSON.stringify(spy.mock.calls.map((args) => args.map((a) => (a instanceof Error ? `${a.name}: ${a.message} ${a.stack}` : a))));
}

afterEach(() => vi.restoreAllMocks());

describe("error logs never carry query parameters", () => {
  it("the API's error handler logs the error's kind, not its message", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const key = `sk-sy-v1-${"a".repeat(64)}`;
    const res = await fetchWithFailingDb("/api/v1/key", { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: 500, message: "Internal error" } });
    expect(spy).toHaveBeenCalled();
    expect(logged(spy)).toContain("Error");
    expect(logged(spy)).not.toContain(await sha256Hex(key)); // the query's parameter
    expect(logged(spy)).not.toContain("params");
    expect(logged(spy)).not.toContain(SECRET_EMAIL);
    expect(logged(spy)).not.toContain(SECRET_HASH);
    expect(logged(spy)).not.toContain("D1_ERROR");
  });

  it("the console's error handler logs the error's kind, not its message", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const token = "s".repeat(43);
    const res = await fetchWithFailingDb("/settings/keys", { headers: { cookie: `__Host-sy_session=${token}` } });
    expect(res.status).toBe(500);
    expect(await res.text()).toContain("Something went wrong");
    expect(spy).toHaveBeenCalled();
    expect(logged(spy)).not.toContain(await sha256Hex(token)); // the session lookup's parameter
    expect(logged(spy)).not.toContain("params");
    expect(logged(spy)).not.toContain(SECRET_EMAIL);
    expect(logged(spy)).not.toContain(SECRET_HASH);
    expect(logged(spy)).not.toContain("D1_ERROR");
  });
});
