import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { chat, debited, generation, uncachedCost } from "./helpers";
import { accountWithManagementKey, guardrailsApi as api } from "./guardrail-helpers";
import { simRequests, uniqueTag } from "./sim";
import { readSse } from "./sse";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { byokFeeNano } from "../../src/request/charge";

// Requests of an account that brought its own carrier key (docs/byok.md): which key the carrier received
// (the simulator keeps a fingerprint of it), what was charged (the fee only, exact to the nano-USD), what
// was recorded, and the platform's key only where the account allows it.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MODEL = "meta-llama/llama-3.1-8b-instruct";
const CARRIER = "deepinfra";
const endpoint = Catalog.parse(catalogJson)
  .endpoints(MODEL)
  .find((e) => e.provider === CARRIER)!;
const FEE_MILLI = 5000; // BYOK_FEE_PERCENT's default, 5 %
const PLATFORM_KEY = `sim-key-${CARRIER}`;

async function fingerprint(key: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return [...d.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** An account with credits and, for the carrier, its own key with these options. */
async function withKey(key: string, options: Json = {}, credits = 5) {
  const a = await accountWithManagementKey(credits);
  const res = await api(a.mgmt, "POST", "/byok", { provider: CARRIER, key, ...options });
  expect(res.status, await res.clone().text()).toBe(201);
  return { ...a, byokId: ((await res.json()) as Json).data.id as string };
}

function ask(key: string, tag: string, extra: Json = {}) {
  return chat(key, { model: MODEL, provider: { only: [CARRIER] }, messages: [{ role: "user", content: `hi [sim tokens=9 tag=${tag}]` }], ...extra });
}

/** Waits (bounded) until the key's last error is noted (off the response path). */
async function lastError(mgmt: string, id: string): Promise<Json> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const k = ((await (await api(mgmt, "GET", `/byok/${id}`)).json()) as Json).data;
    if (k.last_error !== null || Date.now() > deadline) return k;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("a request to a carrier the account has its own key for", () => {
  it("is sent with the account's key and charged only the fee on what the carrier charged; the record says byok", async () => {
    const a = await withKey("byok-deepinfra-own-key-0001");
    const tag = uniqueTag();
    const res = await ask(a.key, tag);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    const [seen] = await simRequests(tag);
    expect(seen!.credential_sha256).toBe(await fingerprint("byok-deepinfra-own-key-0001"));
    const upstream = uncachedCost(body.usage.prompt_tokens, body.usage.completion_tokens, endpoint);
    const fee = byokFeeNano(upstream, FEE_MILLI);
    expect(fee).toBe(Math.ceil(upstream / 20));
    expect(fee).toBeGreaterThan(0);
    expect(Math.round(body.usage.cost * 1e9)).toBe(fee);
    expect((await debited(a.accountId)).total_usage).toBeCloseTo(fee / 1e9, 12);
    const g = await generation(a.key, body.id);
    expect(g).toMatchObject({ is_byok: true, total_cost: fee / 1e9, upstream_inference_cost: upstream / 1e9 });
  });

  it("streamed: the same key, the same fee", async () => {
    const a = await withKey("byok-deepinfra-stream-0002", { mode: "only" });
    const tag = uniqueTag();
    const res = await ask(a.key, tag, { stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const chunks = (await readSse(res)).filter((e): e is Json => e !== "[DONE]");
    const usage = chunks.find((c) => c.usage)!.usage;
    expect((await simRequests(tag))[0]!.credential_sha256).toBe(await fingerprint("byok-deepinfra-stream-0002"));
    const fee = byokFeeNano(uncachedCost(usage.prompt_tokens, usage.completion_tokens, endpoint), FEE_MILLI);
    expect(Math.round(usage.cost * 1e9)).toBe(fee);
    expect(Math.round((await debited(a.accountId)).total_usage * 1e9)).toBe(fee);
  });

  it("mode first with allow_fallback: a key the carrier refuses (401) falls back to the platform's, charged in full; the key's last error is kept", async () => {
    const a = await withKey("sim-refuse-401-revoked-key", { mode: "first", allow_fallback: true });
    const tag = uniqueTag();
    const res = await ask(a.key, tag);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    const seen = await simRequests(tag);
    expect(seen.map((r) => r.credential_sha256)).toEqual([await fingerprint("sim-refuse-401-revoked-key"), await fingerprint(PLATFORM_KEY)]);
    const full = uncachedCost(body.usage.prompt_tokens, body.usage.completion_tokens, endpoint);
    expect(Math.round(body.usage.cost * 1e9)).toBe(full);
    expect(await generation(a.key, body.id)).toMatchObject({ is_byok: false, upstream_inference_cost: null });
    const k = await lastError(a.mgmt, a.byokId);
    expect(k.last_error).toMatch(/HTTP 401/);
    expect(k.last_error).not.toContain("revoked-key");
  });

  it.each([
    [{ mode: "first", allow_fallback: false }, 403, 502],
    [{ mode: "only", allow_fallback: true }, 429, 429],
  ])("%j: a refused key (%i) is the answer (%i); the platform's key is never sent, nothing is charged", async (options, refusal, status) => {
    const key = `sim-refuse-${refusal}-no-fallback`;
    const a = await withKey(key, options);
    const tag = uniqueTag();
    const res = await ask(a.key, tag);
    expect(res.status).toBe(status);
    const seen = await simRequests(tag);
    expect(seen.map((r) => r.credential_sha256)).toEqual([await fingerprint(key)]);
    const error = ((await res.json()) as Json).error;
    expect(error.metadata.attempts[0].reason).toMatch(/the account's own key was refused/);
    expect(JSON.stringify(error)).not.toContain(key);
    expect((await debited(a.accountId)).total_usage).toBe(0);
    const noted = (await lastError(a.mgmt, a.byokId)).last_error as string;
    expect(noted).toMatch(new RegExp(`HTTP ${refusal}`));
    // The carrier quoted the key it refused: neither the key's row nor the caller's error repeats it.
    expect(noted).toContain("[key]");
    expect(noted).not.toContain(key);
  });

  it("another account's request to the same carrier never uses the key (the platform's is sent)", async () => {
    await withKey("byok-of-account-a-only-0003", { mode: "only" });
    const b = await accountWithManagementKey();
    const tag = uniqueTag();
    expect((await ask(b.key, tag)).status).toBe(200);
    expect((await simRequests(tag))[0]!.credential_sha256).toBe(await fingerprint(PLATFORM_KEY));
  });

  it("a row copied into another account does not decrypt there: no key reaches the carrier, nothing is charged", async () => {
    const a = await withKey("byok-stolen-row-0004", { mode: "only" });
    const b = await accountWithManagementKey();
    await env.DB.prepare(
      "INSERT INTO byok_keys (id, account_id, provider, name, ciphertext, iv, key_version, last4, mode, allow_fallback, disabled, created_at) " +
        "SELECT ?, ?, provider, name, ciphertext, iv, key_version, last4, mode, allow_fallback, disabled, created_at FROM byok_keys WHERE id = ?",
    )
      .bind(crypto.randomUUID(), b.accountId, a.byokId)
      .run();
    const tag = uniqueTag();
    const res = await ask(b.key, tag);
    expect(res.status).toBe(503);
    expect(((await res.json()) as Json).error.metadata.attempts[0].reason).toMatch(/cannot be decrypted/);
    expect(await simRequests(tag)).toEqual([]);
    expect((await debited(b.accountId)).total_usage).toBe(0);
  });

  it("a disabled key is not used; enabled again, it is", async () => {
    const a = await withKey("byok-disabled-0010", { mode: "only", disabled: true });
    const off = uniqueTag();
    expect((await ask(a.key, off)).status).toBe(200);
    expect((await simRequests(off))[0]!.credential_sha256).toBe(await fingerprint(PLATFORM_KEY));
    expect((await api(a.mgmt, "PATCH", `/byok/${a.byokId}`, { disabled: false })).status).toBe(200);
    const on = uniqueTag();
    expect((await ask(a.key, on)).status).toBe(200);
    expect((await simRequests(on))[0]!.credential_sha256).toBe(await fingerprint("byok-disabled-0010"));
  });

  it("removed: the next request goes with the platform's key", async () => {
    const a = await withKey("byok-removed-soon-0005", { mode: "only" });
    const first = uniqueTag();
    expect((await ask(a.key, first)).status).toBe(200);
    expect((await simRequests(first))[0]!.credential_sha256).toBe(await fingerprint("byok-removed-soon-0005"));
    expect((await api(a.mgmt, "DELETE", `/byok/${a.byokId}`)).status).toBe(200);
    const second = uniqueTag();
    expect((await ask(a.key, second)).status).toBe(200);
    expect((await simRequests(second))[0]!.credential_sha256).toBe(await fingerprint(PLATFORM_KEY));
  });

  it("the balance gates the fee: held at the fee's worst case, a balance too small for the full price still serves; none at all is a 402", async () => {
    const body = { max_tokens: 1000 };
    // $0.00001 pays the fee's worst case here, not the full one.
    const poor = await accountWithManagementKey(0.00001);
    expect((await ask(poor.key, uniqueTag(), body)).status).toBe(402);
    const a = await withKey("byok-small-balance-0006", { mode: "only" }, 0.00001);
    const tag = uniqueTag();
    const res = await ask(a.key, tag, body);
    expect(res.status, await res.clone().text()).toBe(200);
    const b = await withKey("byok-empty-balance-0007", { mode: "only" }, 0);
    const refused = await ask(b.key, uniqueTag(), body);
    expect(refused.status).toBe(402);
    // The platform's key may serve (first, with fallback): held in full, so the same small balance is a 402 and no carrier is called.
    const c = await withKey("byok-may-fall-back-0008", { mode: "first", allow_fallback: true }, 0.00001);
    const tagC = uniqueTag();
    expect((await ask(c.key, tagC, body)).status).toBe(402);
    expect(await simRequests(tagC)).toEqual([]);
  });

  it("the routing metadata says the selected endpoint was served with the account's key", async () => {
    const a = await withKey("byok-metadata-0009", { mode: "only" });
    const res = await ask(a.key, uniqueTag(), {});
    const withMeta = await chat(
      a.key,
      { model: MODEL, provider: { only: [CARRIER] }, messages: [{ role: "user", content: "hi" }] },
      { "x-openrouter-metadata": "enabled" },
    );
    expect(res.status).toBe(200);
    const meta = ((await withMeta.json()) as Json).openrouter_metadata;
    expect(meta.is_byok).toBe(true);
    expect(meta.endpoints.available.filter((e: Json) => e.selected).map((e: Json) => e.provider)).toEqual([endpoint.providerEntry.name]);
    const b = await accountWithManagementKey();
    const plain = await chat(
      b.key,
      { model: MODEL, provider: { only: [CARRIER] }, messages: [{ role: "user", content: "hi" }] },
      { "x-openrouter-metadata": "enabled" },
    );
    expect(((await plain.json()) as Json).openrouter_metadata.is_byok).toBe(false);
  });
});
