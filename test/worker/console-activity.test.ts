import { describe, it, expect } from "vitest";
import { env, runInDurableObject } from "cloudflare:test";
import { syntheticRecord } from "./synthetic-record";
import { settleRecords } from "./ledger-db";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import { admin, call, chat, newAccount, recorded, settled, storedRecords, user } from "./helpers";
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

/** One record with the given tokens and cost, made at `at`. */
function insertGeneration(accountId: string, id: string, at: number, prompt: number, completion: number, costNano: number) {
  return env.DB.prepare(
    "INSERT INTO generations (id, account_id, key_hash, model, streamed, created_at, tokens_prompt, tokens_completion, tokens_reasoning, cost_nano, status) VALUES (?, ?, 'k', 'openai/gpt-oss-20b', 0, ?, ?, ?, 0, ?, 200)",
  )
    .bind(`${id}${accountId.slice(5)}`, accountId, at, prompt, completion, costNano)
    .run();
}

/**
 * The chart as drawn: its caption, the y axis labels top to bottom, and each bar (oldest first) with its
 * tooltip and its height as a share of the axis (0 at the bottom line, 1 at the top one).
 */
function chartOf(html: string) {
  const scale = /<svg class="chart-axis"[\s\S]*?<\/svg>/.exec(html)![0];
  const svg = /<svg class="chart-plot"[\s\S]*?<\/svg>/.exec(html)![0];
  const ys = [...svg.matchAll(/<line class="(?:axis|grid)" x1="[^"]+" y1="([^"]+)"/g)].map((m) => Number(m[1]));
  const [bottom, top] = [ys[0]!, ys[1]!]; // the bottom line, then the top one (the mid gridline after them)
  return {
    caption: textOf(/<figcaption[^>]*>([\s\S]*?)<\/figcaption>/.exec(html)![1]!).trim(),
    axis: [...scale.matchAll(/<text [^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!.trim()),
    lines: ys.length,
    /** Each bar's left edge and width, in % of the plot's width (the card's, less the scale). */
    columns: [...svg.matchAll(/<rect class="bar" x="([^"]+)"[^>]* width="([^"]+)"/g)].map((m) => [m[1]!, m[2]!]),
    bars: [...svg.matchAll(/<rect class="bar"[^>]* height="([^"]+)"><title>([^<]*)<\/title>/g)].map((m) => ({
      share: Number(m[1]) / (bottom - top),
      title: m[2]!,
    })),
    plotHeight: bottom - top,
  };
}

/** A link's target on the page, by its text (with `&amp;` read as `&`). */
function hrefOf(html: string, text: string): string {
  const m = new RegExp(`<a href="([^"]*)">${text}</a>`).exec(html);
  if (!m) throw new Error(`no link "${text}"`);
  return m[1]!.replaceAll("&amp;", "&");
}

