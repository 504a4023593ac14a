import { describe, it, expect } from "vitest";
import { call, newAccount, ORIGIN } from "./helpers";

// A base URL set slightly wrong must say what is right, in the caller's own error shape (src/api/wrong-path.ts):
// the console's HTML "Page not found" made the openai SDK report `NotFoundError 404 <!doctype html>…`, and a
// 404 made Claude Code say the model "may not exist".
type Body = { type?: string; error: { code?: number; type?: string; message: string } };

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

async function answer(res: Response) {
  expect(res.headers.get("content-type")).toContain("application/json");
  return { status: res.status, body: (await res.json()) as Body };
}

const chatBody = { model: "openai/gpt-oss-20b", messages: [{ role: "user", content: "hi" }] };
const messagesBody = { model: "anthropic/claude-haiku-4.5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
const OPENAI_BASE = `The base URL for OpenAI and OpenRouter SDKs and Codex is ${ORIGIN}/api/v1.`;
const ANTHROPIC_BASE = `Anthropic's clients add /v1/messages to their base URL themselves, so it is ${ORIGIN}/api (Claude Code: ANTHROPIC_BASE_URL=${ORIGIN}/api).`;

describe("a route asked at the wrong path names the one meant, in the caller's style", () => {
  it.each([
    ["/v1/chat/completions", "no /api"],
    ["/api/chat/completions", "no /v1"],
    ["/api/v1/v1/chat/completions", "/v1 twice"],
    ["/chat/completions", "the bare origin"],
    ["/api/v1/chat/completions/chat/completions", "the route pasted as the base URL"],
  ])("POST %s (%s): OpenAI's 404 with the route and base URL", async (path) => {
    const a = await newAccount(1);
    const { status, body } = await answer(await post(path, chatBody, { authorization: `Bearer ${a.key}`, accept: "application/json" }));
    expect(status).toBe(404);
    expect(body).toEqual({
      error: { code: 404, message: `No route at POST ${path}: did you mean POST /api/v1/chat/completions? ${OPENAI_BASE}` },
    });
  });

  it.each([
    ["/api/v1/v1/messages", "ANTHROPIC_BASE_URL=…/api/v1, as Claude Code then asks"],
    ["/v1/messages", "ANTHROPIC_BASE_URL=the bare origin"],
    ["/api/v1/v1/messages?beta=true", "with Claude Code's query"],
  ])("POST %s (%s): Anthropic's 400 naming ANTHROPIC_BASE_URL=…/api", async (path) => {
    const res = await post(path, messagesBody, { "x-api-key": "sk-sy-v1-" + "0".repeat(64), "anthropic-version": "2023-06-01" });
    const { status, body } = await answer(res);
    // Not a 404: Claude Code shows its own "model may not exist" for every 404, and a 400's message as it is.
    expect(status).toBe(400);
    const pathOnly = path.replace(/\?.*/, "");
    expect(body).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: `No route at POST ${pathOnly}: did you mean POST /api/v1/messages? ${ANTHROPIC_BASE}` },
    });
  });

  it("Claude Code's token count at the doubled prefix names its route", async () => {
    const { status, body } = await answer(await post("/api/v1/v1/messages/count_tokens", messagesBody, { "anthropic-version": "2023-06-01" }));
    expect(status).toBe(400);
    expect(body.error.message).toContain("did you mean POST /api/v1/messages/count_tokens?");
  });

  it("Codex given …/api (no /v1): the Responses API's 404 naming /api/v1/responses", async () => {
    const { status, body } = await answer(await post("/api/responses", { model: "openai/gpt-5-mini", input: "hi" }));
    expect(status).toBe(404);
    expect(body).toEqual({
      error: {
        code: 404,
        type: "not_found_error",
        param: null,
        message: `No route at POST /api/responses: did you mean POST /api/v1/responses? ${OPENAI_BASE}`,
      },
    });
  });

  it("a GET route at the wrong path: the catalog meant, with its parameters", async () => {
    const models = await answer(await call("/v1/models"));
    expect(models).toEqual({
      status: 404,
      body: { error: { code: 404, message: `No route at GET /v1/models: did you mean GET /api/v1/models? ${OPENAI_BASE}` } },
    });
    const endpoints = await answer(await call("/api/models/openai/gpt-oss-20b/endpoints"));
    expect(endpoints.body.error.message).toContain("did you mean GET /api/v1/models/openai/gpt-oss-20b/endpoints?");
  });

  it("a route meant with another method names the method it takes", async () => {
    const { status, body } = await answer(await call("/v1/chat/completions"));
    expect(status).toBe(404);
    expect(body.error.message).toBe(`No route at GET /v1/chat/completions: did you mean POST /api/v1/chat/completions? ${OPENAI_BASE}`);
  });

  it("a path that means no route: where the API is, for every client", async () => {
    const base = `The API is at ${ORIGIN}/api/v1: the base URL for OpenAI and OpenRouter SDKs and Codex; the Anthropic SDK and Claude Code take ${ORIGIN}/api (ANTHROPIC_BASE_URL=${ORIGIN}/api).`;
    expect(await answer(await call("/api/v1/nothing-here"))).toEqual({
      status: 404,
      body: { error: { code: 404, message: `No route at GET /api/v1/nothing-here. ${base}` } },
    });
    expect(await answer(await post("/v1/completions", { model: "x", prompt: "hi" }))).toEqual({
      status: 404,
      body: { error: { code: 404, message: `No route at POST /v1/completions. ${base}` } },
    });
    // An Anthropic route this router does not have stays a 404, in Anthropic's shape.
    expect(await answer(await post("/api/v1/messages/batches", { requests: [] }, { "anthropic-version": "2023-06-01" }))).toEqual({
      status: 404,
      body: { type: "error", error: { type: "not_found_error", message: `No route at POST /api/v1/messages/batches. ${base}` } },
    });
  });
});

