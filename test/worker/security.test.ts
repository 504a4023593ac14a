import { describe, it, expect, vi, afterEach } from "vitest";
import { env } from "cloudflare:test";
import { call, chat, newAccount, get, user } from "./helpers";
import { constantTimeEqual } from "../../src/keys/constant-time";

afterEach(() => vi.restoreAllMocks());

describe("API keys are stored hashed only", () => {
  it("the plaintext key never reaches D1, logs or error bodies", async () => {
    const logged: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const)
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
    const a = await newAccount(1);
    const bodies: string[] = [];
    for (const res of [
      await chat(a.key, user("hello")),
      await chat(a.key, { model: "nope/none", ...user("x") }),
      await chat(a.key, "{broken"),
      await get("/key", a.key),
      await get("/generation?id=gen-unknown", a.key),
      await chat(a.key + "0", user("x")), // a near miss
    ])
      bodies.push(await res.text());
    const secret = a.key.slice("sk-sy-v1-".length);
    for (const b of bodies) expect(b).not.toContain(secret);
    for (const line of logged) expect(line).not.toContain(secret);
    // Every text value of every D1 table.
    const tables = (
      await env.DB.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
      ).all<{ name: string }>()
    ).results;
    expect(tables.length).toBeGreaterThan(2);
    for (const { name } of tables) {
      const rows = (await env.DB.prepare(`SELECT * FROM "${name}"`).all()).results;
      expect(JSON.stringify(rows)).not.toContain(secret);
    }
    const stored = await env.DB.prepare("SELECT hash, label FROM api_keys WHERE hash = ?").bind(a.hash).first<{ hash: string; label: string }>();
    expect(stored!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored!.label).toBe(`${a.key.slice(0, 12)}...${a.key.slice(-3)}`);
  });
});

describe("secret comparison", () => {
  it("constantTimeEqual compares whole secrets, whatever their lengths", async () => {
    expect(await constantTimeEqual("token", "token")).toBe(true);
    expect(await constantTimeEqual("token", "tokem")).toBe(false);
    expect(await constantTimeEqual("token", "token-longer")).toBe(false);
    expect(await constantTimeEqual("", "x")).toBe(false);
  });

  it("the admin API answers 401 without the right token, with JSON", async () => {
    for (const authorization of [undefined, "Bearer wrong", "Bearer test-admin-tokeN", "test-admin-token", "Basic dGVzdA=="]) {
      const res = await call("/admin/accounts", {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ email: "x@example.test" }),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { code: 401, message: "Admin token required." } });
    }
  });
});

describe("no cross-account reads", () => {
  it("one account's key never sees another's generation, key or credits", async () => {
    const a = await newAccount(5);
    const b = await newAccount(7);
    const res = await chat(a.key, user("mine"));
    const id = res.headers.get("x-generation-id")!;
    expect((await get(`/generation?id=${id}`, b.key)).status).toBe(404);
    expect(((await (await get("/credits", b.key)).json()) as { data: { total_credits: number } }).data.total_credits).toBe(7);
    expect(((await (await get("/key", b.key)).json()) as { data: { label: string } }).data.label).toBe(b.label);
  });
});

describe("CORS", () => {
  it("the API is callable from browsers with a key; the admin API is not", async () => {
    const preflight = await call("/api/v1/chat/completions", {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type, x-title",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    const a = await newAccount(1);
    const res = await chat(a.key, user("x"), { origin: "https://app.example" });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("X-Generation-Id");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    // Errors and streams too, so a browser can read why a call failed and read the stream.
    const denied = await chat("sk-sy-v1-" + "0".repeat(64), user("x"), { origin: "https://app.example" });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toBe("*");
    const stream = await chat(a.key, { ...user("x"), stream: true }, { origin: "https://app.example" });
    expect(stream.headers.get("access-control-expose-headers")).toContain("X-Generation-Id");
    await stream.text();
    const missing = await call("/api/v1/nothing-here", { headers: { origin: "https://app.example" } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe("*");
    const adminPreflight = await call("/admin/accounts", {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(adminPreflight.headers.get("access-control-allow-origin")).toBeNull();
  });
});
