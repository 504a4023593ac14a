import { describe, it, expect } from "vitest";
import { chat, generation, newAccount, settled, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const [FIRST] = catalog.endpoints(LLAMA);

/** Every router field the contract defines (and OpenRouter's older ones), each with a valid value. */
const ROUTER_FIELDS = {
  provider: { allow_fallbacks: true },
  models: [LLAMA],
  route: "fallback",
  session_id: "session-456",
  plugins: [{ id: "web", enabled: false }],
  trace: { trace_id: "trace-abc123", custom: 1 },
  debug: { echo_upstream_body: false },
  stop_server_tools_when: [{ type: "step_count_is", step_count: 5 }],
  usage: { include: true },
  transforms: ["middle-out"],
};

/** The hash the carrier should see: hex SHA-256 of `<account>:<user>`, first 32 characters. */
async function expectedHash(accountId: string, u: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${accountId}:${u}`)));
  return [...digest]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 32);
}

async function errorOf(res: Response): Promise<{ code: number; message: string }> {
  return ((await res.json()) as { error: { code: number; message: string } }).error;
}

describe("router fields", () => {
  for (const stream of [false, true]) {
    it(`never reach the carrier; ordinary parameters do, and user only as its hash (${stream ? "stream" : "non-stream"})`, async () => {
      const a = await newAccount(10);
      const tag = uniqueTag();
      const content = `hi [sim tokens=2 tag=${tag}]`;
      const res = await chat(a.key, { model: LLAMA, stream, temperature: 0.3, top_p: 0.9, user: "alice", ...ROUTER_FIELDS, ...user(content) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const [seen] = await simRequests(tag);
      expect(seen!.body).toEqual({
        model: FIRST!.upstream_model,
        temperature: 0.3,
        top_p: 0.9,
        user: await expectedHash(a.accountId, "alice"),
        messages: [{ role: "user", content }],
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
      });
      expect(JSON.stringify(seen!.body)).not.toContain("alice");
      const record = await generation(a.key, res.headers.get("x-generation-id")!);
      expect(record.external_user).toBe("alice");
      await settled(a.accountId);
    });
  }

  it("hash user stably per account: the same user twice is one value, another account's is another; no user, none sent", async () => {
    const a = await newAccount(10);
    const b = await newAccount(10);
    const tag = uniqueTag();
    for (const key of [a.key, a.key, b.key]) {
      const res = await chat(key, { model: LLAMA, user: "user-123", ...user(`hi [sim tokens=1 tag=${tag}]`) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const users = (await simRequests(tag)).map((r) => r.body.user);
    expect(users).toHaveLength(3);
    expect(users[0]).toBe(users[1]);
    expect(users[2]).not.toBe(users[0]);
    expect(users).not.toContain("user-123");
    // Without a user, none is sent and none recorded.
    const res = await chat(a.key, { model: LLAMA, ...user(`hi [sim tokens=1 tag=${tag}-none]`) });
    await res.arrayBuffer();
    expect((await simRequests(`${tag}-none`))[0]!.body).not.toHaveProperty("user");
    expect((await generation(a.key, res.headers.get("x-generation-id")!)).external_user).toBeNull();
    await Promise.all([settled(a.accountId), settled(b.accountId)]);
  });

  it("take the first of `models` as the model when `model` is absent", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await chat(a.key, { models: [LLAMA, "openai/gpt-oss-20b"], ...user(`hi [sim tokens=1 tag=${tag}]`) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe(LLAMA);
    expect((await simRequests(tag))[0]!.body.model).toBe(FIRST!.upstream_model);
    await settled(a.accountId);
  });

  const invalid: [field: string, value: unknown][] = [
    ["models", "meta-llama/llama-3.1-8b-instruct"],
    ["models", []],
    ["models", [""]],
    ["models", Array.from({ length: 9 }, () => LLAMA)],
    ["route", "cheapest"],
    ["session_id", 456],
    ["session_id", "s".repeat(257)],
    ["user", 123],
    ["user", "u".repeat(257)],
    ["usage", true],
    ["usage", { include: "yes" }],
    ["plugins", { id: "web" }],
    ["transforms", "middle-out"],
    ["trace", "trace-abc123"],
    ["debug", true],
    ["stop_server_tools_when", []],
  ];
  for (const stream of [false, true])
    for (const [field, value] of invalid)
      it(`refuse ${field}: ${JSON.stringify(value).slice(0, 40)} with a 400 naming it (${stream ? "stream" : "non-stream"})`, async () => {
        const a = await newAccount(10);
        const tag = uniqueTag();
        const res = await chat(a.key, { model: LLAMA, stream, [field]: value, ...user(`hi [sim tokens=1 tag=${tag}]`) });
        expect(res.status).toBe(400);
        const error = await errorOf(res);
        expect(error.code).toBe(400);
        expect(error.message).toContain(`\`${field}`);
        expect(await simRequests(tag)).toEqual([]);
      });

  it("refuse an enabled plugin, saying it would not run", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, plugins: [{ id: "response-healing", enabled: false }, { id: "web" }], ...user("hi") });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/`plugins\.1`: .*`web` would not run/);
  });

  it("refuse a `preset` field: a preset is named as the model (`@preset/<slug>`)", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: LLAMA, preset: "my-preset", ...user("hi") });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/`preset`: name a preset as the model instead: `"model": "@preset\/<slug>"`/);
  });
});
