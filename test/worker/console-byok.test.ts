import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { createKeyViaConsole, signUp, textOf } from "./console-helpers";
import { admin, chat } from "./helpers";
import { simRequests, uniqueTag } from "./sim";

// The console's carrier keys page (/settings/byok, docs/byok.md): add, replace and remove a key per carrier,
// shown by its last four characters only, with its mode, fallback and last error; validated on the server,
// CSRF on every form, scoped to the session's account.
const rowsOf = async (accountId: string) =>
  (await env.DB.prepare("SELECT * FROM byok_keys WHERE account_id = ?").bind(accountId).all<Record<string, unknown>>()).results;

async function fingerprint(key: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return [...d.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("/settings/byok", () => {
  it("adds a key (shown by its last four only), a request uses it, replaces it, shows its last error, removes it", async () => {
    const { client, accountId } = await signUp();
    const empty = await client.page("/settings/byok");
    expect(empty.status).toBe(200);
    expect(textOf(empty.html)).toContain("You have no carrier keys");
    expect(empty.html).toContain('href="/settings/byok" aria-current="page"');

    const saved = await client.post("/settings/byok", { provider: "deepinfra", key: "console-byok-secret-KEY1", mode: "only" });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/settings/byok?done=saved");
    const page = await client.page("/settings/byok?done=saved");
    expect(textOf(page.html)).toContain("…KEY1");
    expect(page.html).not.toContain("console-byok-secret");
    expect(textOf(page.html)).toContain("Only");

    // A key of the account now reaches the carrier with it.
    await admin(`/accounts/${accountId}/credits`, { usd: 1 });
    const { key } = await createKeyViaConsole(client, "app");
    const tag = uniqueTag();
    const res = await chat(key, {
      model: "meta-llama/llama-3.1-8b-instruct",
      provider: { only: ["deepinfra"] },
      messages: [{ role: "user", content: `x [sim tag=${tag}]` }],
    });
    expect(res.status).toBe(200);
    expect((await simRequests(tag))[0]!.credential_sha256).toBe(await fingerprint("console-byok-secret-KEY1"));

    // Replaced: one row still, the new last four, the platform's key allowed on refusal; a refusal shows as the last error.
    expect(
      (await client.post("/settings/byok", { provider: "deepinfra", key: "sim-refuse-401-console-KEY2", mode: "first", allow_fallback: "on" })).status,
    ).toBe(303);
    const rows = await rowsOf(accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ last4: "KEY2", mode: "first", allow_fallback: 1 });
    expect(
      (await chat(key, { model: "meta-llama/llama-3.1-8b-instruct", provider: { only: ["deepinfra"] }, messages: [{ role: "user", content: "x" }] })).status,
    ).toBe(200);
    const deadline = Date.now() + 5000;
    let shown = "";
    while (!/HTTP 401/.test(shown) && Date.now() < deadline) {
      shown = textOf((await client.page("/settings/byok")).html);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(shown).toMatch(/HTTP 401/);
    expect(shown).toContain("Yes"); // the platform's key on refusal

    const removed = await client.post(`/settings/byok/${rows[0]!.id as string}/delete`, {}, { from: "/settings/byok" });
    expect(removed.status).toBe(303);
    expect(await rowsOf(accountId)).toHaveLength(0);
  });

  it.each([
    [{ provider: "deepinfra", key: "", mode: "first" }, "Enter the carrier's API key."],
    [{ provider: "deepinfra", key: "has a space", mode: "first" }, "A key is printable characters without spaces."],
    [{ provider: "nowhere", key: "k_1234", mode: "first" }, "Choose a carrier of the list."],
    [{ provider: "deepinfra", key: "k_1234", mode: "sometimes" }, "Choose First or Only."],
  ])("refuses %j (400, nothing stored)", async (fields, message) => {
    const { client, accountId } = await signUp();
    const res = await client.post("/settings/byok", fields);
    expect(res.status).toBe(400);
    expect(textOf(await res.text())).toContain(message);
    expect(await rowsOf(accountId)).toHaveLength(0);
  });

  it("a form without the session's CSRF token is refused; another account's key cannot be removed", async () => {
    const a = await signUp();
    const b = await signUp();
    expect((await a.client.post("/settings/byok", { provider: "groq", key: "gsk_a_1111", mode: "first" }, { csrf: null })).status).toBe(403);
    expect((await a.client.post("/settings/byok", { provider: "groq", key: "gsk_a_1111", mode: "first" })).status).toBe(303);
    const [row] = await rowsOf(a.accountId);
    const stolen = await b.client.post(`/settings/byok/${row!.id as string}/delete`, {}, { from: "/settings/byok" });
    expect(stolen.status).toBe(404);
    expect(await rowsOf(a.accountId)).toHaveLength(1);
  });
});
