import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, call, chat, get, newAccount, settled, user } from "./helpers";
import { ConsoleClient, createKeyViaConsole, csrfOf, keyForm, signUp, textOf } from "./console-helpers";

async function sha256Hex(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

type KeyRow = {
  hash: string;
  account_id: string;
  name: string;
  label: string;
  disabled: number;
  limit_nano: number | null;
  limit_reset: string | null;
  expires_at: number | null;
  updated_at: number | null;
};
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
    // One nano-dollar pays for no request: refused before anything runs.
    const refused = await chat(tiny.key, { model: "openai/gpt-oss-20b", ...user("hi [sim tokens=20]") });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { metadata: Record<string, unknown> } }).error.metadata).toMatchObject({ limit_source: "key_limit" });
    expect((await settled(accountId)).total_usage).toBe(0);
    expect((await chat(key, { model: "openai/gpt-oss-20b", ...user("hi [sim tokens=20]") })).status).toBe(200);
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
    expect(
      await env.DB.prepare("SELECT name, disabled FROM api_keys WHERE account_id = ?")
        .bind(accountId)
        .all()
        .then((r) => r.results),
    ).toEqual([{ name: "keep", disabled: 0 }]);
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

/** The creation token of the management key form. */
async function managementForm(client: ConsoleClient): Promise<{ csrf: string; creationToken: string }> {
  const html = (await client.page("/settings/keys/management")).html;
  return { csrf: csrfOf(html), creationToken: /name="creation_token" value="([^"]+)"/.exec(html)?.[1] ?? "" };
}

/** The keys page split into its API keys part and its management keys section. */
async function keysPageParts(client: ConsoleClient) {
  const html = (await client.page("/settings/keys")).html;
  const at = html.indexOf('id="management-title"');
  expect(at).toBeGreaterThan(0);
  return { apiPart: html.slice(0, at), managementPart: html.slice(at) };
}

describe("/settings/keys: management keys", () => {
  it("are created on their own form and shown once; listed in their own section; they manage keys through /keys and cannot run completions", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 1 });
    await createKeyViaConsole(client, "app");
    const keysPage = (await client.page("/settings/keys")).html;
    expect(keysPage).toContain('href="/settings/keys/management"');

    const form = await managementForm(client);
    expect(form.creationToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const res = await client.post("/settings/keys/management", { name: "provisioner", creation_token: form.creationToken }, { csrf: form.csrf });
    expect(res.status).toBe(200);
    const html = await res.text();
    const key = /value="(sk-sy-v1-[0-9a-f]{64})"/.exec(html)![1]!;
    expect(html.split(key)).toHaveLength(2);
    expect(textOf(html)).toContain("Your new management key “provisioner”");
    const hash = await sha256Hex(key);
    expect(await env.DB.prepare("SELECT account_id, is_management, limit_nano FROM api_keys WHERE hash = ?").bind(hash).first()).toEqual({
      account_id: accountId,
      is_management: 1,
      limit_nano: null,
    });

    // The same form again: no second key, never the key again.
    const again = await client.post("/settings/keys/management", { name: "provisioner", creation_token: form.creationToken }, { csrf: form.csrf });
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/settings/keys?done=exists");

    // Listed in the management section only, masked; with disable and delete but no edit.
    const { apiPart, managementPart } = await keysPageParts(client);
    expect(managementPart).toContain('<th scope="row">provisioner</th>');
    expect(apiPart).not.toContain("provisioner");
    expect(apiPart).toContain('<th scope="row">app</th>');
    expect(managementPart).not.toContain(key.slice(9));
    expect(managementPart).toContain(`${key.slice(0, 12)}...${key.slice(-3)}`);
    expect(managementPart).toContain('aria-label="Disable management key provisioner"');
    expect(managementPart).not.toContain(`/settings/keys/edit?key=${hash}`);

    // What it is for: /keys works, completions do not.
    const list = await call("/api/v1/keys", { headers: { authorization: `Bearer ${key}` } });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { data: { name: string }[] }).data.map((k) => k.name)).toEqual(["app"]);
    expect((await chat(key, { model: "openai/gpt-oss-20b", ...user("x") })).status).toBe(403);

    // Disable and delete like any key.
    expect((await client.post("/settings/keys/disable", { key: hash }, { from: "/settings/keys" })).status).toBe(303);
    expect((await call("/api/v1/keys", { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    expect((await client.post("/settings/keys/delete", { key: hash }, { from: "/settings/keys" })).status).toBe(303);
    expect(await keyRow(hash)).toBeNull();
    expect(textOf((await keysPageParts(client)).managementPart)).toContain("You have no management keys.");
  });

  it("refuses a blank name, a form without its creation token, and a POST without the session's CSRF token", async () => {
    const { client, accountId } = await signUp();
    const form = await managementForm(client);
    const blank = await client.post("/settings/keys/management", { name: "  ", creation_token: form.creationToken }, { csrf: form.csrf });
    expect(blank.status).toBe(400);
    expect(textOf(await blank.text())).toContain("Give the key a name.");
    const noToken = await client.post("/settings/keys/management", { name: "m", creation_token: "short" }, { csrf: form.csrf });
    expect(noToken.status).toBe(400);
    const other = await signUp();
    const otherCsrf = csrfOf((await other.client.page("/settings/keys")).html);
    for (const csrf of [null, otherCsrf])
      expect((await client.post("/settings/keys/management", { name: "forged", creation_token: form.creationToken }, { csrf })).status).toBe(403);
    expect(
      (
        await client.post(
          "/settings/keys/management",
          { name: "forged", creation_token: form.creationToken },
          { from: "/settings/keys/management", headers: { origin: "https://evil.example" } },
        )
      ).status,
    ).toBe(403);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ?").bind(accountId).first()).toEqual({ n: 0 });
  });
});

