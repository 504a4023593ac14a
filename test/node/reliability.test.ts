import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalService, DEV_ADMIN_TOKEN, type LocalService } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";
import { runSoak, type AccountAudit } from "../../scripts/soak-run.ts";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { holdNano } from "../../src/request/hold";
import { NO_MEDIA } from "../../src/request/prompt-media";
import { chatRequestSchema } from "../../src/request/chat-request";

// Over real HTTP, against the Worker as deployed (the `wrangler deploy --dry-run` bundle in Miniflare, with
// local D1, KV and Durable Objects; no wrangler dev proxy, which under a loaded machine answers 503
// "Your worker restarted mid-request" to POSTs it had in flight): disconnects, concurrency on one and on
// many accounts, and the 1,000-request soak.
let service: LocalService;
let admin: AdminClient;
let state: string;
const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-reliability-"));
  service = await startLocalService({ port: 0, persistTo: state, quiet: true, vars: { CARRIER_TIMEOUT_MS: "1000" }, runtime: "bundle" });
  admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
});
afterAll(async () => {
  await service?.stop();
  rmSync(state, { recursive: true, force: true });
});

async function account(credits?: number) {
  const a = await admin.request<{ id: string }>("POST", "/accounts", {
    email: `rel-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`,
    ...(credits ? { credits } : {}),
  });
  const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: a.id });
  return { id: a.id, key };
}

