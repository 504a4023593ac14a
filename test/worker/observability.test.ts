import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, call, chat, newAccount, storedRecords, user } from "./helpers";
import { consumeTraces, retryDelaySeconds } from "../../src/observability/traces-consumer";
import { sendGroups, traceMessages } from "../../src/observability/traces-queue";
import { verifySignature } from "../../src/webhooks/sign";
import { destinationBox } from "../../src/observability/destination-secrets";
import { settings } from "../../src/settings";
import type { NewGeneration, ObservabilityDestination } from "../../src/db/schema";

// Observability destinations (docs/observability.md): the `/observability/destinations` API, and spans of the
// account's records delivered through the traces queue to the local OTLP receiver (test/global-simulator.ts),
// equal to the records, with each destination's sampling and key filter.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const OTLP = env.OTLP_TEST_URL;

async function owner() {
  const a = await newAccount(5);
  const m = await admin<{ key: string }>("/keys", { account: a.accountId, management: true });
  return { ...a, mgmt: m.key };
}

async function api(key: string, method: string, path = "", body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await call(`/api/v1/observability/destinations${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
}

const collector = (over: Json = {}) => ({
  type: "otel-collector",
  name: "Local",
  config: { endpoint: OTLP, ...(over.config ?? {}) },
  ...over,
  ...(over.config ? { config: { endpoint: OTLP, ...over.config } } : {}),
});

type Received = { span: { attributes: Array<{ key: string; value: Json }> }; encoding: string; authorization: string | null };
const attrs = (s: Received): Json => Object.fromEntries(s.span.attributes.map((a) => [a.key, Object.values(a.value)[0]]));

/** Waits (bounded) until the receiver holds at least `count` spans passing `mine`. */
async function received(mine: (s: Received) => boolean, count: number, timeoutMs = 20_000): Promise<Received[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const all = ((await (await fetch(`${OTLP}/_sim/spans`)).json()) as { spans: Received[] }).spans.filter(mine);
    if (all.length >= count) return all;
    if (Date.now() > deadline) throw new Error(`${all.length} of ${count} spans received after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("/observability/destinations", () => {
  it("creates, reads, changes and deletes an OpenTelemetry collector destination; its header values are never shown", async () => {
    const a = await owner();
    const created = await api(a.mgmt, "POST", "", collector({ config: { headers: { authorization: "Bearer collector-secret-0001" } }, sampling_rate: 0.5 }));
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      type: "otel-collector",
      name: "Local",
      enabled: true,
      privacy_mode: true,
      sampling_rate: 0.5,
      api_key_hashes: null,
      filter_rules: null,
    });
    expect(created.json.data.config).toEqual({ endpoint: OTLP, encoding: "protobuf", headers: { authorization: "Bear...0001" } });
    expect(JSON.stringify(created.json)).not.toContain("collector-secret");
    const id = created.json.data.id as string;
    // The masked value sent back keeps the stored secret; the name changes.
    const patched = await api(a.mgmt, "PATCH", `/${id}`, { name: "Renamed", config: { ...created.json.data.config, encoding: "json" } });
    expect(patched.status).toBe(200);
    expect(patched.json.data).toMatchObject({ name: "Renamed", config: { encoding: "json", headers: { authorization: "Bear...0001" } } });
    // Stored sealed (observability-secrets.test.ts): the header's value is not in the row.
    const row = await env.DB.prepare("SELECT * FROM observability_destinations WHERE id = ?").bind(id).first();
    expect(JSON.stringify(row)).not.toContain("collector-secret");
    expect((await api(a.mgmt, "GET")).json).toMatchObject({ total_count: 1, data: [{ id, name: "Renamed" }] });
    // Another account's destination is not found; an API key is not a management key.
    const b = await owner();
    expect((await api(b.mgmt, "GET", `/${id}`)).status).toBe(404);
    expect((await api(b.mgmt, "DELETE", `/${id}`)).status).toBe(404);
    expect((await api(a.key, "GET")).status).toBe(403);
    expect(await api(a.mgmt, "DELETE", `/${id}`)).toEqual({ status: 200, json: { deleted: true } });
    expect((await api(a.mgmt, "GET", `/${id}`)).status).toBe(404);
  });

  it("refuses what it cannot do with a 400 that says so: other kinds, content export, filter rules, plain http elsewhere", async () => {
    const a = await owner();
    const kind = await api(a.mgmt, "POST", "", { type: "langfuse", name: "L", config: { baseUrl: "https://x" } });
    expect(kind.status).toBe(400);
    expect(kind.json.error.message).toContain("`langfuse` is not supported: Switchyard exports to `otel-collector`");
    const content = await api(a.mgmt, "POST", "", collector({ privacy_mode: false }));
    expect(content.status).toBe(400);
    expect(content.json.error.message).toContain("no prompt or completion content");
    expect((await api(a.mgmt, "POST", "", collector({ filter_rules: { rules: [] } }))).status).toBe(400);
    expect((await api(a.mgmt, "POST", "", collector({ config: { endpoint: "http://collector.example.com:4318" } }))).status).toBe(400);
    expect((await api(a.mgmt, "POST", "", collector({ sampling_rate: 1.5 }))).status).toBe(400);
    expect((await api(a.mgmt, "GET")).json.total_count).toBe(0);
  });
});

