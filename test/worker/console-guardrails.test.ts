import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, call, chat, user } from "./helpers";
import { createKeyViaConsole, signUp, textOf } from "./console-helpers";

// A key's guardrails on its console page: shown, created and assigned, taken off and put back, validated
// on the server, scoped to the signed-in account.
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

async function consoleKey(name = "agent") {
  const s = await signUp();
  await admin(`/accounts/${s.accountId}/credits`, { usd: 5 });
  const { key } = await createKeyViaConsole(s.client, name);
  const row = await env.DB.prepare("SELECT hash FROM api_keys WHERE account_id = ? AND name = ?").bind(s.accountId, name).first<{ hash: string }>();
  return { ...s, key, hash: row!.hash, page: `/settings/keys/edit?key=${row!.hash}` };
}

const guardrailIds = (accountId: string) =>
  env.DB.prepare("SELECT id, name FROM guardrails WHERE account_id = ? ORDER BY created_at").bind(accountId).all<{ id: string; name: string }>();

describe("a key's guardrails on its console page", () => {
  it("creates a guardrail for the key, which the API then enforces; removes it and adds it back", async () => {
    const k = await consoleKey();
    expect(textOf((await k.client.page(k.page)).html)).toContain("This key carries no guardrail");
    const created = await k.client.post(
      "/settings/keys/guardrails/create",
      { key: k.hash, name: "Claude only", allowed_models: "anthropic/*", max_prompt: "5" },
      { from: k.page },
    );
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe(k.page);
    const page = textOf((await k.client.page(k.page)).html);
    expect(page).toContain("Claude only");
    expect(page).toContain("models: anthropic/*; prompt at most $5 per 1M tokens");
    const refused = await chat(k.key, { model: LLAMA, ...user("hi") });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('guardrail "Claude only"');

    const [g] = (await guardrailIds(k.accountId)).results;
    expect((await k.client.post("/settings/keys/guardrails/unassign", { key: k.hash, guardrail: g!.id }, { from: k.page })).status).toBe(303);
    expect(textOf((await k.client.page(k.page)).html)).toContain("This key carries no guardrail");
    expect((await chat(k.key, { model: LLAMA, ...user("hi") })).status).toBe(200);
    expect((await k.client.post("/settings/keys/guardrails/assign", { key: k.hash, guardrail: g!.id }, { from: k.page })).status).toBe(303);
    expect((await chat(k.key, { model: LLAMA, ...user("hi") })).status).toBe(403);
  });

  it("shows the guardrails the key carries through its member, which cannot be taken off the key there", async () => {
    const k = await consoleKey();
    const owner = (await env.DB.prepare("SELECT member_id FROM api_keys WHERE hash = ?").bind(k.hash).first<{ member_id: string }>())!.member_id;
    const mgmt = await admin<{ key: string }>("/keys", { account: k.accountId, management: true });
    const api = (path: string, body: unknown) =>
      call(`/api/v1${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${mgmt.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const g = ((await (await api("/guardrails", { name: "Team rail", allowed_models: ["anthropic/*"] })).json()) as { data: { id: string } }).data;
    expect((await api(`/guardrails/${g.id}/assignments/members`, { member_user_ids: [owner] })).status).toBe(200);
    const { html } = await k.client.page(k.page);
    const text = textOf(html);
    expect(text).not.toContain("This key carries no guardrail");
    expect(text).toContain("Through its member");
    expect(text).toContain("POST /api/v1/guardrails/{id}/assignments/members");
    expect(text).toContain("Team rail — models: anthropic/*");
    expect(html).not.toContain(`name="guardrail" value="${g.id}"`); // no form takes it off the key
  });

  it("the Members page gives a member a guardrail, which every key of theirs then carries, and takes it off", async () => {
    const k = await consoleKey();
    const owner = (await env.DB.prepare("SELECT member_id FROM api_keys WHERE hash = ?").bind(k.hash).first<{ member_id: string }>())!.member_id;
    const created = await k.client.post(
      "/settings/keys/guardrails/create",
      { key: k.hash, name: "Claude only", allowed_models: "anthropic/*" },
      { from: k.page },
    );
    expect(created.status).toBe(303);
    const [g] = (await guardrailIds(k.accountId)).results;
    await k.client.post("/settings/keys/guardrails/unassign", { key: k.hash, guardrail: g!.id }, { from: k.page });
    expect((await chat(k.key, { model: LLAMA, ...user("hi") })).status).toBe(200);
    const given = await k.client.post("/settings/members/guardrails/assign", { member: owner, guardrail: g!.id }, { from: "/settings/members" });
    expect(given.status).toBe(303);
    expect(textOf((await k.client.page("/settings/members")).html)).toContain(`${k.email} : Claude only — models: anthropic/* Remove`);
    const refused = await chat(k.key, { model: LLAMA, ...user("hi") });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('guardrail "Claude only"');
    const other = await consoleKey("theirs");
    const theirs = (await env.DB.prepare("SELECT member_id FROM api_keys WHERE hash = ?").bind(other.hash).first<{ member_id: string }>())!.member_id;
    expect((await k.client.post("/settings/members/guardrails/assign", { member: theirs, guardrail: g!.id }, { from: "/settings/members" })).status).toBe(404);
    expect((await chat(other.key, { model: LLAMA, ...user("hi") })).status).toBe(200);
    const taken = await k.client.post("/settings/members/guardrails/unassign", { member: owner, guardrail: g!.id }, { from: "/settings/members" });
    expect(taken.status).toBe(303);
    expect(textOf((await k.client.page("/settings/members")).html)).toContain("No member carries a guardrail");
    expect((await chat(k.key, { model: LLAMA, ...user("hi") })).status).toBe(200);
  });

  it.each([
    [{ name: "" }, "name"],
    [{ name: "x", allowed_models: "no-such/model" }, "no-such/model is not in the catalog"],
    [{ name: "x", allowed_providers: "nope" }, "nope is not a carrier"],
    [{ name: "x", max_prompt: "0.0001" }, "at most 3 decimals"],
  ])("refuses a bad form (%j) with 400 and says why; nothing is created", async (fields, says) => {
    const k = await consoleKey();
    const res = await k.client.post("/settings/keys/guardrails/create", { key: k.hash, ...fields }, { from: k.page });
    expect(res.status).toBe(400);
    expect(textOf(await res.text())).toContain(says);
    expect((await guardrailIds(k.accountId)).results).toEqual([]);
  });

  it("another account's guardrail or key is a 404, and nothing changes", async () => {
    const mine = await consoleKey();
    const theirs = await consoleKey();
    await theirs.client.post("/settings/keys/guardrails/create", { key: theirs.hash, name: "theirs", allowed_models: "anthropic/*" }, { from: theirs.page });
    const [g] = (await guardrailIds(theirs.accountId)).results;
    expect((await mine.client.post("/settings/keys/guardrails/assign", { key: mine.hash, guardrail: g!.id }, { from: mine.page })).status).toBe(404);
    expect((await mine.client.post("/settings/keys/guardrails/unassign", { key: theirs.hash, guardrail: g!.id }, { from: mine.page })).status).toBe(404);
    expect((await mine.client.post("/settings/keys/guardrails/create", { key: theirs.hash, name: "x" }, { from: mine.page })).status).toBe(404);
    expect((await chat(mine.key, { model: LLAMA, ...user("hi") })).status).toBe(200);
    expect((await chat(theirs.key, { model: LLAMA, ...user("hi") })).status).toBe(403);
  });

  it("a form without its CSRF token changes nothing", async () => {
    const k = await consoleKey();
    const res = await k.client.post("/settings/keys/guardrails/create", { key: k.hash, name: "x" }, { csrf: null });
    expect(res.status).toBe(403);
    expect((await guardrailIds(k.accountId)).results).toEqual([]);
  });
});
