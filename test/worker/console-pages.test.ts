import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { refreshHealth } from "../../src/health/health-snapshot";
import { forgetHealthMemo } from "../../src/health/health-memo";
import { flushGenerations } from "../../src/db/generations";
import { call, chat, newAccount, settled, user } from "./helpers";
import { ConsoleClient, signUp, textOf } from "./console-helpers";
import bundled from "../../catalog.json";

const PUBLIC_PAGES = ["/", "/models", "/models/openai/gpt-oss-20b", "/sign-in", "/sign-up"];
const ACCOUNT_PAGES = [
  "/settings/keys",
  "/settings/credits",
  "/activity",
  "/settings/presets",
  "/settings/byok",
  "/settings/observability",
  "/settings/observability/x",
  `/settings/keys/delete?key=${"a".repeat(64)}`,
];
const ACCOUNT_FORMS = [
  "/settings/keys",
  "/settings/keys/disable",
  "/settings/keys/enable",
  "/settings/keys/delete",
  "/settings/credits",
  "/settings/presets",
  "/settings/presets/x",
  "/settings/presets/x/delete",
  "/settings/byok",
  "/settings/byok/x/delete",
  "/settings/observability",
  "/settings/observability/x",
  "/settings/observability/x/delete",
  "/sign-out",
];

function expectSecurityHeaders(res: Response, html: string) {
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("form-action 'self'");
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).not.toContain("unsafe-eval");
  // Every inline script carries the response's nonce.
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
  expect(nonce).toBeTruthy();
  for (const tag of html.match(/<script[^>]*>/g) ?? []) expect(tag).toContain(`nonce="${nonce}"`);
  expect(html).not.toMatch(/ on[a-z]+="/); // no inline event handlers
  expect(html).not.toMatch(/ style="/); // no inline styles
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("referrer-policy")).toBe("same-origin");
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
}