describe("spans delivered through the traces queue", () => {
  it("sends each destination the records its sampling and keys take, as spans equal to the records", async () => {
    const a = await owner();
    const second = await admin<{ key: string; hash: string; label: string }>("/keys", { account: a.accountId });
    const mk = async (over: Json) => (await api(a.mgmt, "POST", "", collector(over))).json.data as Json;
    const all = await mk({ name: "all", config: { encoding: "json", headers: { authorization: `Bearer all-${a.accountId}` } } });
    await mk({ name: "none", sampling_rate: 0, config: { headers: { authorization: `Bearer none-${a.accountId}` } } });
    await mk({ name: "second key", api_key_hashes: [second.hash], config: { headers: { authorization: `Bearer second-${a.accountId}` } } });
    for (const key of [a.key, a.key, second.key]) expect((await chat(key, { model: "openai/gpt-oss-20b", ...user("hi [sim tokens=7]") })).status).toBe(200);
    const records = await storedRecords(a.accountId, 3);
    const byAuth = (who: string) => (s: Received) => s.authorization === `Bearer ${who}-${a.accountId}`;
    const toAll = await received(byAuth("all"), 3);
    const toSecond = await received(byAuth("second"), 1);
    expect(toAll.map((s) => s.encoding)).toEqual(["json", "json", "json"]);
    expect(toSecond.map((s) => s.encoding)).toEqual(["protobuf"]);
    for (const r of records) {
      const span = attrs(toAll.find((s) => attrs(s)["gen_ai.response.id"] === r.id)!);
      expect(span).toMatchObject({
        "gen_ai.request.model": r.model,
        "gen_ai.usage.input_tokens": String(r.tokensPrompt),
        "gen_ai.usage.output_tokens": String(r.tokensCompletion),
        "switchyard.cost.nano_usd": String(r.costNano),
        "switchyard.key.hash": r.keyHash,
        "switchyard.key.label": r.keyHash === second.hash ? second.label : a.label,
      });
      expect(r.costNano).toBeGreaterThan(0);
    }
    expect(attrs(toSecond[0]!)["switchyard.key.hash"]).toBe(second.hash);
    const log = await call(`/api/v1/observability/destinations/${all.id}/deliveries`, { headers: { authorization: `Bearer ${a.mgmt}` } });
    const rows = ((await log.json()) as { data: Json[] }).data;
    expect(rows.every((d) => d.outcome === "delivered" && d.status === 200)).toBe(true);
    expect(rows.reduce((n, d) => n + (d.spans as number), 0)).toBe(3);
    // Rate 0: none, then or later (the same stored batches enqueued all three destinations' messages at once).
    expect((await received(byAuth("none"), 0)).length).toBe(0);
  });

  it("sends a webhook destination the records as the API shows them, signed with the secret shown once", async () => {
    const a = await owner();
    const created = await api(a.mgmt, "POST", "", {
      type: "webhook",
      name: "hook",
      config: { url: `${OTLP}/webhooks/${a.accountId}`, method: "PUT", headers: { authorization: "Bearer hook-secret-000001" } },
    });
    expect(created.status).toBe(201);
    const secret = created.json.data.config.signing_secret as string;
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const shown = (await api(a.mgmt, "GET", `/${created.json.data.id}`)).json.data.config;
    expect(shown).toEqual({
      url: `${OTLP}/webhooks/${a.accountId}`,
      method: "PUT",
      headers: { authorization: "Bear...0001" },
      signing_secret: `${secret.slice(0, 4)}...${secret.slice(-4)}`,
    });
    expect((await chat(a.key, { model: "openai/gpt-oss-20b", ...user("hi") })).status).toBe(200);
    const [record] = await storedRecords(a.accountId, 1);
    const deadline = Date.now() + 20_000;
    type Hook = { path: string; method: string; body: string; signature: string; authorization: string };
    let hook: Hook | undefined;
    while (!hook) {
      const hooks = ((await (await fetch(`${OTLP}/_sim/webhooks`)).json()) as { webhooks: Hook[] }).webhooks;
      hook = hooks.find((h) => h.path === `/webhooks/${a.accountId}`);
      if (!hook && Date.now() > deadline) throw new Error("no webhook call within 20 s");
      if (!hook) await new Promise((r) => setTimeout(r, 50));
    }
    expect(hook.method).toBe("PUT");
    expect(hook.authorization).toBe("Bearer hook-secret-000001");
    const t = Number(/^t=(\d+),/.exec(hook.signature)![1]);
    expect(await verifySignature(secret, hook.signature, hook.body, t)).toBe(true);
    expect(await verifySignature(`${secret}x`, hook.signature, hook.body, t)).toBe(false);
    const body = JSON.parse(hook.body) as { type: string; data: Json[] };
    expect(body.type).toBe("generations");
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({
      id: record!.id,
      model: record!.model,
      tokens_prompt: record!.tokensPrompt,
      tokens_completion: record!.tokensCompletion,
      total_cost: record!.costNano / 1e9,
      key_label: a.label,
    });
  });

  it("picks records by key and by a sample decided by the generation id alone", () => {
    const dest = (over: Partial<ObservabilityDestination>) => ({ id: "d", samplingRate: 1, apiKeyHashes: null, ...over }) as ObservabilityDestination;
    const recs = Array.from({ length: 400 }, (_, i) => ({ id: `gen-${String(i).padStart(32, "0")}`, keyHash: i % 2 ? "k1" : "k2" }) as NewGeneration);
    const count = (d: ObservabilityDestination) => traceMessages("acct", [d], recs).reduce((n, m) => n + m.records.length, 0);
    expect(count(dest({ samplingRate: 0 }))).toBe(0);
    expect(count(dest({}))).toBe(400);
    expect(count(dest({ apiKeyHashes: JSON.stringify(["k1"]) }))).toBe(200);
    const half = count(dest({ samplingRate: 0.5 }));
    expect(half).toBe(count(dest({ samplingRate: 0.5 }))); // the same every time
    expect(half).toBeGreaterThan(150);
    expect(half).toBeLessThan(250);
  });

  it("splits a destination's records into messages of at most 100 KB, sent in groups a sendBatch takes", () => {
    const d = { id: "d", samplingRate: 1, apiKeyHashes: null } as ObservabilityDestination;
    const recs = Array.from({ length: 600 }, (_, i) => ({ id: `gen-${i}`, keyHash: "k", errorMessage: "x".repeat(1000) }) as NewGeneration);
    const messages = traceMessages("acct", [d, { ...d, id: "e" }], recs);
    const size = (m: { records: string[] }) => m.records.reduce((n, r) => n + r.length, 0);
    expect(messages.every((m) => size(m) <= 100 * 1024)).toBe(true);
    expect(
      messages
        .filter((m) => m.destinationId === "d")
        .flatMap((m) => m.records)
        .map((r) => (JSON.parse(r) as { id: string }).id),
    ).toEqual(recs.map((r) => r.id));
    const groups = sendGroups(messages);
    expect(groups.flat()).toEqual(messages);
    expect(groups.every((g) => g.length <= 100 && g.reduce((n, m) => n + size(m), 0) <= 250 * 1024)).toBe(true);
    expect(groups.length).toBeGreaterThan(1);
  });

  it("retries an unreachable collector with backoff and logs each attempt; a refusing one is not retried", async () => {
    const a = await owner();
    const dead = (await api(a.mgmt, "POST", "", collector({ config: { endpoint: "http://127.0.0.1:9" } }))).json.data as Json;
    const refusing = (await api(a.mgmt, "POST", "", collector({ config: { endpoint: `${OTLP}/refuses` } }))).json.data as Json;
    const record = JSON.stringify({
      id: "gen-00000000000000000000000000000001",
      accountId: a.accountId,
      keyHash: a.hash,
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
    const message = (destinationId: string) => ({
      id: destinationId,
      timestamp: new Date(),
      attempts: 3,
      body: { v: 1, accountId: a.accountId, destinationId, records: [record] },
      ack: () => outcomes.push(`${destinationId === dead.id ? "dead" : "refusing"}: ack`),
      retry: (o?: { delaySeconds?: number }) => outcomes.push(`${destinationId === dead.id ? "dead" : "refusing"}: retry in ${o?.delaySeconds}`),
    });
    const batch = {
      queue: "switchyard-traces",
      messages: [message(dead.id), message(refusing.id)],
      ackAll() {},
      retryAll() {},
    } as unknown as MessageBatch<unknown>;
    await consumeTraces(batch, { d1: env.DB, timeoutMs: 2000, logRows: 200, now: Date.now, present: (r) => r, box: destinationBox(settings(env)) });
    expect(outcomes).toEqual([`dead: retry in ${retryDelaySeconds(3)}`, "refusing: ack"]);
    expect(retryDelaySeconds(1)).toBe(5);
    expect(retryDelaySeconds(3)).toBe(20);
    expect(retryDelaySeconds(20)).toBe(600);
    const logs = await env.DB.prepare("SELECT destination_id AS d, status, outcome, attempt FROM observability_deliveries WHERE account_id = ? ORDER BY id")
      .bind(a.accountId)
      .all();
    expect(logs.results).toEqual([
      { d: dead.id, status: 0, outcome: "retrying", attempt: 3 },
      { d: refusing.id, status: 404, outcome: "failed", attempt: 3 },
    ]);
  });
});
