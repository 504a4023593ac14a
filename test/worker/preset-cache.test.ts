import { describe, it, expect, vi, afterEach } from "vitest";
import { env } from "cloudflare:test";
import { cachedPresetVersion, forgetPreset } from "../../src/presets/preset-cache";
import type { Preset, PresetVersion } from "../../src/db/schema";
import { isolate } from "../../src/isolate";
import { simRequests, uniqueTag } from "./sim";
import { accountWithManagementKey, createPreset, post } from "./preset-helpers";

// The isolate's preset cache: a request reads D1 at most once for its preset, and usually not at all;
// what it read is kept PRESET_CACHE_MS; a miss is never kept; a save through this isolate forgets it.
const preset = { id: "p", accountId: "acct", slug: "s", name: "s", description: null, latestVersion: 1, createdAt: 0, updatedAt: 0 } satisfies Preset;
const version = { id: "v", presetId: "p", version: 1, config: "{}", systemPrompt: null, createdAt: 0 } satisfies PresetVersion;

afterEach(() => vi.restoreAllMocks());

describe("the preset cache", () => {
  it("keeps a version for its TTL, forgets it on a save here, never keeps a miss", async () => {
    const account = `acct-${Math.random()}`;
    let loads = 0;
    const found = async () => (loads++, { preset, version });
    const ask = () => cachedPresetVersion(account, "s", null, 10_000, found);
    await ask();
    await ask();
    expect(loads).toBe(1);
    // The pinned version is its own entry.
    await cachedPresetVersion(account, "s", 1, 10_000, found);
    expect(loads).toBe(2);
    forgetPreset(account, "s");
    await ask();
    expect(loads).toBe(3);
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 10_001);
    await ask();
    expect(loads).toBe(4);
    let misses = 0;
    const missing = async () => (misses++, undefined);
    await cachedPresetVersion(account, "ghost", null, 10_000, missing);
    await cachedPresetVersion(account, "ghost", null, 10_000, missing);
    expect(misses).toBe(2);
  });

  it("a request applies the cached version while D1 changes behind the cache; a fresh isolate reads D1 again", async () => {
    const a = await accountWithManagementKey();
    await createPreset(a.mgmt, "cached", { model: "meta-llama/llama-3.1-8b-instruct", temperature: 0.1 });
    const temperature = async () => {
      const tag = uniqueTag();
      const res = await post("/chat/completions", a.key, { model: "@preset/cached", messages: [{ role: "user", content: `x [sim tokens=1 tag=${tag}]` }] });
      expect(res.status).toBe(200);
      return (await simRequests(tag))[0]!.body.temperature as number;
    };
    expect(await temperature()).toBe(0.1);
    // Changed in D1 directly, as another isolate's save would be seen from here.
    await env.DB.prepare("UPDATE preset_versions SET config = ? WHERE preset_id = (SELECT id FROM presets WHERE account_id = ? AND slug = 'cached')")
      .bind(JSON.stringify({ model: "meta-llama/llama-3.1-8b-instruct", temperature: 0.9 }), a.accountId)
      .run();
    expect(await temperature()).toBe(0.1); // no D1 read: the isolate's copy
    isolate.reset();
    expect(await temperature()).toBe(0.9);
  });
});
