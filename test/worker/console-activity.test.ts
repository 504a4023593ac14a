import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, call, chat, newAccount, settled, user } from "./helpers";
import { createKeyViaConsole, signUp, textOf, type ConsoleClient } from "./console-helpers";

const DAY = 86_400_000;

/** Reloads /activity until `ready(html)` (bounded): records reach D1 from the ledger's outbox shortly after settling. */
async function activityWhen(client: ConsoleClient, ready: (html: string) => boolean, path = "/activity", timeoutMs = 5000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, html } = await client.page(path);
    expect(status).toBe(200);
    if (ready(html)) return html;
    if (Date.now() > deadline) throw new Error(`activity not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const rowsOf = (html: string) => [...html.matchAll(/<tr id="(gen-[^"]+)">([\s\S]*?)<\/tr>/g)].map((m) => ({ id: m[1]!, text: textOf(m[2]!).trim() }));

function insertGenerations(accountId: string, n: number, start: number, costNano = 1000) {
  const stmts = Array.from({ length: n }, (_, i) =>
    env.DB.prepare(
      "INSERT INTO generations (id, account_id, key_hash, model, provider_name, app, streamed, created_at, latency_ms, generation_time_ms, tokens_prompt, tokens_completion, tokens_reasoning, cost_nano, finish_reason, status) VALUES (?, ?, 'k', 'openai/gpt-oss-20b', 'Groq', 'seed', 0, ?, 10, 20, 1, 2, 0, ?, 'stop', 200)",
    ).bind(`gen-seed${accountId.slice(5)}${String(i).padStart(4, "0")}`, accountId, start + i * 1000, costNano),
  );
  return env.DB.batch(stmts);
}

describe("/activity", () => {
  it("lists the account's requests newest first with model, provider, app, tokens, cost, latency and status; failures at cost 0", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 2 });
    const { key } = await createKeyViaConsole(client, "act");
    const ok = await chat(key, { model: "meta-llama/llama-3.1-8b-instruct", ...user("first [sim tokens=6]") }, { "x-title": "My App" });
    const okBody = (await ok.json()) as { id: string; provider: string; usage: { prompt_tokens: number; completion_tokens: number; cost: number } };
    expect(ok.status).toBe(200);
    await settled(accountId);
    const failed = await chat(key, { model: "acme/none", ...user("x") });
    expect(failed.status).toBe(400);
    await settled(accountId);

    const html = await activityWhen(client, (h) => rowsOf(h).length === 2);
    const rows = rowsOf(html);
    // Newest first: the failure, then the completion.
    expect(rows[1]!.id).toBe(okBody.id);
    const costText = `$${okBody.usage.cost.toFixed(9).replace(/0+$/, "")}`;
    expect(rows[1]!.text).toContain("meta-llama/llama-3.1-8b-instruct");
    expect(rows[1]!.text).toContain(okBody.provider);
    expect(rows[1]!.text).toContain("My App");
    expect(rows[1]!.text).toContain(`${okBody.usage.prompt_tokens} → ${okBody.usage.completion_tokens}`);
    expect(rows[1]!.text).toContain(costText);
    expect(rows[1]!.text).toMatch(/\d+ ms 200 OK$/);
    expect(rows[0]!.text).toContain("acme/none");
    expect(rows[0]!.text).toContain("$0.00");
    expect(rows[0]!.text).toMatch(/400 failed/);

    // The chart: one bar today, its tooltip and text alternative carrying today's spend.
    const today = new Date().toISOString().slice(0, 10);
    const bars = html.match(/<rect class="bar"/g) ?? [];
    expect(bars).toHaveLength(1);
    expect(html).toContain(`<title>${today}: ${costText} (2 requests)</title>`);
    expect(html).toMatch(/<svg[^>]*role="img"[^>]*aria-labelledby="spend-title spend-desc"/);
    expect(textOf(html)).toContain(`${costText} spent on 2 requests`);
  });

  it("each request names the API it came in: chat, messages, responses, embeddings", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 2 });
    const { key } = await createKeyViaConsole(client, "apis");
    const post = (path: string, body: unknown) =>
      call(`/api/v1${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const model = "meta-llama/llama-3.1-8b-instruct";
    const answers = [
      ["chat", await chat(key, { model, ...user("a [sim tokens=2]") })],
      ["messages", await post("/messages", { model, max_tokens: 20, messages: [{ role: "user", content: "b [sim tokens=2]" }] })],
      ["responses", await post("/responses", { model, input: "c [sim tokens=2]" })],
      ["embeddings", await post("/embeddings", { model: "openai/text-embedding-3-small", input: "d" })],
    ] as const;
    for (const [, res] of answers) expect(res.status).toBe(200);
    await settled(accountId);
    const rows = rowsOf(await activityWhen(client, (h) => rowsOf(h).length === 4));
    for (const [api, res] of answers) {
      const row = rows.find((r) => r.id === res.headers.get("x-generation-id"))!;
      expect(row.text).toMatch(new RegExp(` ${api}\\b`));
    }
  });

  it("a request that fell back shows each attempt: model, carrier, status", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 2 });
    const { key } = await createKeyViaConsole(client, "fallback");
    // mistral-nemo's carriers (deepinfra, nebius) fail; qwen3-32b's first carrier (groq) serves.
    const res = await chat(key, {
      model: "mistralai/mistral-nemo",
      models: ["qwen/qwen3-32b"],
      ...user("x [sim carrier=deepinfra status=503] [sim carrier=nebius status=503]"),
    });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    await settled(accountId);
    const html = await activityWhen(client, (h) => rowsOf(h).length === 1);
    const row = rowsOf(html)[0]!;
    expect(row.id).toBe(id);
    expect(row.text).toContain("3 attempts");
    expect(row.text).toMatch(
      /mistralai\/mistral-nemo at DeepInfra: 503 after \d+ ms\s*mistralai\/mistral-nemo at Nebius: 503 after \d+ ms\s*qwen\/qwen3-32b at Groq: 200 after \d+ ms/,
    );
  });

  it("pages through many requests without gaps or repeats, and back", async () => {
    const { client, accountId } = await signUp();
    const start = Date.now() - 3 * 3600_000;
    await insertGenerations(accountId, 120, start);
    const seen: string[] = [];
    let html = (await client.page("/activity")).html;
    const pages: string[][] = [];
    for (;;) {
      const ids = rowsOf(html).map((r) => r.id);
      pages.push(ids);
      seen.push(...ids);
      const older = /href="\/activity\?before=([^"]+)">Older/.exec(html)?.[1];
      if (!older) break;
      html = (await client.page(`/activity?before=${older}`)).html;
    }
    expect(pages.map((p) => p.length)).toEqual([50, 50, 20]);
    expect(new Set(seen).size).toBe(120);
    const expected = Array.from({ length: 120 }, (_, i) => `gen-seed${accountId.slice(5)}${String(119 - i).padStart(4, "0")}`);
    expect(seen).toEqual(expected);
    // Back from the last page: "Newer" shows the page before it.
    const newer = /href="\/activity\?after=([^"]+)">← Newer/.exec(html)?.[1];
    expect(newer).toBeDefined();
    const back = rowsOf((await client.page(`/activity?after=${newer}`)).html).map((r) => r.id);
    expect(back).toEqual(pages[1]);
    // A malformed cursor is ignored (first page).
    expect(rowsOf((await client.page("/activity?before=';drop table")).html).map((r) => r.id)).toEqual(pages[0]);
  });

  it("the chart sums each UTC day's spend over the last 30 days", async () => {
    const { client, accountId } = await signUp();
    const today = Math.floor(Date.now() / DAY) * DAY;
    await insertGenerations(accountId, 3, today - 2 * DAY + 1000, 2_000_000); // 3 × $0.002 two days ago
    await env.DB.prepare(
      "INSERT INTO generations (id, account_id, key_hash, model, streamed, created_at, tokens_prompt, tokens_completion, tokens_reasoning, cost_nano, status) VALUES (?, ?, 'k', 'm', 0, ?, 0, 0, 0, 500000000, 200)",
    )
      .bind(`gen-old${accountId.slice(5)}`, accountId, today - 40 * DAY)
      .run();
    const html = (await client.page("/activity")).html;
    const day = new Date(today - 2 * DAY).toISOString().slice(0, 10);
    expect(html).toContain(`<title>${day}: $0.006 (3 requests)</title>`);
    expect(html.match(/<rect class="bar"/g)).toHaveLength(1); // the 40-day-old request is outside the chart
    expect(textOf(html)).toContain(`${day} 3 $0.006`);
  });

  it("never shows another account's requests", async () => {
    const other = await newAccount(1);
    const res = await chat(other.key, { model: "openai/gpt-oss-20b", ...user("secret business [sim tokens=3]") });
    const otherId = ((await res.json()) as { id: string }).id;
    await settled(other.accountId);
    // Wait until the other account's record is in D1, then look from a fresh account.
    const deadline = Date.now() + 5000;
    while (!(await env.DB.prepare("SELECT 1 FROM generations WHERE id = ?").bind(otherId).first())) {
      if (Date.now() > deadline) throw new Error("record never reached D1");
      await new Promise((r) => setTimeout(r, 20));
    }
    const { client } = await signUp();
    const html = (await client.page("/activity")).html;
    expect(html).not.toContain(otherId);
    expect(rowsOf(html)).toEqual([]);
    expect(html).not.toContain('<rect class="bar"');
    expect(textOf(html)).toContain("No requests yet.");
  });
});
