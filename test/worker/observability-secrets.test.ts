import { describe, it, expect } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import { admin, call, newAccount, ORIGIN } from "./helpers";
import { consumeTraces } from "../../src/observability/traces-consumer";
import { destinationBox } from "../../src/observability/destination-secrets";
import { settings } from "../../src/settings";
import { verifySignature } from "../../src/webhooks/sign";

// A destination's secrets at rest (docs/observability.md, "Secrets"): a webhook's signing secret and every
// header value are sealed in D1 (AES-256-GCM under REASONING_SEAL_KEY, bound to the destination's id), shown
// masked as before, and opened only to export; a deployment without the key refuses what it would have to seal.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const OTLP = env.OTLP_TEST_URL;

async function owner() {
  const a = await newAccount(5);
  const m = await admin<{ key: string }>("/keys", { account: a.accountId, management: true });
  return { ...a, mgmt: m.key };
}

/** The destinations API; with `vars`, through the app with those Worker vars (REASONING_SEAL_KEY unset). */
async function api(key: string, method: string, path = "", body?: unknown, vars?: Record<string, string>): Promise<{ status: number; json: Json }> {
  const init = {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
  const url = `/api/v1/observability/destinations${path}`;
  if (!vars) {
    const res = await call(url, init);
    return { status: res.status, json: (await res.json()) as Json };
  }
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(ORIGIN + url, init), { ...env, ...vars }, ctx);
  const json = (await res.json()) as Json;
  await waitOnExecutionContext(ctx);
  return { status: res.status, json };
}

/** Runs the traces consumer on one message of one record for the destination; what became of the message. */
async function exportOne(accountId: string, keyHash: string, destinationId: string): Promise<string[]> {
  const record = JSON.stringify({
    id: `gen-${crypto.randomUUID().replaceAll("-", "")}`,
    accountId,
    keyHash,
    model: "m",
    createdAt: 1,
    generationTimeMs: 1,
    tokensPrompt: 1,
    tokensCompletion: 1,
    tokensReasoning: 0,
    costNano: 1,
    status: 200,
    streamed: false,
  });
  const outcomes: string[] = [];
  const batch = {
    queue: "switchyard-traces",
    messages: [
      {
        id: destinationId,
        timestamp: new Date(),
        attempts: 1,
        body: { v: 1, accountId, destinationId, records: [record] },
        ack: () => outcomes.push("ack"),
        retry: () => outcomes.push("retry"),
      },
    ],
    ackAll() {},
    retryAll() {},
  } as unknown as MessageBatch<unknown>;
  await consumeTraces(batch, { d1: env.DB, timeoutMs: 5000, logRows: 200, now: Date.now, present: (r) => r, box: destinationBox(settings(env)) });
  return outcomes;
}

type Hook = { path: string; method: string; body: string; signature: string; authorization: string };
const hooksAt = async (path: string) => ((await (await fetch(`${OTLP}/_sim/webhooks`)).json()) as { webhooks: Hook[] }).webhooks.filter((h) => h.path === path);
const rowOf = (id: string) => env.DB.prepare("SELECT * FROM observability_destinations WHERE id = ?").bind(id).first<Record<string, unknown>>();