function chat(key: string, body: unknown, signal?: AbortSignal) {
  return fetch(`${service.url}/api/v1/chat/completions`, {
    method: "POST",
    signal,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Waits (bounded) until the account has no open hold and every record reached D1. */
async function audit(id: string): Promise<AccountAudit> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const a = await admin.request<AccountAudit>("GET", `/accounts/${id}/audit`);
    if ((a.held_nano === 0 && a.records_pending === 0) || Date.now() > deadline) return a;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const nano = (usd: number) => Math.round(usd * 1e9);

describe("client disconnect mid-stream", () => {
  it("aborts the carrier request, records what was delivered and settles exactly once", async () => {
    const a = await account(10);
    const tag = `disc-${Date.now()}`;
    const ac = new AbortController();
    const res = await chat(a.key, { model: LLAMA, stream: true, messages: [{ role: "user", content: `x [sim tokens=300 tps=40 tag=${tag}]` }] }, ac.signal);
    const genId = res.headers.get("x-generation-id")!;
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/"content":" /g) ?? []).length < 3) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    const sim = (await (await fetch(`${service.simulator.url}/__sim/requests?tag=${tag}&wait_ms=5000&until=aborted`)).json()) as {
      requests: Array<{ outcome: string; chunks_sent: number }>;
    };
    expect(sim.requests.map((r) => r.outcome)).toEqual(["aborted"]);
    expect(sim.requests[0]!.chunks_sent).toBeLessThan(300);
    const t = await audit(a.id);
    expect(t.records).toBe(1);
    const g = (
      (await (await fetch(`${service.url}/api/v1/generation?id=${genId}`, { headers: { authorization: `Bearer ${a.key}` } })).json()) as {
        data: Record<string, number | boolean>;
      }
    ).data;
    expect(g).toMatchObject({ cancelled: true, status: 499 });
    expect(g.tokens_completion).toBeGreaterThanOrEqual(3);
    expect(g.tokens_completion).toBeLessThan(300);
    expect(t.usage_nano).toBe(nano(g.total_cost as number));
    expect(t.usage_nano).toBe(t.records_cost_nano);
  });
});

describe.each([
  ["anthropic/claude-haiku-4.5", "anthropic-messages"],
  ["google/gemini-2.5-flash", "gemini"],
])("client disconnect mid-stream from a native carrier (%s)", (model, protocol) => {
  it("aborts the carrier request in its protocol, charges the estimate of what was delivered, settles once", async () => {
    const a = await account(10);
    const tag = `disc-n-${Date.now()}`;
    const ac = new AbortController();
    const res = await chat(
      a.key,
      { model, stream: true, reasoning: { enabled: false }, messages: [{ role: "user", content: `x [sim tokens=300 tps=40 tag=${tag}]` }] },
      ac.signal,
    );
    const genId = res.headers.get("x-generation-id")!;
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/"content":" /g) ?? []).length < 3) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    const sim = (await (await fetch(`${service.simulator.url}/__sim/requests?tag=${tag}&wait_ms=5000&until=aborted`)).json()) as {
      requests: Array<{ outcome: string; protocol: string }>;
    };
    expect(sim.requests.map((r) => [r.outcome, r.protocol])).toEqual([["aborted", protocol]]);
    const t = await audit(a.id);
    expect(t.records).toBe(1);
    const g = (
      (await (await fetch(`${service.url}/api/v1/generation?id=${genId}`, { headers: { authorization: `Bearer ${a.key}` } })).json()) as {
        data: Record<string, number | boolean | string>;
      }
    ).data;
    expect(g).toMatchObject({ cancelled: true, status: 499, usage_source: "estimate", insured: false });
    expect(g.tokens_completion).toBeGreaterThanOrEqual(3);
    expect(g.tokens_completion).toBeLessThan(300);
    expect(t.usage_nano).toBe(nano(g.total_cost as number));
    expect(t.usage_nano).toBe(t.records_cost_nano);
  });
});

describe("client disconnect during reasoning", () => {
  it("charges the estimate of what was delivered, reasoning_content included; a disconnect is not insured", async () => {
    const a = await account(10);
    const tag = `disc-r-${Date.now()}`;
    const ac = new AbortController();
    const res = await chat(
      a.key,
      { model: "deepseek/deepseek-r1-0528", stream: true, messages: [{ role: "user", content: `x [sim tokens=400 tps=40 reasoning_content tag=${tag}]` }] },
      ac.signal,
    );
    const genId = res.headers.get("x-generation-id")!;
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/"reasoning_content":" /g) ?? []).length < 5) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    const sim = (await (await fetch(`${service.simulator.url}/__sim/requests?tag=${tag}&wait_ms=5000&until=aborted`)).json()) as {
      requests: Array<{ outcome: string; chunks_sent: number }>;
    };
    expect(sim.requests.map((r) => r.outcome)).toEqual(["aborted"]);
    const sent = sim.requests[0]!.chunks_sent; // the role chunk and the reasoning chunks the carrier wrote
    expect(sent).toBeLessThan(100); // still reasoning (100 of the 400 tokens are reasoning)
    const t = await audit(a.id);
    const g = (
      (await (await fetch(`${service.url}/api/v1/generation?id=${genId}`, { headers: { authorization: `Bearer ${a.key}` } })).json()) as {
        data: Record<string, number | boolean | string>;
      }
    ).data;
    expect(g).toMatchObject({ cancelled: true, status: 499, usage_source: "estimate", insured: false });
    // At least one token per reasoning chunk the caller read; at most 2.5 per word the carrier sent (+1 for rounding).
    expect(g.tokens_completion).toBeGreaterThanOrEqual(5);
    expect(g.tokens_completion).toBeLessThanOrEqual(Math.ceil(2.5 * (sent - 1)) + 1);
    expect(g.total_cost as number).toBeGreaterThan(0);
    expect(t.usage_nano).toBe(nano(g.total_cost as number));
  });
});