describe("every page", () => {
  it("public and account pages send the security headers, a fresh nonce each time, and are valid-looking HTML with a language and a title", async () => {
    const { client } = await signUp();
    const nonces = new Set<string>();
    let pages = 0;
    for (const path of [...PUBLIC_PAGES.filter((p) => !p.startsWith("/sign")), ...ACCOUNT_PAGES.slice(0, 4)]) {
      const { res, html, status } = await client.page(path);
      expect(status, path).toBe(200);
      expectSecurityHeaders(res, html);
      expect(html.startsWith("<!doctype html>")).toBe(true);
      expect(html).toContain('<html lang="en">');
      expect(html).toMatch(/<title>[^<]+ · Switchyard<\/title>/);
      expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1"/>');
      expect(html).toContain('<a class="skip-link" href="#main">');
      nonces.add(/nonce-([^']+)/.exec(res.headers.get("content-security-policy")!)![1]!);
      pages++;
    }
    const anon = new ConsoleClient();
    for (const path of ["/sign-in", "/sign-up", "/nope"]) {
      const { res, html } = await anon.page(path);
      expectSecurityHeaders(res, html);
      nonces.add(/nonce-([^']+)/.exec(res.headers.get("content-security-policy")!)![1]!);
      pages++;
    }
    expect(nonces.size).toBe(pages);
  });

  it("every form field has a label", async () => {
    const { client } = await signUp();
    for (const path of ["/sign-in", "/sign-up", "/models", "/settings/keys", "/settings/credits", "/settings/observability"]) {
      const html = path.startsWith("/sign") ? (await new ConsoleClient().page(path)).html : (await client.page(path)).html;
      const ids = [...html.matchAll(/<(?:input|select)(?![^>]*type="hidden")[^>]*\sid="([^"]+)"/g)].map((m) => m[1]!);
      expect(ids.length, path).toBeGreaterThan(0);
      for (const id of ids) expect(html, `${path} #${id}`).toContain(`<label for="${id}"`);
    }
  });

  it("form bodies over 16 KiB are refused before they are read", async () => {
    const anon = new ConsoleClient();
    const res = await anon.post("/sign-in", { email: "a@example.test", password: "x".repeat(20_000) }, { from: "/sign-in" });
    expect(res.status).toBe(413);
  });

  it("the stylesheet and icon are served from our origin", async () => {
    const css = await call("/assets/console.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toContain(":focus-visible");
    expect((await call("/favicon.svg")).headers.get("content-type")).toBe("image/svg+xml");
  });
});

describe("sign-in required", () => {
  it("account pages redirect to sign-in (and back after), without showing anything", async () => {
    const anon = new ConsoleClient();
    for (const path of ACCOUNT_PAGES) {
      const res = await anon.get(path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe(`/sign-in?next=${encodeURIComponent(path.split("?")[0]!)}`);
      expect(await res.text()).toBe("");
    }
  });

  it("account forms do nothing without a session, even with a token", async () => {
    const a = await newAccount(1);
    const anon = new ConsoleClient();
    for (const path of ACCOUNT_FORMS) {
      const res = await anon.post(path, { key: a.hash, name: "x", amount: "10" }, { csrf: "0".repeat(64) });
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe("/sign-in");
    }
    expect(await env.DB.prepare("SELECT disabled FROM api_keys WHERE hash = ?").bind(a.hash).first()).toEqual({ disabled: 0 });
  });

  it("a forged session cookie is ignored and cleared", async () => {
    const anon = new ConsoleClient();
    anon.cookies.set("__Host-sy_session", "A".repeat(43));
    const res = await anon.get("/settings/keys");
    expect(res.status).toBe(303);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("__Host-sy_session=;"))).toBe(true);
  });
});

describe("404s", () => {
  it("console 404s are HTML; API and admin 404s stay JSON", async () => {
    const page = await call("/no/such/page");
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toContain("text/html");
    for (const path of ["/api/v1/nope", "/api/nope", "/api"]) {
      const res = await call(path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 404 } });
    }
    const adminRes = await call("/admin/nope", { headers: { authorization: "Bearer test-admin-token" } });
    expect(adminRes.status).toBe(404);
    expect(await adminRes.json()).toMatchObject({ error: { code: 404 } });
    const unknownModel = await call("/models/nobody/nothing");
    expect(unknownModel.status).toBe(404);
    expect(textOf(await unknownModel.text())).toContain("There is no model nobody/nothing in the catalog.");
  });

  it("the API's own responses carry none of the console's headers", async () => {
    const res = await call("/api/v1/models");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBeNull();
    expect(res.headers.get("set-cookie")).toBeNull();
  });
});

describe("home page", () => {
  it("says what the service is, shows the base URL of this origin, an openai example and links to the catalog and sign-in", async () => {
    const { html } = await new ConsoleClient().page("/");
    const text = textOf(html);
    // What the catalog and the APIs are now: first-party and open models; chat, messages, responses, embeddings.
    expect(text).toContain("One API for first-party and open models");
    expect(text).toContain("routes chat, messages, responses and embeddings requests");
    expect(text).not.toContain("OpenAI-style chat completion requests");
    expect(text).not.toContain("many open models");
    const apis = /<ul id="apis">([\s\S]*?)<\/ul>/.exec(html)![1]!;
    expect([...apis.matchAll(/<code>POST ([^<]+)<\/code>/g)].map((m) => m[1])).toEqual(["/chat/completions", "/messages", "/responses", "/embeddings"]);
    expect(html).toContain('<code id="anthropic-base-url">https://switchyard.test/api</code>');
    expect(html).toContain('<code id="base-url">https://switchyard.test/api/v1</code>');
    expect(text).toContain('import OpenAI from "openai"');
    expect(text).toContain('baseURL: "https://switchyard.test/api/v1"');
    expect(text).toContain(`model: "${bundled.default_model}"`);
    expect(html).toContain('href="/models"');
    expect(html).toContain('href="/sign-in"');
    expect(html).toContain('href="/sign-up"');
    expect(text).toContain(`${bundled.models.length} models across ${bundled.providers.length} carriers`);
  });
});

describe("models", () => {
  it("lists every catalog model with context, prices per 1M in and out, and modalities", async () => {
    const { html } = await new ConsoleClient().page("/models");
    const rows = html.match(/<tr><th scope="row">/g) ?? [];
    expect(rows).toHaveLength(bundled.models.length);
    for (const m of bundled.models) expect(html).toContain(`href="/models/${m.id}"`);
    // gpt-oss-20b: cheapest carrier first (DeepInfra at $0.03 in, $0.14 out per 1M).
    const row = /<a href="\/models\/openai\/gpt-oss-20b">[\s\S]*?<\/tr>/.exec(html)![0];
    expect(textOf(row)).toMatch(/131K \$0\.03 \$0\.14 text → text/);
    expect(html).toContain('<span class="tag">Free</span>');
  });

  it("searches by id or name and sorts; the active column says so", async () => {
    const client = new ConsoleClient();
    const { html } = await client.page("/models?q=llama");
    const ids = [...html.matchAll(/<code class="muted">([^<]+)<\/code>/g)].map((m) => m[1]!);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => id.includes("llama"))).toBe(true);
    expect(ids).toHaveLength(bundled.models.filter((m) => m.id.includes("llama") || m.name.toLowerCase().includes("llama")).length);
    expect(textOf(html)).toContain(`of ${bundled.models.length} models match “llama”`);

    const byContext = (await client.page("/models?sort=context")).html;
    const contexts = [...byContext.matchAll(/<td class="num" title="([\d,]+) tokens">/g)].map((m) => Number(m[1]!.replace(/,/g, "")));
    expect(contexts).toEqual([...contexts].sort((a, b) => b - a));
    expect(byContext).toContain('aria-sort="descending"><a href="/models?sort=context">Context ▼</a>');

    const none = await client.page("/models?q=zzzz-no-such-model");
    expect(textOf(none.html)).toContain("No model matches.");
    // Hostile input is escaped, never interpreted.
    const xss = await client.page("/models?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E");
    expect(xss.html).not.toContain("<script>alert(1)</script>");
    expect(xss.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("a model's page lists its carriers with price, context, quantization, data policy, uptime, latency and throughput from recorded attempts", async () => {
    const model = bundled.models.find((m) => m.id === "meta-llama/llama-3.1-8b-instruct")!;
    const served = "Groq";
    // A record as the ledger flushes it: its attempts reach endpoint_attempts, the Cron Trigger's fold reads them.
    const attempt = { model: model.id, provider: "groq", providerName: served, status: 200, at: Date.now() - 1000, latencyMs: 300, tokensPerSecond: 120 };
    await flushGenerations(env.DB, [
      JSON.stringify({
        id: `gen-console-health-${Date.now()}`,
        accountId: "acct_console_health",
        keyHash: "h",
        model: model.id,
        providerName: served,
        streamed: false,
        createdAt: attempt.at,
        tokensPrompt: 1,
        tokensCompletion: 1,
        tokensReasoning: 0,
        costNano: 0,
        status: 200,
        providerResponses: JSON.stringify([attempt]),
      }),
    ]);
    await refreshHealth(env);
    forgetHealthMemo();
    const client = new ConsoleClient();
    const html = (await client.page(`/models/${model.id}`)).html;
    expect(html).toContain(`<h1>${model.name}</h1>`);
    const carrierRows = [...html.matchAll(/<tr><th scope="row">([^<]+)<\/th>([\s\S]*?)<\/tr>/g)];
    expect(carrierRows).toHaveLength(model.endpoints.length);
    const servedRow = carrierRows.find((r) => r[1] === served)!;
    expect(textOf(servedRow[2]!).trim()).toMatch(/ 100% [\d.]+ s [\d.]+ tok\/s$/);
    for (const e of model.endpoints) {
      const name = bundled.providers.find((p) => p.slug === e.provider)!.name;
      const row = carrierRows.find((r) => r[1] === name)!;
      expect(row, name).toBeDefined();
      if (e.quantization) expect(row[2]).toMatch(new RegExp(`<td>${e.quantization}<br\\s*/?>`));
      expect(row[2]).toMatch(/<span class="muted">(Zero retention|Retains, trains|Retains prompts|Does not retain)<\/span><\/td>/);
      if (e.input_price_per_1m > 0)
        expect(row[2]).toContain(`$${e.input_price_per_1m.toFixed(Math.max(2, (String(e.input_price_per_1m).split(".")[1] ?? "").length))}`);
    }
  });
});
