import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { isolate } from "../../src/isolate";
import { chat, newAccount, user } from "./helpers";

// Every value an isolate keeps between requests is in one object (src/isolate.ts), reset through one door.
describe("the isolate's state", () => {
  it("holds every per-isolate cache in a named slot", () => {
    expect(isolate.slots.sort()).toEqual([
      "catalog memo",
      "derived AES-GCM keys",
      "failure streaks",
      "health snapshot memo",
      "key cache",
      "ledger clients",
      "presented catalogs",
      "preset cache",
      "settings",
      "stripe clients",
    ]);
  });

  it("reset() forgets them all: a key changed behind the cache's back is read afresh", async () => {
    const a = await newAccount(1);
    expect((await chat(a.key, { model: "openai/gpt-oss-20b:free", ...user("x [sim tokens=1]") })).status).toBe(200);
    // Disabled in D1 directly (not through the API, which would forget the cached key): this isolate still has it cached.
    await env.DB.prepare("UPDATE api_keys SET disabled = 1 WHERE hash = ?").bind(a.hash).run();
    expect((await chat(a.key, { model: "openai/gpt-oss-20b:free", ...user("x [sim tokens=1]") })).status).toBe(200);
    isolate.reset();
    expect((await chat(a.key, { model: "openai/gpt-oss-20b:free", ...user("x [sim tokens=1]") })).status).toBe(401);
  });
});