describe("concurrency", () => {
  // Holds close to real costs, so that admitting even one request too many breaks the bound: one
  // carrier (the price the hold is taken at) serves, and the completion cap is what the carrier returns.
  const content = "same prompt for every request [sim tokens=8000]";
  const body = { model: LLAMA, max_tokens: 8000, provider: { only: ["cerebras"] }, messages: [{ role: "user", content }] };
  const hold = holdNano(
    chatRequestSchema.parse(body),
    Buffer.byteLength(JSON.stringify(body)),
    catalog.endpoints(LLAMA).filter((e) => e.provider === "cerebras"),
    NO_MEDIA,
  );

  it("200 parallel paid requests on one account covering ~50, holds within 3 % of costs: the balance never below zero, every success debited once", async () => {
    // Unpaced: at its default simulated pace an 8,000-token answer would outlast the 1 s carrier timeout.
    const paced = await fetch(`${service.simulator.url}/__sim/profile`, { method: "POST", body: JSON.stringify({ carrier: "cerebras", tps: null }) });
    expect(paced.status).toBe(200);
    const probe = await account(1);
    const one = (await (await chat(probe.key, body)).json()) as { usage: { cost: number }; provider: string };
    const cost = nano(one.usage.cost);
    expect(one.provider).toBe("Cerebras");
    expect(hold / cost).toBeLessThan(1.03);
    const a = await account((50 * cost) / 1e9);
    const responses = await Promise.all(Array.from({ length: 200 }, () => chat(a.key, body)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    const costs = await Promise.all(
      responses.map(async (r) => (r.status === 200 ? nano(((await r.json()) as { usage: { cost: number } }).usage.cost) : (await r.arrayBuffer(), 0))),
    );
    const successes = statuses.filter((s) => s === 200).length;
    expect(successes).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 402).length).toBeGreaterThan(0);
    const t = await audit(a.id);
    const sum = costs.reduce((x, y) => x + y, 0);
    expect(t.held_nano).toBe(0);
    expect(t.usage_nano).toBe(sum); // each success debited exactly once
    expect(t.records_cost_nano).toBe(sum); // Σ total_cost of the account's records
    expect(t.records).toBe(200); // failures (402) recorded too
    expect(t.credits_nano - t.usage_nano).toBeGreaterThanOrEqual(0); // only affordable requests are admitted
    expect(t.unsettled_admissions).toBe(0);
  });

  it("20 accounts in parallel: each ends exact, with no cross-talk", async () => {
    const accounts = await Promise.all(Array.from({ length: 20 }, () => account(1)));
    const perAccount = await Promise.all(
      accounts.map(async (a, i) => {
        const rs = await Promise.all(
          Array.from({ length: 10 }, (_, j) =>
            chat(a.key, { model: LLAMA, stream: j % 2 === 0, messages: [{ role: "user", content: `acct ${i} req ${j} [sim tokens=${1 + j}]` }] }),
          ),
        );
        let sum = 0;
        for (const r of rs) {
          expect(r.status).toBe(200);
          const text = await r.text();
          const usage = text.startsWith("data:") ? JSON.parse(text.split("\n\n").at(-3)!.slice(6)).usage : JSON.parse(text).usage;
          sum += nano(usage.cost);
        }
        return sum;
      }),
    );
    for (const [i, a] of accounts.entries()) {
      const t = await audit(a.id);
      expect(t.records).toBe(10);
      expect(t.usage_nano).toBe(perAccount[i]);
      expect(t.records_cost_nano).toBe(perAccount[i]);
    }
  });
});

describe("soak (CI variant)", () => {
  it("1,000 mixed requests through all four APIs: no 5xx of our own, every request recorded, usage = Σ records", async () => {
    const report = await runSoak({ url: service.url, admin, requests: 1000, concurrency: 24, accounts: 3, timeLimitMs: 240_000, seed: 7 });
    expect(report.unexpected).toEqual([]);
    expect(report.unsent).toBe(0);
    // 400 only where every carrier rejected the request (`[sim status=400]`); any other 400 is in `unexpected`.
    expect(Object.keys(report.by_status).every((s) => ["200", "400", "402", "429", "502", "503", "disconnected"].includes(s))).toBe(true);
    expect(report.faults_injected).toBeGreaterThan(100);
    expect(report.disconnects).toBeGreaterThan(20);
    // Each shape about a fifth: reasoning_content streams, tool-call streams, cached prompts on the native carriers
    // (Anthropic, Gemini, OpenAI) and Anthropic thinking, each with its share of faults and disconnects.
    for (const shape of ["content", "reasoning", "tool_call", "cached", "thinking"]) expect(report.shapes[shape]).toBeGreaterThan(120);
    // Every inbound API in the mix (chat 40 %, messages and responses 25 % each, embeddings 10 %), billed alike.
    for (const [api, least] of [
      ["chat", 300],
      ["messages", 180],
      ["responses", 180],
      ["embeddings", 60],
    ] as const)
      expect(report.apis[api]).toBeGreaterThan(least);
    for (const a of report.accounts) {
      expect(a.held_nano).toBe(0);
      expect(a.usage_nano).toBe(a.records_cost_nano);
      expect(a.unsettled_admissions).toBe(0);
    }
    expect(report.invariant_held).toBe(true);
  }, 300_000);
});
