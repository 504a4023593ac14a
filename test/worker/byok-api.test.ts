import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { accountWithManagementKey, guardrailsApi as api } from "./guardrail-helpers";

// The management API of an account's own carrier keys (`/byok`, OpenRouter's shape; docs/byok.md), scoped
// to the management key's account; the key itself is never answered back. Its responses are held to the
// contract in test/node/byok-contract.test.ts.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";

async function created(mgmt: string, body: Json): Promise<Json> {
  const res = await api(mgmt, "POST", "/byok", body);
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as Json).data;
}

describe("/byok", () => {
  it("stores a key, shows only its last four characters, lists, reads, replaces and deletes it", async () => {
    const a = await accountWithManagementKey();
    const k = await created(a.mgmt, { provider: "Groq", key: "gsk_live_secret_value_WXYZ", name: "prod" });
    expect(k).toMatchObject({
      provider: "groq",
      name: "prod",
      label: "...WXYZ",
      last4: "WXYZ",
      disabled: false,
      is_fallback: false,
      mode: "first",
      allow_fallback: false,
      last_error: null,
      updated_at: null,
    });
    const listed = (await (await api(a.mgmt, "GET", "/byok")).json()) as Json;
    expect(listed.total_count).toBe(1);
    expect(listed.data[0].id).toBe(k.id);
    expect(JSON.stringify(listed)).not.toContain("secret_value");
    // Stored encrypted: the row holds neither the key nor any of its readable part but the last four.
    const row = await env.DB.prepare("SELECT * FROM byok_keys WHERE id = ?").bind(k.id).first<Json>();
    expect(JSON.stringify(row)).not.toContain("secret_value");
    expect(row).toMatchObject({ key_version: 1, last4: "WXYZ" });

    const changed = await api(a.mgmt, "PATCH", `/byok/${k.id}`, { key: "gsk_rotated_value_ABCD", mode: "only", allow_fallback: true });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as Json).data).toMatchObject({ label: "...ABCD", mode: "only", allow_fallback: true });
    const after = await env.DB.prepare("SELECT ciphertext FROM byok_keys WHERE id = ?").bind(k.id).first<Json>();
    expect(after!.ciphertext).not.toBe(row!.ciphertext);
    expect(((await (await api(a.mgmt, "GET", `/byok/${k.id}`)).json()) as Json).data.last4).toBe("ABCD");

    expect(await (await api(a.mgmt, "DELETE", `/byok/${k.id}`)).json()).toEqual({ deleted: true });
    expect((await api(a.mgmt, "GET", `/byok/${k.id}`)).status).toBe(404);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM byok_keys WHERE id = ?").bind(k.id).first("n")).toBe(0);
  });

  it("one key per carrier: a second is refused (400) until the first is replaced or deleted", async () => {
    const a = await accountWithManagementKey();
    await created(a.mgmt, { provider: "groq", key: "gsk_one_1111" });
    const again = await api(a.mgmt, "POST", "/byok", { provider: "groq", key: "gsk_two_2222" });
    expect(again.status).toBe(400);
    expect(((await again.json()) as Json).error.message).toMatch(/has a key for groq already/);
    await created(a.mgmt, { provider: "anthropic", key: "sk-ant-3333" });
    const filtered = (await (await api(a.mgmt, "GET", "/byok?provider=anthropic")).json()) as Json;
    expect(filtered.data.map((k: Json) => k.provider)).toEqual(["anthropic"]);
  });

  it("another account's keys can be neither listed, read, changed nor deleted (404), and stay as they were", async () => {
    const a = await accountWithManagementKey();
    const b = await accountWithManagementKey();
    const k = await created(a.mgmt, { provider: "groq", key: "gsk_of_account_a_AAAA" });
    expect(((await (await api(b.mgmt, "GET", "/byok")).json()) as Json).total_count).toBe(0);
    expect((await api(b.mgmt, "GET", `/byok/${k.id}`)).status).toBe(404);
    expect((await api(b.mgmt, "PATCH", `/byok/${k.id}`, { key: "gsk_hijack_BBBB" })).status).toBe(404);
    expect((await api(b.mgmt, "DELETE", `/byok/${k.id}`)).status).toBe(404);
    const still = ((await (await api(a.mgmt, "GET", `/byok/${k.id}`)).json()) as Json).data;
    expect(still.last4).toBe("AAAA");
  });

  it("only management keys manage carrier keys (403), and a key is required (401)", async () => {
    const a = await accountWithManagementKey();
    expect((await api(a.key, "GET", "/byok")).status).toBe(403);
    expect((await api(a.key, "POST", "/byok", { provider: "groq", key: "gsk_x_1234" })).status).toBe(403);
    expect((await api("sk-sy-v1-nope", "GET", "/byok")).status).toBe(401);
  });

  it.each([
    [{ key: "gsk_1234" }, /provider/],
    [{ provider: "groq" }, /key/],
    [{ provider: "groq", key: "" }, /key/],
    [{ provider: "groq", key: "has space 1234" }, /key/],
    [{ provider: "groq", key: " gsk_1234" }, /key/],
    [{ provider: "groq", key: "gsk_1234\n" }, /key/],
    [{ provider: "no-such-carrier", key: "gsk_1234" }, /provider.*not a carrier here/],
    [{ provider: "groq", key: "gsk_1234", mode: "sometimes" }, /mode/],
    [{ provider: "groq", key: "gsk_1234", allow_fallback: "yes" }, /allow_fallback/],
    [{ provider: "groq", key: "gsk_1234", is_fallback: true }, /is_fallback/],
    [{ provider: "groq", key: "gsk_1234", allowed_models: ["x/y"] }, /allowed_models/],
    [{ provider: "groq", key: "gsk_1234", allowed_api_key_hashes: ["a".repeat(64)] }, /allowed_api_key_hashes/],
    [{ provider: "groq", key: "gsk_1234", name: "n".repeat(256) }, /name/],
    [{ provider: "groq", key: "gsk_1234", workspace_id: UNKNOWN_ID }, /workspace_id/],
    [{ provider: "groq", key: "gsk_1234", colour: "red" }, /colour/],
    [{ provider: "groq", key: "k".repeat(4097) }, /BYOK_KEY_CHARS/],
  ])("POST %j is a 400 naming the field", async (body, message) => {
    const a = await accountWithManagementKey();
    const res = await api(a.mgmt, "POST", "/byok", body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toMatch(message);
    expect(((await (await api(a.mgmt, "GET", "/byok")).json()) as Json).total_count).toBe(0);
  });

  it.each([
    [{}, /at least one field/],
    [{ key: "" }, /key/],
    [{ mode: "never" }, /mode/],
    [{ provider: "anthropic" }, /provider/],
  ])("PATCH %j is a 400", async (body, message) => {
    const a = await accountWithManagementKey();
    const k = await created(a.mgmt, { provider: "groq", key: "gsk_patch_1234" });
    const res = await api(a.mgmt, "PATCH", `/byok/${k.id}`, body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toMatch(message);
  });

  it("an id that is not a UUID, or not the account's, is a 404", async () => {
    const a = await accountWithManagementKey();
    expect((await api(a.mgmt, "GET", "/byok/not-a-uuid")).status).toBe(404);
    expect((await api(a.mgmt, "DELETE", `/byok/${UNKNOWN_ID}`)).status).toBe(404);
  });
});
