import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, chat, get, newAccount, settled, user } from "./helpers";
import { createKeyViaConsole, keyForm, signUp, textOf } from "./console-helpers";

async function sha256Hex(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

type KeyRow = { hash: string; account_id: string; name: string; label: string; disabled: number; limit_nano: number | null };
const keyRow = (hash: string) => env.DB.prepare("SELECT * FROM api_keys WHERE hash = ?").bind(hash).first<KeyRow>();

describe("/settings/keys", () => {
  it("creates a key and shows it exactly once: in the POST response, never on reload or any later page", async () => {
    const { client, accountId } = await signUp();
    const { key, html } = await createKeyViaConsole(client, "ci runner");
    // Shown once, with a copy button and the warning.
    expect(html.split(key)).toHaveLength(2);
    expect(html).toContain('data-copy="new-key-value"');
    expect(textOf(html)).toContain("this is the only time it is shown");

    // Stored as a hash only, in the account, masked in the list.
    const hash = await sha256Hex(key);
    const row = await keyRow(hash);
    expect(row).toMatchObject({ account_id: accountId, name: "ci runner", label: `${key.slice(0, 12)}...${key.slice(-3)}`, disabled: 0, limit_nano: null });
    const dump = JSON.stringify(await env.DB.prepare("SELECT * FROM api_keys WHERE account_id = ?").bind(accountId).all());
    expect(dump).not.toContain(key.slice(9));

    // It works against the API at once.
    const res = await get("/key", key);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { name: string } }).data.name).toBe("ci runner");

    // Never again: the list, a reload, and every other page show at most the masked label.
    const secret = key.slice(9);
    for (const path of ["/settings/keys", "/settings/keys", "/settings/credits", "/activity", "/", "/models", `/settings/keys/delete?key=${hash}`]) {
      const page = await client.page(path);
      expect(page.status, path).toBe(200);
      expect(page.html, path).not.toContain(secret);
      expect(page.html, path).not.toContain(secret.slice(0, 16));
    }
    const list = (await client.page("/settings/keys")).html;
    expect(list).toContain(row!.label);
    expect(list).not.toContain("new-key-value");
  });

  it("reloading the page that shows a new key (the browser resubmits the form) creates no second key and never shows the key again", async () => {
    const { client, accountId } = await signUp();
    const form = await keyForm(client);
    expect(form.creationToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const fields = { name: "laptop", limit: "", creation_token: form.creationToken };
    const first = await client.post("/settings/keys", fields, { csrf: form.csrf });
    expect(first.status).toBe(200);
    const key = /value="(sk-sy-v1-[0-9a-f]{64})"/.exec(await first.text())![1]!;

    // The reload: the same form, sent again (twice, for a double reload).
    for (let i = 0; i < 2; i++) {
      const again = await client.post("/settings/keys", fields, { csrf: form.csrf });
      expect(again.status).toBe(303);
      expect(again.headers.get("location")).toBe("/settings/keys?done=exists");
      expect(await again.text()).not.toMatch(/sk-sy-v1-/);
    }
    const list = await client.page("/settings/keys?done=exists");
    expect(textOf(list.html)).toContain("That form had already created a key");
    expect(list.html).not.toContain(key.slice(9));
    const rows = await env.DB.prepare("SELECT name FROM api_keys WHERE account_id = ?").bind(accountId).all();
    expect(rows.results).toEqual([{ name: "laptop" }]);
    expect(list.html.match(/<th scope="row">/g)).toHaveLength(1);
  });

  it("two submissions of one form at once create one key; a form without its creation token creates none", async () => {
    const { client, accountId } = await signUp();
    const form = await keyForm(client);
    const fields = { name: "twice", limit: "", creation_token: form.creationToken };
    const statuses = (await Promise.all([1, 2, 3].map(() => client.post("/settings/keys", fields, { csrf: form.csrf })))).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 303, 303]);
    for (const token of ["", "short", "x".repeat(44)]) {
      const res = await client.post("/settings/keys", { name: "no token", limit: "", creation_token: token }, { csrf: form.csrf });
      expect(res.status).toBe(400);
      expect(textOf(await res.text())).toContain("This form has expired");
    }
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ?").bind(accountId).first())!.n).toBe(1);
  });

  it("a hostile key name is shown as text, never as markup", async () => {
    const { client } = await signUp();
    const name = `<img src=x onerror="alert(1)">`;
    const { html } = await createKeyViaConsole(client, name);
    const list = (await client.page("/settings/keys")).html;
    for (const page of [html, list]) {
      expect(page).not.toContain("<img src=x");
      expect(page).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    }
  });

  it("a credit limit is stored exactly in nano-USD and enforced by the API", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 5 });
    const { key } = await createKeyViaConsole(client, "limited", "2.5");
    expect((await keyRow(await sha256Hex(key)))!.limit_nano).toBe(2_500_000_000);
    const page = textOf((await client.page("/settings/keys")).html);
    expect(page).toContain("$2.50 $2.50 left");
    const tiny = await createKeyViaConsole(client, "tiny", "0.000000001");
    expect((await keyRow(await sha256Hex(tiny.key)))!.limit_nano).toBe(1);
    expect((await chat(tiny.key, { model: "openai/gpt-oss-20b", ...user("hi [sim tokens=20]") })).status).toBe(200);
    await settled(accountId);
    expect((await chat(tiny.key, { model: "openai/gpt-oss-20b", ...user("hi again") })).status).toBe(402);
  });

  it("refuses a missing name or a bad limit with field errors, creating nothing", async () => {
    const { client, accountId } = await signUp();
    for (const [name, limit, message] of [
      ["", "", "Give the key a name."],
      ["   ", "", "Give the key a name."],
      ["x".repeat(101), "", "at most 100 characters"],
      ["ok", "-1", "Enter the credit limit"],
      ["ok", "abc", "Enter the credit limit"],
      ["ok", "0", "Enter the credit limit"],
      ["ok", "1000001", "Enter the credit limit"],
      ["ok", "1.0000000001", "Enter the credit limit"],
    ] as const) {
      const res = await client.post("/settings/keys", { name, limit }, { from: "/settings/keys" });
      expect(res.status, `${name}/${limit}`).toBe(400);
      const html = await res.text();
      expect(textOf(html)).toContain(message);
      expect(html).toContain('aria-invalid="true"');
      expect(html).not.toMatch(/sk-sy-v1-[0-9a-f]{64}/);
    }
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ?").bind(accountId).first()).toEqual({ n: 0 });
  });

  it("disable, enable and delete: the API follows at once (401 when disabled or deleted)", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 1 });
    const { key } = await createKeyViaConsole(client, "toggle");
    const hash = await sha256Hex(key);

    const off = await client.post("/settings/keys/disable", { key: hash }, { from: "/settings/keys" });
    expect(off.status).toBe(303);
    expect(off.headers.get("location")).toBe("/settings/keys?done=disabled");
    expect((await keyRow(hash))!.disabled).toBe(1);
    expect((await chat(key, { model: "openai/gpt-oss-20b", ...user("x") })).status).toBe(401);
    const listed = textOf((await client.page("/settings/keys?done=disabled")).html);
    expect(listed).toContain("Key disabled: the API now refuses it with 401.");
    expect(listed).toContain("Disabled");

    expect((await client.post("/settings/keys/enable", { key: hash }, { from: "/settings/keys" })).status).toBe(303);
    expect((await keyRow(hash))!.disabled).toBe(0);
    expect((await get("/key", key)).status).toBe(200);

    const confirm = await client.page(`/settings/keys/delete?key=${hash}`);
    expect(confirm.status).toBe(200);
    expect(textOf(confirm.html)).toContain("Delete key “toggle”?");
    const del = await client.post("/settings/keys/delete", { key: hash }, { from: "/settings/keys" });
    expect(del.status).toBe(303);
    expect(del.headers.get("location")).toBe("/settings/keys?done=deleted");
    expect(await keyRow(hash)).toBeNull();
    expect((await get("/key", key)).status).toBe(401);
    expect((await client.page("/settings/keys")).html).not.toContain(hash);
  });

  it("shows each key's usage from the ledger", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 1 });
    const { key } = await createKeyViaConsole(client, "spender");
    const res = await chat(key, { model: "openai/gpt-oss-20b", ...user("hello [sim tokens=9]") });
    const cost = ((await res.json()) as { usage: { cost: number } }).usage.cost;
    expect(cost).toBeGreaterThan(0);
    await settled(accountId);
    const row = /<th scope="row">spender<\/th>[\s\S]*?<\/tr>/.exec((await client.page("/settings/keys")).html)![0];
    const costNano = Math.round(cost * 1e9);
    const shown = `$${(costNano / 1e9).toFixed(9).replace(/0+$/, "")}`;
    expect(textOf(row)).toContain(`${shown} ${shown} today`);
  });

  it("CSRF: key forms refuse a POST without the session's token", async () => {
    const { client, accountId } = await signUp();
    const { key } = await createKeyViaConsole(client, "keep");
    const hash = await sha256Hex(key);
    const other = await signUp();
    const otherToken = /name="_csrf" value="([^"]+)"/.exec((await other.client.page("/settings/keys")).html)![1]!;
    for (const [path, fields] of [
      ["/settings/keys", { name: "forged" }],
      ["/settings/keys/disable", { key: hash }],
      ["/settings/keys/delete", { key: hash }],
    ] as const) {
      expect((await client.post(path, fields, { csrf: null })).status, path).toBe(403);
      expect((await client.post(path, fields, { csrf: otherToken })).status, path).toBe(403);
      expect((await client.post(path, fields, { from: "/settings/keys", headers: { origin: "https://evil.example" } })).status, path).toBe(403);
    }
    expect(await env.DB.prepare("SELECT name, disabled FROM api_keys WHERE account_id = ?").bind(accountId).all().then((r) => r.results)).toEqual([{ name: "keep", disabled: 0 }]);
  });

  it("another account's keys are never listed, and cannot be disabled, enabled or deleted", async () => {
    const victim = await newAccount(1);
    const mine = await signUp();
    await createKeyViaConsole(mine.client, "mine");
    const list = (await mine.client.page("/settings/keys")).html;
    expect(list).not.toContain(victim.label);
    expect(list).not.toContain(victim.hash);
    expect(list.match(/<th scope="row">/g)).toHaveLength(1);

    for (const path of ["/settings/keys/disable", "/settings/keys/enable", "/settings/keys/delete"]) {
      const res = await mine.client.post(path, { key: victim.hash }, { from: "/settings/keys" });
      expect(res.status, path).toBe(404);
    }
    expect((await mine.client.page(`/settings/keys/delete?key=${victim.hash}`)).status).toBe(404);
    expect(await keyRow(victim.hash)).toMatchObject({ disabled: 0, account_id: victim.accountId });
    expect((await get("/key", victim.key)).status).toBe(200);
  });
});
