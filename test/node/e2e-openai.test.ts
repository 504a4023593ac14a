import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { APIError, NotFoundError } from "openai";
import { startLocalService, DEV_ADMIN_TOKEN, type LocalService } from "../../scripts/local-service.ts";
import { AdminClient } from "../../scripts/admin-client.ts";
import { ensureDemoAccount } from "../../scripts/demo-account.ts";

// The service started the way `npm start` starts it, driven by the official openai client.
let service: LocalService;
let admin: AdminClient;
let state: string;
let demoKey: string;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "switchyard-e2e-"));
  service = await startLocalService({ port: 0, persistTo: join(state, "wrangler"), quiet: true });
  admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
  demoKey = (await ensureDemoAccount(admin, service.url, join(state, "demo-key"))).key;
});

afterAll(async () => {
  await service?.stop();
  rmSync(state, { recursive: true, force: true });
});

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${service.url}/api/v1`, maxRetries: 0, timeout: 20_000 });

describe("openai client against the local service", () => {
  it("the demo account exists with $10.00 and its key works", async () => {
    const res = await fetch(`${service.url}/api/v1/credits`, { headers: { authorization: `Bearer ${demoKey}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { total_credits: number } }).data.total_credits).toBe(10);
    expect((await ensureDemoAccount(admin, service.url, join(state, "demo-key"))).created).toBe(false);
  });

  it("non-stream completion", async () => {
    const completion = await client(demoKey).chat.completions.create({
      model: "meta-llama/llama-3.1-8b-instruct",
      messages: [{ role: "user", content: "Say hi [sim tokens=5]" }],
    });
    expect(completion.id).toMatch(/^gen-/);
    expect(completion.model).toBe("meta-llama/llama-3.1-8b-instruct");
    expect((completion as unknown as { provider: string }).provider).toBeTypeOf("string");
    expect(completion.choices[0]!.message.content!.trim().split(/\s+/)).toHaveLength(5);
    expect(completion.usage!.completion_tokens).toBe(5);
    expect((completion.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
  });

  it("stream: chunks share one id equal to X-Generation-Id, and the last chunk carries usage with cost", async () => {
    const { data: stream, response } = await client(demoKey)
      .chat.completions.create({
        model: "meta-llama/llama-3.1-8b-instruct",
        stream: true,
        messages: [{ role: "user", content: "Stream please [sim tokens=7]" }],
      })
      .withResponse();
    const header = response.headers.get("x-generation-id");
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(header).toMatch(/^gen-/);
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set([header]));
    expect(chunks.every((c) => c.model === "meta-llama/llama-3.1-8b-instruct")).toBe(true);
    const content = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
    expect(content.trim().split(/\s+/)).toHaveLength(7);
    const last = chunks.at(-1)!;
    expect(last.usage?.completion_tokens).toBe(7);
    expect((last.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
  });

  it("SDK errors: 400 for an unknown model, 401 for a bad key, 402 without credits", async () => {
    const expectStatus = async (p: Promise<unknown>, status: number, message: RegExp) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(status);
      expect((err as APIError).message).toMatch(message);
    };
    await expectStatus(
      client(demoKey).chat.completions.create({ model: "nobody/nothing", messages: [{ role: "user", content: "x" }] }),
      400,
      /not in the catalog/,
    );
    await expectStatus(
      client("sk-sy-v1-" + "0".repeat(64)).chat.completions.create({ model: "openai/gpt-oss-20b", messages: [{ role: "user", content: "x" }] }),
      401,
      /Invalid API key/,
    );
    const broke = await admin.request<{ id: string }>("POST", "/accounts", { email: `broke-${Date.now()}@example.test` });
    const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: broke.id });
    await expectStatus(
      client(key).chat.completions.create({ model: "openai/gpt-oss-20b", messages: [{ role: "user", content: "x" }] }),
      402,
      /settings\/credits/,
    );
  });

  it.each(["", "/v1", "/api"])("a base URL of <origin>%s: NotFoundError naming the route and base URL meant", async (suffix) => {
    const wrong = new OpenAI({ apiKey: demoKey, baseURL: `${service.url}${suffix}`, maxRetries: 0, timeout: 20_000 });
    const err = await wrong.chat.completions.create({ model: "openai/gpt-oss-20b", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    // Was `404 <!doctype html>…`: the console's page, not the API's answer.
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).message).toBe(
      `404 No route at POST ${suffix}/chat/completions: did you mean POST /api/v1/chat/completions? The base URL for OpenAI and OpenRouter SDKs and Codex is ${service.url}/api/v1.`,
    );
  });
});