describe("a real route asked with a method it does not have: 404 (the spec's error table has no 405) with Allow", () => {
  it.each([
    ["GET", "/api/v1/chat/completions", "POST"],
    ["PUT", "/api/v1/embeddings", "POST"],
    ["DELETE", "/api/v1/models", "GET"],
  ])("%s %s: OpenAI's 404 naming %s", async (method, path, allowed) => {
    const res = await call(path, { method });
    expect(res.status).toBe(404);
    expect(res.headers.get("allow")).toBe(allowed);
    expect(await res.json()).toEqual({ error: { code: 404, message: `${method} ${path} is not offered: this route takes ${allowed}.` } });
  });

  it("GET /api/v1/messages: Anthropic's shape", async () => {
    const res = await call("/api/v1/messages");
    expect(res.status).toBe(404);
    expect(res.headers.get("allow")).toBe("POST");
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "not_found_error", message: "GET /api/v1/messages is not offered: this route takes POST." },
    });
  });

  it("PUT /api/v1/keys/<hash>: every method the route takes", async () => {
    const res = await call(`/api/v1/keys/${"a".repeat(64)}`, { method: "PUT" });
    expect(res.status).toBe(404);
    expect(res.headers.get("allow")).toBe("GET, PATCH, DELETE");
  });
});

describe("the console keeps its HTML pages", () => {
  it("a browser's unknown page, GET or form POST: HTML 404; the admin's 404 stays plain JSON", async () => {
    for (const init of [{}, { method: "POST", headers: { accept: "text/html,application/xhtml+xml" } }]) {
      const page = await call("/chat/completions", init);
      expect(page.status).toBe(404);
      expect(page.headers.get("content-type")).toContain("text/html");
    }
    const adminRes = await call("/admin/chat/completions", { headers: { authorization: "Bearer test-admin-token" } });
    expect(await answer(adminRes)).toEqual({ status: 404, body: { error: { code: 404, message: "Not found: GET /admin/chat/completions" } } });
  });
});