describe("/settings/keys: limit, reset period and expiry", () => {
  it("the create form takes them and the list shows them", async () => {
    const { client } = await signUp();
    const form = await keyForm(client);
    const res = await client.post(
      "/settings/keys",
      { name: "budgeted", limit: "3", limit_reset: "weekly", expires_at: "2099-12-31T23:59", creation_token: form.creationToken },
      { csrf: form.csrf },
    );
    expect(res.status).toBe(200);
    const key = /value="(sk-sy-v1-[0-9a-f]{64})"/.exec(await res.text())![1]!;
    expect(await keyRow(await sha256Hex(key))).toMatchObject({
      limit_nano: 3_000_000_000,
      limit_reset: "weekly",
      expires_at: Date.parse("2099-12-31T23:59:00Z"),
    });
    const row = textOf(/<th scope="row">budgeted<\/th>[\s\S]*?<\/tr>/.exec((await client.page("/settings/keys")).html)![0]);
    expect(row).toContain("$3.00 per week $3.00 left this week");
    expect(row).toContain("2099-12-31 23:59:00 UTC");
    expect(row).toContain("Active");
    expect(((await (await get("/key", key)).json()) as { data: Record<string, unknown> }).data).toMatchObject({
      limit: 3,
      limit_reset: "weekly",
      expires_at: "2099-12-31T23:59:00.000Z",
    });
  });

  it("the create form refuses a bad reset period or expiry with field errors, creating nothing", async () => {
    const { client, accountId } = await signUp();
    for (const [fields, message] of [
      [{ limit_reset: "hourly" }, "Choose when the limit resets."],
      [{ expires_at: "2020-01-01T00:00" }, "The expiry must be in the future."],
      [{ expires_at: "2099-02-30T00:00" }, "Enter the expiry as a date and time in UTC"],
      [{ expires_at: "next week" }, "Enter the expiry as a date and time in UTC"],
    ] as const) {
      const form = await keyForm(client);
      const res = await client.post("/settings/keys", { name: "x", limit: "", ...fields, creation_token: form.creationToken }, { csrf: form.csrf });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      const html = await res.text();
      expect(textOf(html)).toContain(message);
      expect(html).toContain('aria-invalid="true"');
    }
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ?").bind(accountId).first()).toEqual({ n: 0 });
  });

  it("the edit form changes them (CSRF-protected); the API follows", async () => {
    const { client } = await signUp();
    const { key } = await createKeyViaConsole(client, "editable");
    const hash = await sha256Hex(key);
    const page = await client.page(`/settings/keys/edit?key=${hash}`);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain("Edit key “editable”");

    const saved = await client.post(
      "/settings/keys/edit",
      { key: hash, limit: "1.5", limit_reset: "daily", expires_at: "2099-01-01T00:00:00" },
      { from: `/settings/keys/edit?key=${hash}` },
    );
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/settings/keys?done=updated");
    const row = await keyRow(hash);
    expect(row).toMatchObject({ limit_nano: 1_500_000_000, limit_reset: "daily", expires_at: Date.parse("2099-01-01T00:00:00Z") });
    expect(row!.updated_at).toEqual(expect.any(Number));
    expect(((await (await get("/key", key)).json()) as { data: Record<string, unknown> }).data).toMatchObject({
      limit: 1.5,
      limit_remaining: 1.5,
      limit_reset: "daily",
      expires_at: "2099-01-01T00:00:00.000Z",
    });
    expect(textOf((await client.page("/settings/keys?done=updated")).html)).toContain("$1.50 per day $1.50 left today");

    // The form shows the key as it now is; emptied fields remove the limit, reset and expiry.
    const edit = (await client.page(`/settings/keys/edit?key=${hash}`)).html;
    expect(edit).toContain('value="1.5"');
    expect(edit).toMatch(/<option value="daily" selected/);
    // UTC as the page writes dates (a datetime-local picker would show the browser's mm/dd/yyyy beside the "UTC" label).
    expect(edit).toContain('value="2099-01-01 00:00:00"');
    const expiryInput = /<input [^>]*name="expires_at"[^>]*>/.exec(edit)![0];
    expect(expiryInput).toContain('type="text"');
    expect(expiryInput).toContain('placeholder="yyyy-mm-dd hh:mm"');
    expect(
      (await client.post("/settings/keys/edit", { key: hash, limit: "", limit_reset: "", expires_at: "" }, { from: `/settings/keys/edit?key=${hash}` })).status,
    ).toBe(303);
    expect(await keyRow(hash)).toMatchObject({ limit_nano: null, limit_reset: null, expires_at: null });

    // Bad values: field errors, nothing changed.
    const bad = await client.post(
      "/settings/keys/edit",
      { key: hash, limit: "abc", limit_reset: "yearly", expires_at: "2001-01-01T00:00" },
      { from: `/settings/keys/edit?key=${hash}` },
    );
    expect(bad.status).toBe(400);
    const badText = textOf(await bad.text());
    for (const m of ["Enter the credit limit", "Choose when the limit resets.", "The expiry must be in the future."]) expect(badText).toContain(m);

    // CSRF: no token, another session's token, another origin.
    const other = await signUp();
    const otherCsrf = csrfOf((await other.client.page("/settings/keys")).html);
    const forged = { key: hash, limit: "999", limit_reset: "", expires_at: "" };
    expect((await client.post("/settings/keys/edit", forged, { csrf: null })).status).toBe(403);
    expect((await client.post("/settings/keys/edit", forged, { csrf: otherCsrf })).status).toBe(403);
    expect((await client.post("/settings/keys/edit", forged, { from: "/settings/keys", headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect(await keyRow(hash)).toMatchObject({ limit_nano: null, limit_reset: null, expires_at: null });
  });

  it("a key past its expiry is shown as expired, refused with 401, and its other settings can still be edited", async () => {
    const { client } = await signUp();
    const { key } = await createKeyViaConsole(client, "old");
    const hash = await sha256Hex(key);
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE hash = ?").bind(Date.parse("2020-01-01T00:00:00Z"), hash).run();
    const res = await get("/key", key);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("This API key expired at 2020-01-01T00:00:00.000Z.");
    const row = textOf(/<th scope="row">old<\/th>[\s\S]*?<\/tr>/.exec((await client.page("/settings/keys")).html)![0]);
    expect(row).toContain("2020-01-01 00:00:00 UTC");
    expect(row).toContain("Expired");
    // The expiry sent back unchanged stays, though it has passed; the limit changes.
    const edit = (await client.page(`/settings/keys/edit?key=${hash}`)).html;
    expect(edit).toContain('value="2020-01-01 00:00:00"');
    expect(
      (
        await client.post(
          "/settings/keys/edit",
          { key: hash, limit: "2", limit_reset: "", expires_at: "2020-01-01 00:00:00" },
          { from: `/settings/keys/edit?key=${hash}` },
        )
      ).status,
    ).toBe(303);
    expect(await keyRow(hash)).toMatchObject({ limit_nano: 2_000_000_000, expires_at: Date.parse("2020-01-01T00:00:00Z") });
  });

  it("include_byok_in_limit: the create form's box sets it, the edit form keeps or clears it, as the management API reads it", async () => {
    const { client, accountId } = await signUp();
    const mgmt = (await admin<{ key: string }>("/keys", { account: accountId, management: true })).key;
    const managed = async (hash: string) => ((await (await get(`/keys/${hash}`, mgmt)).json()) as { data: { include_byok_in_limit: boolean } }).data;
    const create = async (name: string, fields: Record<string, string>) => {
      const form = await keyForm(client);
      const res = await client.post("/settings/keys", { name, limit: "3", ...fields, creation_token: form.creationToken }, { csrf: form.csrf });
      expect(res.status).toBe(200);
      return sha256Hex(/value="(sk-sy-v1-[0-9a-f]{64})"/.exec(await res.text())![1]!);
    };
    const box = (html: string) => /<input [^>]*name="include_byok_in_limit"[^>]*>/.exec(html)?.[0];

    // The create form offers the box, unchecked.
    const createBox = box((await client.page("/settings/keys")).html);
    expect(createBox).toContain('type="checkbox"');
    expect(createBox).not.toContain("checked");

    // Without the field: false. With the box checked: true, and the list says so beside the limit.
    const plain = await create("plain", {});
    expect(await managed(plain)).toMatchObject({ include_byok_in_limit: false });
    const counting = await create("counting", { include_byok_in_limit: "on" });
    expect(await managed(counting)).toMatchObject({ include_byok_in_limit: true });
    const list = (await client.page("/settings/keys")).html;
    expect(textOf(/<th scope="row">counting<\/th>[\s\S]*?<\/tr>/.exec(list)![0])).toContain("$3.00 counts BYOK usage");
    expect(textOf(/<th scope="row">plain<\/th>[\s\S]*?<\/tr>/.exec(list)![0])).not.toContain("BYOK usage");

    // The edit form shows it as it is; sent back checked it stays true, unchecked (absent) it becomes false.
    expect(box((await client.page(`/settings/keys/edit?key=${counting}`)).html)).toContain("checked");
    expect(box((await client.page(`/settings/keys/edit?key=${plain}`)).html)).not.toContain("checked");
    const edit = (fields: Record<string, string>) =>
      client.post(
        "/settings/keys/edit",
        { key: counting, limit: "3", limit_reset: "", expires_at: "", ...fields },
        { from: `/settings/keys/edit?key=${counting}` },
      );
    expect((await edit({ include_byok_in_limit: "on" })).status).toBe(303);
    expect(await managed(counting)).toMatchObject({ include_byok_in_limit: true });
    expect((await edit({})).status).toBe(303);
    expect(await managed(counting)).toMatchObject({ include_byok_in_limit: false });
    expect(box((await client.page(`/settings/keys/edit?key=${counting}`)).html)).not.toContain("checked");

    // Any other value is a field error, nothing saved; the create form's refusal keeps the box as sent.
    const bad = await edit({ include_byok_in_limit: "yes" });
    expect(bad.status).toBe(400);
    expect(textOf(await bad.text())).toContain("Check the box or leave it unchecked.");
    expect(await managed(counting)).toMatchObject({ include_byok_in_limit: false });
    const form = await keyForm(client);
    const refused = await client.post(
      "/settings/keys",
      { name: "", limit: "3", include_byok_in_limit: "on", creation_token: form.creationToken },
      { csrf: form.csrf },
    );
    expect(refused.status).toBe(400);
    expect(box(await refused.text())).toContain("checked");
  });

  it("another account's key and management keys cannot be edited (404), and stay untouched", async () => {
    const victim = await newAccount(1, 2);
    const mine = await signUp();
    const mgmt = await admin<{ hash: string }>("/keys", { account: mine.accountId, management: true });
    for (const hash of [victim.hash, mgmt.hash, "f".repeat(64), "nope"]) {
      expect((await mine.client.page(`/settings/keys/edit?key=${hash}`)).status, hash).toBe(404);
      const res = await mine.client.post("/settings/keys/edit", { key: hash, limit: "999", limit_reset: "daily", expires_at: "" }, { from: "/settings/keys" });
      expect(res.status, hash).toBe(404);
    }
    expect(await keyRow(victim.hash)).toMatchObject({ account_id: victim.accountId, limit_nano: 2_000_000_000, limit_reset: null, updated_at: null });
    expect(await keyRow(mgmt.hash)).toMatchObject({ limit_nano: null, limit_reset: null, updated_at: null });
    expect(((await (await get("/key", victim.key)).json()) as { data: { limit: number } }).data.limit).toBe(2);
  });
});