describe("observability destinations' secrets at rest", () => {
  it("keeps a webhook's signing secret and header values sealed in D1, shows them masked as before, and exports with them", async () => {
    const a = await owner();
    const path = `/webhooks/sealed-${a.accountId}`;
    const headers = { authorization: "Bearer sealed-hook-secret-0001", "x-team": "team-secret-value-42" };
    const created = await api(a.mgmt, "POST", "", { type: "webhook", name: "sealed", config: { url: `${OTLP}${path}`, headers } });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    const secret = created.json.data.config.signing_secret as string;
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const raw = JSON.stringify(await rowOf(id));
    for (const clear of [secret, secret.slice(6), "sealed-hook-secret", "team-secret-value"]) expect(raw).not.toContain(clear);
    const masked = {
      url: `${OTLP}${path}`,
      method: "POST",
      headers: { authorization: "Bear...0001", "x-team": "team...e-42" },
      signing_secret: `whse...${secret.slice(-4)}`,
    };
    expect((await api(a.mgmt, "GET", `/${id}`)).json.data.config).toEqual(masked);
    expect((await api(a.mgmt, "GET")).json.data[0].config).toEqual(masked);
    // The config shown, PATCHed back with a header changed: the masked one keeps its stored value, the new one is sealed too.
    const patched = await api(a.mgmt, "PATCH", `/${id}`, { config: { ...masked, headers: { ...masked.headers, "x-team": "another-team-secret-43" } } });
    expect(patched.status).toBe(200);
    expect(patched.json.data.config).toEqual({ ...masked, headers: { authorization: "Bear...0001", "x-team": "anot...t-43" } });
    expect(JSON.stringify(await rowOf(id))).not.toContain("another-team-secret");
    expect(await exportOne(a.accountId, a.hash, id)).toEqual(["ack"]);
    const [hook] = await hooksAt(path);
    expect(hook!.authorization).toBe("Bearer sealed-hook-secret-0001");
    const t = Number(/^t=(\d+),/.exec(hook!.signature)![1]);
    expect(await verifySignature(secret, hook!.signature, hook!.body, t)).toBe(true);
  });

  it("a row copied to another destination's id does not open: its export fails, logged, and nothing is sent", async () => {
    const a = await owner();
    const created = await api(a.mgmt, "POST", "", {
      type: "webhook",
      name: "original",
      config: { url: `${OTLP}/webhooks/original-${a.accountId}`, headers: { authorization: "Bearer copied-secret-0001" } },
    });
    const row = (await rowOf(created.json.data.id as string))!;
    const copyId = crypto.randomUUID();
    const path = `/webhooks/copy-${a.accountId}`;
    const copy = { ...row, id: copyId, endpoint: `${OTLP}${path}` };
    const cols = Object.keys(copy);
    await env.DB.prepare(`INSERT INTO observability_destinations (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`)
      .bind(...Object.values(copy))
      .run();
    expect(await exportOne(a.accountId, a.hash, copyId)).toEqual(["ack"]);
    expect(await hooksAt(path)).toEqual([]);
    const log = await env.DB.prepare("SELECT status, outcome FROM observability_deliveries WHERE destination_id = ?").bind(copyId).all();
    expect(log.results).toEqual([{ status: 0, outcome: "failed" }]);
  });

  it("a row written before sealing (in clear) still exports, and is sealed when it is read", async () => {
    const a = await owner();
    const path = `/webhooks/legacy-${a.accountId}`;
    const created = await api(a.mgmt, "POST", "", { type: "webhook", name: "legacy", config: { url: `${OTLP}${path}` } });
    const id = created.json.data.id as string;
    const secret = "whsec_" + "ab".repeat(32);
    await env.DB.prepare("UPDATE observability_destinations SET signing_secret = ?, headers = ? WHERE id = ?")
      .bind(secret, JSON.stringify({ authorization: "Bearer legacy-secret-0001" }), id)
      .run();
    expect(await exportOne(a.accountId, a.hash, id)).toEqual(["ack"]);
    const [hook] = await hooksAt(path);
    expect(hook!.authorization).toBe("Bearer legacy-secret-0001");
    expect(await verifySignature(secret, hook!.signature, hook!.body, Number(/^t=(\d+),/.exec(hook!.signature)![1]))).toBe(true);
    const raw = JSON.stringify(await rowOf(id));
    expect(raw).not.toContain("legacy-secret");
    expect(raw).not.toContain(secret);
  });

  it("without REASONING_SEAL_KEY: a webhook or headers are refused with a 503 naming the secret; a collector without headers is made", async () => {
    const a = await owner();
    const unset = { REASONING_SEAL_KEY: "" };
    const hook = await api(a.mgmt, "POST", "", { type: "webhook", name: "h", config: { url: `${OTLP}/webhooks/unset` } }, unset);
    expect(hook.status).toBe(503);
    expect(hook.json.error.message).toMatch(/REASONING_SEAL_KEY secret is not set/);
    const withHeaders = { type: "otel-collector", name: "c", config: { endpoint: OTLP, headers: { authorization: "Bearer unsealed-0001" } } };
    expect((await api(a.mgmt, "POST", "", withHeaders, unset)).status).toBe(503);
    const plain = await api(a.mgmt, "POST", "", { type: "otel-collector", name: "c", config: { endpoint: OTLP } }, unset);
    expect(plain.status).toBe(201);
    const id = plain.json.data.id as string;
    expect((await api(a.mgmt, "PATCH", `/${id}`, { config: withHeaders.config }, unset)).status).toBe(503);
    expect((await api(a.mgmt, "PATCH", `/${id}`, { name: "renamed" }, unset)).status).toBe(200);
    expect((await api(a.mgmt, "GET")).json.total_count).toBe(1);
  });
});