describe("/activity", () => {
  it("the newest page shows records still in the account's ledger (settled, not yet stored), within the filter; older pages do not", async () => {
    const { client, accountId } = await signUp();
    const now = Date.now();
    await insertGenerations(accountId, 60, now - 3_600_000); // stored: more than a page
    const pending = [0, 1].map((i) => syntheticRecord(accountId, now - 1000 + i, i, { model: "openai/gpt-oss-20b" }));
    // Settled in the ledger with no alarm asked for: they stay there, as a quiet account's do for minutes.
    await runInDurableObject(env.LEDGER.get(env.LEDGER.idFromName(accountId)), (instance: LedgerObject) => void settleRecords(instance["db"], pending));
    const page = await client.page("/activity");
    const rows = rowsOf(page.html);
    expect(rows).toHaveLength(50);
    expect(rows.slice(0, 2).map((r) => r.id)).toEqual([pending[1]!.id, pending[0]!.id]);
    expect(rows[2]!.id).toBe(`gen-seed${accountId.slice(5)}0059`);
    // The next page starts after the last one shown: nothing skipped, nothing twice.
    const older = rowsOf((await client.page(hrefOf(page.html, "Older →"))).html);
    expect(older[0]!.id).toBe(`gen-seed${accountId.slice(5)}0011`);
    expect(new Set([...rows, ...older].map((r) => r.id)).size).toBe(62);
    // A filter the pending records do not match leaves them out.
    const other = rowsOf((await client.page("/activity?model=meta-llama/llama-3.1-8b-instruct")).html);
    expect(other).toEqual([]);
  });

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
    await recorded(accountId, 2); // stored: the list shows records still in the ledger, the chart only stored ones

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
    // No carrier served it: the row says so rather than naming a carrier "none".
    expect(rows[0]!.text).toContain("— (no carrier served)");
    expect(rows[0]!.text).not.toContain("chat none");

    // The chart: one bar today, its tooltip and text alternative carrying today's spend.
    const today = new Date().toISOString().slice(0, 10);
    const bars = html.match(/<rect class="bar"/g) ?? [];
    expect(bars).toHaveLength(1);
    expect(html).toContain(`<title>${today}: ${costText} (2 requests, ${okBody.usage.prompt_tokens} → ${okBody.usage.completion_tokens} tokens)</title>`);
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
    expect(html).toContain(`<title>${day}: $0.006 (3 requests, 3 → 6 tokens)</title>`);
    expect(html.match(/<rect class="bar"/g)).toHaveLength(1); // the 40-day-old request is outside the chart
    // Placed in % of the plot's width, so the bars span the card on any screen: the 28th of 30 slots, 70 % of it wide.
    expect(chartOf(html).columns).toEqual([["90.5%", "2.33%"]]);
    expect(textOf(html)).toContain(`${day} 3 3 → 6 $0.006`);
  });

  it("the hour view sums each UTC hour of the last 48, with tokens; it keeps the filter and the list pages keep the view", async () => {
    const { client, accountId } = await signUp();
    const HOUR = 3_600_000;
    const thisHour = Math.floor(Date.now() / HOUR) * HOUR;
    await insertGenerations(accountId, 2, thisHour - 3 * HOUR + 1000, 1_000_000); // 2 × $0.001 three hours ago
    await env.DB.prepare(
      "INSERT INTO generations (id, account_id, key_hash, model, streamed, created_at, tokens_prompt, tokens_completion, tokens_reasoning, cost_nano, status) VALUES (?, ?, 'k', 'm', 0, ?, 0, 0, 0, 9000000, 200)",
    )
      .bind(`gen-hour-old${accountId.slice(5)}`, accountId, thisHour - 50 * HOUR)
      .run(); // outside the 48 hours
    const html = (await client.page("/activity?view=hour")).html;
    const hour = `${new Date(thisHour - 3 * HOUR).toISOString().slice(0, 13).replace("T", " ")}:00`;
    expect(html).toContain("Hourly spend, last 48 hours (UTC)");
    expect(html).toContain(`<title>${hour}: $0.002 (2 requests, 2 → 4 tokens)</title>`);
    expect(html.match(/<rect class="bar"/g)).toHaveLength(1);
    expect(html).toContain('<input type="hidden" name="view" value="hour"/>');
    // The day view still counts all three (the 50-hour-old one falls within 30 days).
    expect((await client.page("/activity")).html).toContain("Daily spend, last 30 days (UTC)");
  });

  it("the metric switch draws requests or tokens (in + out) as the bars, each on its own round axis; spend by default and for any other value", async () => {
    const { client, accountId } = await signUp();
    const today = Math.floor(Date.now() / DAY) * DAY;
    const twoDaysAgo = new Date(today - 2 * DAY).toISOString().slice(0, 10);
    const yesterday = new Date(today - DAY).toISOString().slice(0, 10);
    await insertGenerations(accountId, 3, today - 2 * DAY + 1000, 2_000_000); // 3 requests, 1 → 2 tokens and $0.002 each
    await insertGeneration(accountId, "gen-big", today - DAY + 1000, 1_200_000, 34_567, 500_000); // 1 request, 1,234,567 tokens, $0.0005
    const titles = [`${twoDaysAgo}: $0.006 (3 requests, 3 → 6 tokens)`, `${yesterday}: $0.0005 (1 request, 1,200,000 → 34,567 tokens)`];
    // Each bar stands at its figure's share of the axis top (to within the one pixel a bar is at least).
    const expectBars = (chart: ReturnType<typeof chartOf>, shares: number[]) => {
      expect(chart.bars.map((b) => b.title)).toEqual(titles); // every tooltip carries spend, requests and tokens
      chart.bars.forEach((b, i) => expect(Math.abs(b.share - shares[i]!) * chart.plotHeight).toBeLessThanOrEqual(1));
    };

    // Requests: 3 and 1; the axis tops out at 4 so that its mid gridline is a whole 2.
    const requests = (await client.page("/activity?metric=requests")).html;
    const r = chartOf(requests);
    expect(r.caption).toBe("Daily requests, last 30 days (UTC)");
    expect(r.axis).toEqual(["4", "2", "0"]);
    expectBars(r, [3 / 4, 1 / 4]);
    expect(requests).toContain('<strong aria-current="true">Requests</strong>');
    expect(textOf(requests)).toContain(`4 requests between`);
    expect(textOf(requests)).toContain(`the most in one day was 3 on ${twoDaysAgo}.`);
    expect(requests).toContain("Daily requests, last 30 days (UTC), with requests, tokens and spend</caption>");

    // Tokens: prompt + completion, 9 and 1,234,567; the axis tops out at 1.3M.
    const tokens = (await client.page("/activity?metric=tokens")).html;
    const t = chartOf(tokens);
    expect(t.caption).toBe("Daily tokens (in + out), last 30 days (UTC)");
    expect(t.axis).toEqual(["1.3M", "650K", "0"]);
    expectBars(t, [9 / 1_300_000, 1_234_567 / 1_300_000]);
    expect(tokens).toContain('<strong aria-current="true">Tokens</strong>');
    expect(textOf(tokens)).toContain(`1,234,576 tokens (in + out) in 4 requests between`);
    expect(textOf(tokens)).toContain(`the most in one day was 1,234,567 on ${yesterday}.`);
    expect(textOf(tokens)).toContain(`${yesterday} 1 1,200,000 → 34,567 1,234,567 $0.0005`); // the table carries the total too
    expect(tokens).toContain("Daily tokens (in + out), last 30 days (UTC), with requests, tokens and spend</caption>");

    // Spend, the default, and what any other value falls back to.
    for (const path of [
      "/activity",
      "/activity?metric=spend",
      "/activity?metric=bogus",
      "/activity?metric=Tokens",
      "/activity?metric=__proto__",
      "/activity?metric=",
    ]) {
      const { status, html } = await client.page(path);
      expect(status, path).toBe(200);
      const s = chartOf(html);
      expect(s.caption, path).toBe("Daily spend, last 30 days (UTC)");
      expect(s.axis, path).toEqual(["$0.006", "$0.003", "$0"]);
      expectBars(s, [1, 500_000 / 6_000_000]);
      expect(html, path).toContain('<strong aria-current="true">Spend</strong>');
      expect(html, path).not.toContain('name="metric"');
      expect(hrefOf(html, "Tokens"), path).toBe("/activity?metric=tokens");
    }
  });

  it("the metric survives the filter form, the view switch and paging, as the view does", async () => {
    const { client, accountId } = await signUp();
    await insertGenerations(accountId, 60, Date.now() - 3_600_000); // more than a page
    const model = "openai/gpt-oss-20b";
    const html = (await client.page(`/activity?view=hour&metric=tokens&model=${encodeURIComponent(model)}`)).html;
    expect(chartOf(html).caption).toBe("Hourly tokens (in + out), last 48 hours (UTC)");
    expect(chartOf(html).bars.length).toBeGreaterThan(0);

    // The filter form carries the view and the metric; submitting it (as a browser does: every field) keeps both.
    const form = /<form method="get" action="\/activity"[\s\S]*?<\/form>/.exec(html)![0];
    const hidden = [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]);
    expect(hidden).toEqual([
      ["view", "hour"],
      ["metric", "tokens"],
    ]);
    const submitted = new URLSearchParams([...hidden, ["from", ""], ["to", ""], ["key", ""], ["model", model]]);
    const filtered = (await client.page(`/activity?${submitted}`)).html;
    expect(chartOf(filtered).caption).toBe("Hourly tokens (in + out), last 48 hours (UTC)");
    // The CSV does not need it.
    expect(filtered).toContain(`href="/activity.csv?model=${encodeURIComponent(model)}"`);

    // The view switch keeps the metric (and the filter); the metric switch keeps the view.
    expect(hrefOf(filtered, "Days")).toBe(`/activity?model=${encodeURIComponent(model)}&metric=tokens`);
    expect(chartOf((await client.page(hrefOf(filtered, "Days"))).html).caption).toBe("Daily tokens (in + out), last 30 days (UTC)");
    expect(hrefOf(filtered, "Requests")).toBe(`/activity?model=${encodeURIComponent(model)}&view=hour&metric=requests`);
    expect(hrefOf(filtered, "Spend")).toBe(`/activity?model=${encodeURIComponent(model)}&view=hour`);
    expect(filtered).toContain('<strong aria-current="true">Hours</strong>');

    // Paging keeps both: older, then newer and newest.
    const older = hrefOf(filtered, "Older →");
    expect(older).toMatch(/[?&]view=hour&metric=tokens&before=/);
    const page2 = (await client.page(older)).html;
    expect(rowsOf(page2)).toHaveLength(10);
    expect(chartOf(page2).caption).toBe("Hourly tokens (in + out), last 48 hours (UTC)");
    expect(hrefOf(page2, "← Newer")).toMatch(/[?&]view=hour&metric=tokens&after=/);
    expect(hrefOf(page2, "Newest")).toBe(`/activity?model=${encodeURIComponent(model)}&view=hour&metric=tokens`);
  });

  it("never shows another account's requests", async () => {
    const other = await newAccount(1);
    const res = await chat(other.key, { model: "openai/gpt-oss-20b", ...user("secret business [sim tokens=3]") });
    const otherId = ((await res.json()) as { id: string }).id;
    await settled(other.accountId);
    // Wait until the other account's record is stored, then look from a fresh account.
    expect((await storedRecords(other.accountId, 1)).map((g) => g.id)).toEqual([otherId]);
    const { client } = await signUp();
    const html = (await client.page("/activity")).html;
    expect(html).not.toContain(otherId);
    expect(rowsOf(html)).toEqual([]);
    expect(html).not.toContain('<rect class="bar"');
    expect(textOf(html)).toContain("No requests yet.");
    // An all-zero chart has one line and one label on its scale, its zero ("$0.00" no longer drawn over "$0").
    expect(chartOf(html).axis).toEqual(["$0"]);
    expect(chartOf(html).lines).toBe(1);
    expect(chartOf((await client.page("/activity?metric=requests")).html).axis).toEqual(["0"]);
  });

  it("breakdowns by model, key and carrier and the CSV add up to the records; filters narrow all of it; no other account's rows", async () => {
    const { client, accountId } = await signUp();
    const a = await admin<{ hash: string; name: string }>("/keys", { account: accountId, label: "alpha" });
    const b = await admin<{ hash: string; name: string }>("/keys", { account: accountId, label: "beta" });
    const other = await newAccount(1);
    const day = (d: string, h = 12) => Date.parse(`${d}T${String(h).padStart(2, "0")}:00:00Z`);
    // [id, key, model, provider, created, prompt, completion, cached, cost nano, status]
    const rows: Array<[string, string, string, string | null, number, number, number, number, number, number]> = [
      ["gen-bd1", a.hash, "openai/gpt-oss-20b", "Groq", day("2026-03-01"), 100, 10, 0, 1_000, 200],
      ["gen-bd2", a.hash, "openai/gpt-oss-20b", "Cerebras", day("2026-03-02"), 200, 20, 50, 2_500, 200],
      ["gen-bd3", b.hash, "anthropic/claude-haiku-4.5", "Anthropic", day("2026-03-02", 23), 300, 30, 100, 7_000, 200],
      ["gen-bd4", b.hash, "anthropic/claude-haiku-4.5", null, day("2026-03-03"), 0, 0, 0, 0, 503],
      ["gen-bd5", a.hash, "meta-llama/llama-3.1-8b-instruct", "Groq", day("2026-03-04"), 5, 5, 0, 42, 200],
    ];
    const insert = (
      id: string,
      account: string,
      key: string,
      model: string,
      provider: string | null,
      at: number,
      p: number,
      c: number,
      cached: number,
      cost: number,
      status: number,
    ) =>
      env.DB.prepare(
        "INSERT INTO generations (id, account_id, key_hash, model, provider_name, app, streamed, created_at, latency_ms, generation_time_ms, tokens_prompt, tokens_completion, tokens_reasoning, tokens_cached, cost_nano, finish_reason, status) VALUES (?, ?, ?, ?, ?, 'app, \"quoted\"', 0, ?, 10, 20, ?, ?, 0, ?, ?, 'stop', ?)",
      ).bind(`${id}-${accountId.slice(5)}`, account, key, model, provider, at, p, c, cached, cost, status);
    await env.DB.batch([
      ...rows.map((r) => insert(r[0], accountId, ...(r.slice(1) as [string, string, string | null, number, number, number, number, number, number]))),
      insert("gen-bdx", other.accountId, other.hash, "openai/gpt-oss-20b", "Groq", day("2026-03-02"), 999, 999, 0, 999_999, 200),
    ]);

    const tables = (html: string) =>
      Object.fromEntries(
        ["model", "key", "carrier"].map((by) => {
          const table = new RegExp(`<table id="breakdown-${by}"[^>]*>([\\s\\S]*?)</table>`).exec(html)![1]!;
          const trs = [...table.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].slice(1).map((m) => textOf(m[1]!).trim().replace(/\s+/g, " "));
          return [by, trs];
        }),
      );
    const all = tables((await client.page("/activity")).html);
    expect(all.model).toEqual([
      "anthropic/claude-haiku-4.5 2 300 30 100 $0.000007",
      "openai/gpt-oss-20b 2 300 30 50 $0.0000035",
      "meta-llama/llama-3.1-8b-instruct 1 5 5 0 $0.000000042",
      "Total 5 605 65 150 $0.000010542",
    ]);
    expect(all.key).toEqual(["beta 2 300 30 100 $0.000007", "alpha 3 305 35 50 $0.000003542", "Total 5 605 65 150 $0.000010542"]);
    expect(all.carrier).toEqual([
      "Anthropic 1 300 30 100 $0.000007",
      "Cerebras 1 200 20 50 $0.0000025",
      "Groq 2 105 15 0 $0.000001042",
      "— (no carrier served) 1 0 0 0 $0.00", // a request no carrier served, named as such (not a carrier called "none")
      "Total 5 605 65 150 $0.000010542",
    ]);

    // A day range (UTC, inclusive) and a key narrow the list, the breakdowns and the CSV alike.
    const query = `?from=2026-03-02&to=2026-03-03&key=${a.hash}`;
    const narrowed = await client.page(`/activity${query}`);
    expect(rowsOf(narrowed.html).map((r) => r.id)).toEqual([`gen-bd2-${accountId.slice(5)}`]);
    expect(tables(narrowed.html).model).toEqual(["openai/gpt-oss-20b 1 200 20 50 $0.0000025", "Total 1 200 20 50 $0.0000025"]);
    expect(narrowed.html).toContain(`href="/activity.csv${query.replaceAll("&", "&amp;")}"`);
    // The days are typed and shown as the page writes them, yyyy-mm-dd in UTC (a date picker would show the browser's mm/dd/yyyy).
    const dayInputs = [...narrowed.html.matchAll(/<input [^>]*name="(from|to)"[^>]*>/g)].map((m) => m[0]);
    expect(dayInputs).toHaveLength(2);
    for (const input of dayInputs) {
      expect(input).toContain('type="text"');
      expect(input).toContain('placeholder="yyyy-mm-dd"');
    }
    expect(dayInputs[0]).toContain('value="2026-03-02"');
    expect(textOf(narrowed.html)).toContain("From (UTC)");
    expect(textOf(narrowed.html)).toContain("To (UTC)");
    // A day in another format is not applied, and the page says so.
    const slip = await client.page(`/activity?from=03%2F02%2F2026&to=2026-03-03`);
    expect(textOf(slip.html)).toContain("“03/02/2026” is not a day written yyyy-mm-dd (like 2026-03-01), so the From date is left out of the filter.");
    expect(rowsOf(slip.html).map((r) => r.id)).toEqual([
      `gen-bd4-${accountId.slice(5)}`,
      `gen-bd3-${accountId.slice(5)}`,
      `gen-bd2-${accountId.slice(5)}`,
      `gen-bd1-${accountId.slice(5)}`,
    ]);

    const csv = await client.page(`/activity.csv`);
    expect(csv.status).toBe(200);
    expect(csv.res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const lines = csv.html.trimEnd().split("\r\n");
    // Every text cell quoted; the figures bare, so a spreadsheet reads them as numbers.
    expect(lines[0]).toBe('"time","generation_id","model","api","provider","key","app","tokens_in","tokens_out","cached_tokens","cost_usd","status"');
    expect(lines.slice(1)).toEqual(
      rows.map(
        (r) =>
          `"${new Date(r[4]).toISOString()}","${r[0]}-${accountId.slice(5)}","${r[2]}","chat","${r[3] ?? ""}","${r[1] === a.hash ? "alpha" : "beta"}","app, ""quoted""",${r[5]},${r[6]},${r[7]},${(r[8] / 1e9).toFixed(9).replace(/0+$/, "").replace(/\.$/, "")},${r[9]}`,
      ),
    );
    expect(csv.html).not.toContain("gen-bdx");
    const narrowCsv = (await client.page(`/activity.csv${query}`)).html.trimEnd().split("\r\n");
    expect(narrowCsv).toHaveLength(2);
    expect(narrowCsv[1]).toContain(`gen-bd2-${accountId.slice(5)}`);
  });

  it("the CSV runs no formula in any spreadsheet: every text cell quoted, and a formula at a cell's start or after a comma, semicolon, tab or line break (ASCII or full-width) led by a '", async () => {
    const { client, accountId } = await signUp();
    const key = await admin<{ hash: string }>("/keys", { account: accountId, label: '=HYPERLINK("http://x.test","y")' });
    // [X-Title as sent, the app cell as exported]
    const apps: Array<[string, string]> = [
      // A `;`-separated spreadsheet splits this into "MyApp" and a cell starting with `=`.
      ["MyApp;=cmd|' /C calc'!A0", `"MyApp;'=cmd|' /C calc'!A0"`],
      ["\uFF1D1+1", `"'\uFF1D1+1"`], // a leading full-width ＝
      ["=1+1", `"'=1+1"`],
      ["+1", `"'+1"`],
      ["-1", `"'-1"`],
      ["@SUM(A1)", `"'@SUM(A1)"`],
      ["App,=1", `"App,'=1"`],
      ["App\t+1", `"App\t'+1"`],
      ["App\n-1", `"App\n'-1"`],
      ["App;  \uFF0B1", `"App;  '\uFF0B1"`], // spaces before a full-width ＋
      ["App; \uFF20x", `"App; '\uFF20x"`],
      ["\tApp", `"'\tApp"`],
      ["My-App 2+2=4 a@b", `"My-App 2+2=4 a@b"`], // not after a separator: left as it is
    ];
    const at = Date.parse("2026-03-05T12:00:00Z");
    await env.DB.batch(
      apps.map(([app], i) =>
        env.DB.prepare(
          "INSERT INTO generations (id, account_id, key_hash, model, provider_name, app, streamed, created_at, tokens_prompt, tokens_completion, tokens_reasoning, tokens_cached, cost_nano, status) VALUES (?, ?, ?, 'openai/gpt-oss-20b', 'Groq', ?, 0, ?, 1, 2, 0, 0, 1000, 200)",
        ).bind(`gen-csv${i}-${accountId.slice(5)}`, accountId, key.hash, app, at + i * 1000),
      ),
    );
    const csv = await client.page("/activity.csv");
    expect(csv.status).toBe(200);
    const expected = apps.map(
      ([, cell], i) =>
        `"${new Date(at + i * 1000).toISOString()}","gen-csv${i}-${accountId.slice(5)}","openai/gpt-oss-20b","chat","Groq","'=HYPERLINK(""http://x.test"",""y"")",${cell},1,2,0,0.000001,200\r\n`,
    );
    expect(csv.html).toBe(
      '"time","generation_id","model","api","provider","key","app","tokens_in","tokens_out","cached_tokens","cost_usd","status"\r\n' + expected.join(""),
    );
  });
});
