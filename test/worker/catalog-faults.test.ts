import { describe, it, expect, vi, afterEach } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import bundled from "../../catalog.json";
import { catalogSchema, type CatalogFile } from "../../src/catalog/schema";
import { CATALOG_KV_KEY, forgetCatalogMemo, loadCatalog } from "../../src/catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../../src/protocols/outbound";
import { app } from "../../src/app";

const file: CatalogFile = catalogSchema.parse(bundled);
/** The live catalog an operator published: the first model's first carrier at a new input price. */
const live: CatalogFile = structuredClone(file);
live.models[0]!.endpoints[0]!.input_price_per_1m = 123.456;
const firstModel = file.models[0]!.id;
const firstCarrier = file.models[0]!.endpoints[0]!.provider;

/** A KV binding whose reads fail (KV unavailable); every write is recorded. */
function unreadableKv() {
  const writes: string[] = [];
  const kv = {
    get: () => Promise.reject(new Error("KV GET failed: 503")),
    put: (key: string) => {
      writes.push(key);
      return Promise.resolve();
    },
  } as unknown as KVNamespace;
  return { kv, writes };
}

/** The first model's price at its first carrier (endpoints are listed cheapest first, so found by carrier). */
const inputPrice = (c: { endpoints(id: string): Array<{ provider: string; input_price_per_1m: number }> }) =>
  c.endpoints(firstModel).find((e) => e.provider === firstCarrier)!.input_price_per_1m;

afterEach(async () => {
  vi.restoreAllMocks();
  await env.CATALOG.delete(CATALOG_KV_KEY);
  forgetCatalogMemo();
});

describe("catalog: a KV read error corrupts nothing", () => {
  it("serves the last good catalog (not the bundled one) once the memo is stale, and writes nothing to KV", async () => {
    await env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(live));
    forgetCatalogMemo();
    expect(inputPrice(await loadCatalog(env, CARRIER_PROTOCOL_NAMES))).toBe(123.456);

    const later = Date.now() + 61_000; // past the 60 s memo
    vi.spyOn(Date, "now").mockReturnValue(later);
    const { kv, writes } = unreadableKv();
    const pending: Promise<unknown>[] = [];
    const served = await loadCatalog({ ...env, CATALOG: kv }, CARRIER_PROTOCOL_NAMES, (p) => pending.push(p));
    await Promise.all(pending);
    expect(inputPrice(served)).toBe(123.456);
    expect(writes).toEqual([]);
    expect(pending).toEqual([]);
  });

  it("with no catalog in memory, serves the bundled one and never writes it over the live KV value", async () => {
    await env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(live));
    forgetCatalogMemo();
    const { kv, writes } = unreadableKv();
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request("https://switchyard.test/api/v1/models"), { ...env, CATALOG: kv }, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    expect(writes).toEqual([]);
    // The live value is intact: once KV answers again, its prices are served.
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 61_000);
    expect(inputPrice(await loadCatalog(env, CARRIER_PROTOCOL_NAMES))).toBe(123.456);
    expect(JSON.parse((await env.CATALOG.get(CATALOG_KV_KEY))!)).toEqual(live);
  });

  it("only a missing key is seeded with the bundled catalog", async () => {
    forgetCatalogMemo();
    const pending: Promise<unknown>[] = [];
    await loadCatalog(env, CARRIER_PROTOCOL_NAMES, (p) => pending.push(p));
    await Promise.all(pending);
    expect(JSON.parse((await env.CATALOG.get(CATALOG_KV_KEY))!)).toEqual(bundled);
  });

  it("an invalid KV value is never served and never overwritten; the last good catalog stays", async () => {
    await env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(live));
    forgetCatalogMemo();
    await loadCatalog(env, CARRIER_PROTOCOL_NAMES);
    await env.CATALOG.put(CATALOG_KV_KEY, "{broken");
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 61_000);
    const pending: Promise<unknown>[] = [];
    expect(inputPrice(await loadCatalog(env, CARRIER_PROTOCOL_NAMES, (p) => pending.push(p)))).toBe(123.456);
    await Promise.all(pending);
    expect(await env.CATALOG.get(CATALOG_KV_KEY)).toBe("{broken");
  });

  it("a KV catalog naming a carrier protocol that is not registered is never served; the last good catalog stays", async () => {
    await env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(live));
    forgetCatalogMemo();
    await loadCatalog(env, CARRIER_PROTOCOL_NAMES);
    const unspoken = structuredClone(live);
    unspoken.providers[0]!.protocol = "carrier-pigeon";
    unspoken.models[0]!.endpoints[0]!.input_price_per_1m = 7;
    await env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(unspoken));
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 61_000);
    expect(inputPrice(await loadCatalog(env, CARRIER_PROTOCOL_NAMES))).toBe(123.456);
    // The same file is served where its protocol is registered.
    forgetCatalogMemo();
    expect(inputPrice(await loadCatalog(env, new Set([...CARRIER_PROTOCOL_NAMES, "carrier-pigeon"])))).toBe(7);
  });
});

describe("catalog: carrier base URLs", () => {
  it("must be https", () => {
    for (const base_url of ["http://api.example.com/v1", "ftp://api.example.com", "javascript:alert(1)"]) {
      const broken = structuredClone(file);
      broken.providers[0]!.base_url = base_url;
      const parsed = catalogSchema.safeParse(broken);
      expect(parsed.success, base_url).toBe(false);
      expect(JSON.stringify(parsed.error?.issues), base_url).toContain("https");
    }
    expect(catalogSchema.safeParse(file).success).toBe(true);
  });

  it("a KV catalog sending a carrier over plain http is ignored", async () => {
    const insecure = structuredClone(live);
    insecure.providers[0]!.base_url = "http://plain.example.com/v1";
    await env.CATALOG.put(CATALOG_KV_KEY, JSON.stringify(insecure));
    forgetCatalogMemo();
    const served = await loadCatalog(env, CARRIER_PROTOCOL_NAMES);
    expect(served.providers[0]!.base_url).toMatch(/^https:\/\//);
    expect(inputPrice(served)).toBe(file.models[0]!.endpoints[0]!.input_price_per_1m);
  });
});
