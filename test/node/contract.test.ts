import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import catalogJson from "../../catalog.json";
import { checkResponse, type Checked } from "../contract/check-response.ts";
import { validateResponse } from "../contract/contract.ts";
import { SHARED_CONTRACT, VENDORED_CONTRACT } from "../contract/contract-file.ts";
import {
  bearer,
  localD1,
  newAccount,
  newKey,
  newManagementKey,
  postChat,
  startServiceFixture,
  storedRecordCount,
  waitForGeneration,
  type ServiceFixture,
} from "./service-fixture.ts";

// Every response of every endpoint the service answers, success and error, JSON and each stream
// chunk, validated against the schemas of OpenRouter's contract (test/contract/contract.ts), against
// the service started as `npm start` starts it.
let f: ServiceFixture;
type Account = Awaited<ReturnType<typeof newAccount>>;
let rich: Account; // $10, a key without a limit: the completions
let broke: Account; // no credits
let disabledKey: string;
let spentKey: string; // a key whose limit is below what it has spent
let managementKey: string; // rich's management key
let expiredKey: string; // a key of rich's whose expires_at has passed

const LLAMA = "meta-llama/llama-3.1-8b-instruct"; // no reasoning
const GPT_OSS = "openai/gpt-oss-20b"; // reasoning (`reasoning`)
const R1 = "deepseek/deepseek-r1-0528"; // reasoning, played as `reasoning_content`
const UNKNOWN_KEY = "sk-sy-v1-" + "0".repeat(64);
const LOOKUP_TOOL = {
  type: "function",
  function: { name: "lookup", description: "Look a word up", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } },
};

beforeAll(async () => {
  f = await startServiceFixture("contract");
  rich = await newAccount(f, 10);
  broke = await newAccount(f);
  const disabled = await newKey(f, rich.id);
  await f.admin.request("POST", `/keys/${disabled.hash}/disable`);
  disabledKey = disabled.key;
  spentKey = await keyOverItsLimit();
  managementKey = (await newManagementKey(f, rich.id)).key;
  const expired = await newKey(f, rich.id);
  // Never used, so no isolate has it cached: the next request reads this row.
  await localD1(f, `UPDATE api_keys SET expires_at = 1 WHERE hash = '${expired.hash.replace(/[^0-9a-f]/g, "")}'`);
  expiredKey = expired.key;
});
afterAll(async () => {
  await f?.stop();
});

/** A key that spent on a paid model, then was given a limit of half that (as `set-key-limit` does). */
async function keyOverItsLimit(): Promise<string> {
  const a = await newAccount(f, 10);
  const res = await postChat(f, a.key, { model: LLAMA, messages: [{ role: "user", content: "spend [sim tokens=20]" }] });
  expect(res.status).toBe(200);
  await res.body?.cancel();
  const deadline = Date.now() + 15_000;
  let usage = 0;
  // Bounded polling: the spend reaches the key's usage once the request has settled.
  while (usage === 0 && Date.now() < deadline) {
    usage = ((await (await api("/key", { headers: bearer(a.key) })).json()) as { data: { usage: number } }).data.usage;
    if (usage === 0) await new Promise((r) => setTimeout(r, 25));
  }
  expect(usage).toBeGreaterThan(0);
  await f.admin.request("POST", `/keys/${a.hash}/limit`, { limit: usage / 2 });
  return a.key;
}

const api = (path: string, init?: RequestInit) => fetch(`${f.url}/api/v1${path}`, init);
const check = async (method: string, path: string, init?: RequestInit) => checkResponse(await api(path, { method, ...init }), path, method);
const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({ messages: [{ role: "user", content }], ...extra });
const checkChat = async (key: string, body: unknown) => checkResponse(await postChat(f, key, body), "/chat/completions", "POST");
/** The response conforms; its problems are the failure message. */
const conforms = (c: Checked) => expect(c.problems, JSON.stringify(c.json ?? c.events).slice(0, 2000)).toEqual([]);

async function checkGeneration(key: string, id: string): Promise<Checked> {
  const c = await checkResponse(await waitForGeneration(f, key, id), `/generation?id=${id}`, "GET");
  conforms(c);
  expect(c.json.data.id).toBe(id);
  return c;
}

describe("the contract file", () => {
  it.skipIf(!existsSync(SHARED_CONTRACT))("the vendored copy is byte-identical to the shared contract", () => {
    expect(readFileSync(VENDORED_CONTRACT).equals(readFileSync(SHARED_CONTRACT))).toBe(true);
  });

  it("the validator refuses what the contract does not allow", () => {
    const error = { error: { code: 400, message: "x" } };
    expect(validateResponse("/generation", "GET", 400, "application/json", error)).toEqual([expect.stringMatching(/status not documented/)]);
    expect(validateResponse("/credits", "GET", 200, "text/html", { data: { total_credits: 1, total_usage: 0 } })).toEqual([
      expect.stringMatching(/content type/),
    ]);
    expect(validateResponse("/credits", "GET", 200, "application/json", { data: { total_credits: 1 } })).toEqual([expect.stringMatching(/total_usage/)]);
    expect(validateResponse("/chat/completions", "POST", 200, "text/event-stream", { data: { id: "x", choices: [] } }).length).toBeGreaterThan(0);
    // The one status the spec requires and the contract cannot list: 404 for a route that does not exist.
    expect(validateResponse("/nope", "GET", 404, "application/json", { error: { code: 404, message: "Not found" } })).toEqual([]);
    expect(validateResponse("/nope", "GET", 404, "application/json", { message: "Not found" }).length).toBeGreaterThan(0);
    expect(validateResponse("/nope", "GET", 500, "application/json", { error: { code: 500, message: "x" } })).toEqual([
      expect.stringMatching(/no such operation/),
    ]);
  });
});

describe("public catalog", () => {
  it("GET /models lists every completion model of catalog.json", async () => {
    const c = await check("GET", "/models");
    conforms(c);
    expect(c.status).toBe(200);
    // Without a filter, the text-output models (the contract's default output_modalities); embeddings models on asking.
    expect(c.json.data.map((m: { id: string }) => m.id)).toEqual(catalogJson.models.filter((m) => m.output_modalities.includes("text")).map((m) => m.id));
  });

  it("GET /models, one page of a filtered list (links.next set)", async () => {
    const c = await check("GET", "/models?supported_parameters=tools&offset=1&limit=3");
    conforms(c);
    expect(c.json.data).toHaveLength(3);
    expect(c.json.links.next).toMatch(/offset=4/);
  });

  it.each(catalogJson.models.map((m) => [m.id, m.endpoints.length] as const))("GET /models/%s/endpoints", async (id, carriers) => {
    const c = await check("GET", `/models/${id}/endpoints`);
    conforms(c);
    expect(c.status).toBe(200);
    expect(c.json.data.id).toBe(id);
    expect(c.json.data.endpoints).toHaveLength(carriers);
  });

  it("GET /providers lists every carrier", async () => {
    const c = await check("GET", "/providers");
    conforms(c);
    expect(c.json.data.map((p: { slug: string }) => p.slug)).toEqual(catalogJson.providers.map((p) => p.slug));
  });
});

describe("account", () => {
  it("GET /credits", async () => {
    const a = await newAccount(f, 25);
    const c = await check("GET", "/credits", { headers: bearer(a.key) });
    conforms(c);
    expect(c.json).toEqual({ data: { total_credits: 25, total_usage: 0 } });
  });

  it.each([
    ["without a limit", undefined],
    ["with a limit", 5],
  ] as const)("GET /key %s", async (_, limit) => {
    const a = await newAccount(f, 1, limit);
    const c = await check("GET", "/key", { headers: bearer(a.key) });
    conforms(c);
    expect(c.json.data).toMatchObject({ label: a.label, usage: 0, limit: limit ?? null, limit_remaining: limit ?? null, disabled: false, is_free_tier: false });
  });
});

type ChatCase = { name: string; model: string; content: string; extra?: Record<string, unknown>; reasoning?: boolean; tool?: boolean; free?: boolean };
const CHAT_CASES: ChatCase[] = [
  { name: "no reasoning", model: LLAMA, content: "Hello [sim tokens=6]" },
  { name: "reasoning", model: GPT_OSS, content: "Think [sim tokens=8]", reasoning: true },
  { name: "reasoning as reasoning_content", model: R1, content: "Think [sim tokens=8 reasoning_content]", reasoning: true },
  { name: "a tool call", model: LLAMA, content: "Look it up [sim tool_call tokens=5]", extra: { tools: [LOOKUP_TOOL] }, tool: true },
  { name: "the carrier's own provider field", model: LLAMA, content: "Hi [sim provider_field tokens=4]" },
  { name: "a free model", model: "openai/gpt-oss-20b:free", content: "Free [sim tokens=4]", reasoning: true, free: true },
  // Native carriers: their answers and streams, translated, conform too — cache reads and writes in the usage, signed thinking, tool calls.
  { name: "Anthropic, cache read and write", model: "anthropic/claude-haiku-4.5", content: `${"ctx ".repeat(60)} [sim tokens=6 cache_read=20 cache_write=10]` },
  {
    name: "Anthropic, signed thinking",
    model: "anthropic/claude-sonnet-4.5",
    content: "Think [sim tokens=8]",
    extra: { max_tokens: 3000, reasoning: { effort: "low" } },
    reasoning: true,
  },
  {
    name: "Anthropic, a tool call",
    model: "anthropic/claude-haiku-4.5",
    content: "Look it up [sim tool_call tokens=5]",
    extra: { tools: [LOOKUP_TOOL] },
    tool: true,
  },
  {
    name: "Gemini, thoughts shown and a cache read",
    model: "google/gemini-2.5-flash",
    content: `${"ctx ".repeat(60)} [sim tokens=8 cache_read=20]`,
    extra: { reasoning: { effort: "low" } },
    reasoning: true,
  },
  {
    name: "Gemini, a tool call",
    model: "google/gemini-2.5-pro",
    content: "Look it up [sim tool_call tokens=5]",
    extra: { tools: [LOOKUP_TOOL] },
    tool: true,
    reasoning: true,
  },
  { name: "OpenAI, a cache read", model: "openai/gpt-5-mini", content: `${"ctx ".repeat(60)} [sim tokens=6 cache_read=20]`, reasoning: true },
];

describe.each(CHAT_CASES)("POST /chat/completions: $name", ({ model, content, extra, reasoning, tool, free }) => {
  it("non-stream, and its generation", async () => {
    const c = await checkChat(rich.key, { model, ...chatBody(content, extra) });
    conforms(c);
    expect(c.status).toBe(200);
    const { id, usage, choices } = c.json;
    expect(id).toMatch(/^gen-/);
    expect(c.json).toMatchObject({ model, object: "chat.completion", provider: expect.any(String) });
    if (tool) expect(choices[0].message.tool_calls[0].function.name).toBe("lookup");
    else expect(choices[0].message.content.length).toBeGreaterThan(0);
    if (free) expect(usage.cost).toBe(0);
    else expect(usage.cost).toBeGreaterThan(0);

    const g = (await checkGeneration(rich.key, id)).json.data;
    expect(g).toMatchObject({ model, streamed: false, status: 200, total_cost: usage.cost, tokens_completion: usage.completion_tokens, data_region: "global" });
    expect(g.native_tokens_reasoning > 0).toBe(reasoning === true);
  });

  it("stream: every chunk, and its generation", async () => {
    const res = await postChat(f, rich.key, { model, stream: true, ...chatBody(content, extra) });
    const header = res.headers.get("x-generation-id");
    const c = await checkResponse(res, "/chat/completions", "POST");
    conforms(c);
    expect(c.status).toBe(200);
    const chunks = c.events.slice(0, -1);
    expect(new Set(chunks.map((ch) => ch.id))).toEqual(new Set([header]));
    expect(chunks.every((ch) => ch.model === model && ch.object === "chat.completion.chunk")).toBe(true);
    const deltas = chunks.flatMap((ch) => ch.choices.map((choice: { delta: Record<string, unknown> }) => choice.delta));
    if (tool) expect(deltas.some((d) => Array.isArray(d.tool_calls))).toBe(true);
    else expect(deltas.map((d) => d.content ?? "").join("").length).toBeGreaterThan(0);
    const { usage } = chunks.at(-1);
    if (free) expect(usage.cost).toBe(0);
    else expect(usage.cost).toBeGreaterThan(0);

    const g = (await checkGeneration(rich.key, header!)).json.data;
    expect(g).toMatchObject({ model, streamed: true, status: 200, total_cost: usage.cost, tokens_completion: usage.completion_tokens });
    expect(g.native_tokens_reasoning > 0).toBe(reasoning === true);
  });
});

describe("a request that falls back to another model, with routing metadata", () => {
  // Every carrier of the first model fails; the second model serves. The answer, each chunk and the record name it.
  const FIRST = "mistralai/mistral-nemo"; // deepinfra, nebius
  const SECOND = "qwen/qwen3-32b"; // none of FIRST's carriers
  const outage = catalogJson.models
    .find((m) => m.id === FIRST)!
    .endpoints.map((e) => `[sim carrier=${e.provider} status=503]`)
    .join(" ");
  const META = { "x-openrouter-metadata": "enabled" };
  it.each([false, true])("stream: %s", async (stream) => {
    const res = await postChat(f, rich.key, { model: FIRST, models: [SECOND], stream, ...chatBody(`x ${outage}`) }, META);
    const id = res.headers.get("x-generation-id")!;
    const c = await checkResponse(res, "/chat/completions", "POST");
    conforms(c);
    expect(c.status).toBe(200);
    const meta = stream ? c.events.at(-2).openrouter_metadata : c.json.openrouter_metadata;
    expect(meta).toMatchObject({ requested: FIRST, strategy: "fallback", attempt: 3 });
    expect(meta.attempts.map((a: { model: string; status: number }) => [a.model, a.status])).toEqual([
      [FIRST, 503],
      [FIRST, 503],
      [SECOND, 200],
    ]);
    const g = (await checkGeneration(rich.key, id)).json.data;
    expect(g).toMatchObject({ model: SECOND, status: 200, routing_strategy: "fallback" });
    expect(g.provider_responses.map((r: { status: number }) => r.status)).toEqual([503, 503, 200]);
  });
});

describe.each([
  { name: "the connection reset", content: "x [sim tokens=12 reset_after=4]", message: /lost mid-stream/ },
  { name: "a malformed chunk", content: "x [sim tokens=12 malformed]", message: /malformed/ },
])("a stream that fails mid-way: $name", ({ content, message }) => {
  it.each([LLAMA, GPT_OSS])("%s: every chunk, the error chunk and the failed generation", async (model) => {
    const res = await postChat(f, rich.key, { model, stream: true, ...chatBody(content) });
    const id = res.headers.get("x-generation-id")!;
    const c = await checkResponse(res, "/chat/completions", "POST");
    conforms(c);
    expect(c.status).toBe(200);
    const last = c.events.at(-2);
    expect(last.error).toMatchObject({ code: 502, message: expect.stringMatching(message) });
    expect(last.choices[0].finish_reason).toBe("error");

    const g = (await checkGeneration(rich.key, id)).json.data;
    expect(g).toMatchObject({ status: 502, streamed: true, total_cost: 0, finish_reason: "error" });
  });
});

describe("a failed non-stream generation", () => {
  it.each([LLAMA, GPT_OSS])("%s: the 502 answer and its record", async (model) => {
    const a = await newAccount(f, 5);
    const res = await postChat(f, a.key, { model, ...chatBody("x [sim status=500]") });
    const id = res.headers.get("x-generation-id");
    const c = await checkResponse(res, "/chat/completions", "POST");
    conforms(c);
    expect(c.status).toBe(502);
    expect(await storedRecordCount(f, a.id)).toBe(1);
    const g = (await checkGeneration(a.key, id!)).json.data;
    expect(g).toMatchObject({ model, status: 502, streamed: false, total_cost: 0 });
  });
});

type ErrorCase = { name: string; status: number; method: string; path: string; init: () => RequestInit; message?: RegExp };
const post = (key: string | null, body: unknown): RequestInit => ({
  headers: { ...(key === null ? {} : bearer(key)), "content-type": "application/json" },
  body: typeof body === "string" ? body : JSON.stringify(body),
});
const KEYED: Array<[string, string, () => RequestInit]> = [
  ["POST", "/chat/completions", () => post(null, { model: LLAMA, ...chatBody("x") })],
  ["GET", "/generation?id=gen-0000", () => ({})],
  ["GET", "/key", () => ({})],
  ["GET", "/credits", () => ({})],
  ["GET", "/keys", () => ({})],
  ["POST", "/keys", () => post(null, { name: "x" })],
  ["GET", `/keys/${"0".repeat(64)}`, () => ({})],
  ["PATCH", `/keys/${"0".repeat(64)}`, () => post(null, { name: "x" })],
  ["DELETE", `/keys/${"0".repeat(64)}`, () => ({})],
];
const withKey = (init: RequestInit, key: string): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string>), ...bearer(key) } });
const ERRORS: ErrorCase[] = [
  { name: "body not JSON", status: 400, method: "POST", path: "/chat/completions", init: () => post(rich.key, "{not json") },
  { name: "empty messages", status: 400, method: "POST", path: "/chat/completions", init: () => post(rich.key, { model: LLAMA, messages: [] }) },
  {
    name: "unknown model",
    status: 400,
    method: "POST",
    path: "/chat/completions",
    init: () => post(rich.key, { model: "nobody/nothing", ...chatBody("x") }),
    message: /not in the catalog/,
  },
  { name: "bad /models query", status: 400, method: "GET", path: "/models?limit=0", init: () => ({}) },
  ...KEYED.flatMap(([method, path, init]): ErrorCase[] => [
    { name: `${path}: no key`, status: 401, method, path, init },
    { name: `${path}: unknown key`, status: 401, method, path, init: () => withKey(init(), UNKNOWN_KEY) },
    { name: `${path}: disabled key`, status: 401, method, path, init: () => withKey(init(), disabledKey) },
    { name: `${path}: expired key`, status: 401, method, path, init: () => withKey(init(), expiredKey), message: /expired at 1970-01-01T00:00:00\.001Z/ },
  ]),
  ...KEYED.filter(([, path]) => path.startsWith("/keys")).map(([method, path, init]): ErrorCase => ({
    name: `${path}: not a management key`,
    status: 403,
    method,
    path,
    init: () => withKey(init(), rich.key),
    message: /management keys/,
  })),
  {
    name: "a management key runs no completions",
    status: 403,
    method: "POST",
    path: "/chat/completions",
    init: () => post(managementKey, { model: LLAMA, ...chatBody("x") }),
    message: /management key/,
  },
  { name: "create a key: unknown field", status: 400, method: "POST", path: "/keys", init: () => post(managementKey, { name: "x", colour: "red" }) },
  { name: "create a key: bad limit_reset", status: 400, method: "POST", path: "/keys", init: () => post(managementKey, { name: "x", limit_reset: "hourly" }) },
  {
    name: "create a key: expires_at not in UTC",
    status: 400,
    method: "POST",
    path: "/keys",
    init: () => post(managementKey, { name: "x", expires_at: "2099-01-01T00:00:00+02:00" }),
  },
  { name: "list keys: bad offset", status: 400, method: "GET", path: "/keys?offset=-1", init: () => withKey({}, managementKey) },
  {
    name: "update a key: empty body",
    status: 400,
    method: "PATCH",
    path: `/keys/${"0".repeat(64)}`,
    init: () => ({ ...post(managementKey, {}), method: "PATCH" }),
  },
  { name: "unknown key hash", status: 404, method: "GET", path: `/keys/${"0".repeat(64)}`, init: () => withKey({}, managementKey) },
  {
    name: "update an unknown key",
    status: 404,
    method: "PATCH",
    path: `/keys/${"0".repeat(64)}`,
    init: () => ({ ...post(managementKey, { name: "y" }), method: "PATCH" }),
  },
  { name: "delete an unknown key", status: 404, method: "DELETE", path: `/keys/${"0".repeat(64)}`, init: () => withKey({}, managementKey) },
  {
    name: "no balance for a paid model",
    status: 402,
    method: "POST",
    path: "/chat/completions",
    init: () => post(broke.key, { model: LLAMA, ...chatBody("x") }),
    message: /settings\/credits/,
  },
  {
    name: "key limit reached",
    status: 402,
    method: "POST",
    path: "/chat/completions",
    init: () => post(spentKey, { model: LLAMA, ...chatBody("x") }),
    message: /credit limit/,
  },
  { name: "unknown generation", status: 404, method: "GET", path: "/generation?id=gen-doesnotexist0", init: () => withKey({}, rich.key) },
  { name: "generation without an id", status: 404, method: "GET", path: "/generation", init: () => withKey({}, rich.key), message: /id/ },
  { name: "unknown model's endpoints", status: 404, method: "GET", path: "/models/nobody/nothing/endpoints", init: () => ({}) },
  { name: "unknown route", status: 404, method: "GET", path: "/nope", init: () => ({}) },
  { name: "a method the route does not have", status: 404, method: "GET", path: "/chat/completions", init: () => ({}) },
  {
    name: "body over 4 MiB",
    status: 413,
    method: "POST",
    path: "/chat/completions",
    init: () => post(rich.key, { model: LLAMA, ...chatBody("x".repeat(4 * 1024 * 1024)) }),
  },
  {
    name: "carriers rate-limit",
    status: 429,
    method: "POST",
    path: "/chat/completions",
    init: () => post(rich.key, { model: LLAMA, ...chatBody("x [sim status=429]") }),
  },
  {
    name: "carriers rate-limit a stream",
    status: 429,
    method: "POST",
    path: "/chat/completions",
    init: () => post(rich.key, { model: LLAMA, stream: true, ...chatBody("x [sim status=429]") }),
  },
  {
    name: "carrier error",
    status: 502,
    method: "POST",
    path: "/chat/completions",
    init: () => post(rich.key, { model: GPT_OSS, ...chatBody("x [sim status=500]") }),
    message: /simulated 500/,
  },
  {
    name: "no carrier can serve",
    status: 503,
    method: "POST",
    path: "/chat/completions",
    init: () => post(rich.key, { model: LLAMA, ...chatBody("x [sim status=503]") }),
  },
];

describe("errors (the spec's error table)", () => {
  it.each(ERRORS)("$status $name: $method $path", async ({ status, method, path, init, message }) => {
    const c = await check(method, path, init());
    conforms(c);
    expect(c.status).toBe(status);
    expect(c.json.error.code).toBe(status);
    if (message) expect(c.json.error.message).toMatch(message);
  });
});

describe("key management (/keys) and GET /key of every kind of key", () => {
  const keysApi = (method: string, path: string, body?: unknown) =>
    check(method, path, body === undefined ? withKey({}, managementKey) : { ...post(managementKey, body), method });

  it("create (201, with every optional field), get, list, update, delete: every answer conforms", async () => {
    const created = await keysApi("POST", "/keys", {
      name: "ci budget",
      limit: 5,
      limit_reset: "weekly",
      include_byok_in_limit: true,
      expires_at: "2099-12-31T23:59:59Z",
    });
    conforms(created);
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      name: "ci budget",
      limit: 5,
      limit_remaining: 5,
      limit_reset: "weekly",
      include_byok_in_limit: true,
      disabled: false,
      usage: 0,
    });
    expect(created.json.key).toMatch(/^sk-sy-v1-[0-9a-f]{64}$/);
    const hash = created.json.data.hash as string;

    const one = await keysApi("GET", `/keys/${hash}`);
    conforms(one);
    expect(one.json.data.hash).toBe(hash);
    expect(one.json).not.toHaveProperty("key"); // shown once, at creation

    const updated = await keysApi("PATCH", `/keys/${hash}`, { name: "renamed", disabled: true, limit: null, limit_reset: null });
    conforms(updated);
    expect(updated.json.data).toMatchObject({ name: "renamed", disabled: true, limit: null, limit_remaining: null, limit_reset: null });

    const active = await keysApi("GET", "/keys");
    conforms(active);
    expect(active.json.data.map((k: { hash: string }) => k.hash)).not.toContain(hash); // disabled: listed only on request
    const all = await keysApi("GET", "/keys?include_disabled=true&offset=0");
    conforms(all);
    expect(all.json.data.map((k: { hash: string }) => k.hash)).toContain(hash);

    const deleted = await keysApi("DELETE", `/keys/${hash}`);
    conforms(deleted);
    expect(deleted.json).toEqual({ deleted: true });
  });

  it("a key made through /keys runs completions charged to the management key's account; its GET /key conforms", async () => {
    const created = await keysApi("POST", "/keys", { name: "app", limit: 1, limit_reset: "daily" });
    const key = created.json.key as string;
    const chat = await checkChat(key, { model: LLAMA, ...chatBody("hi [sim tokens=3]") });
    conforms(chat);
    expect(chat.status).toBe(200);
    await checkGeneration(rich.key, chat.json.id); // the management key's account owns it
    const me = await check("GET", "/key", withKey({}, key));
    conforms(me);
    expect(me.json.data).toMatchObject({ is_management_key: false, limit: 1, limit_reset: "daily", expires_at: null });
  });

  it("GET /key of a management key conforms and says what it is", async () => {
    const me = await check("GET", "/key", withKey({}, managementKey));
    conforms(me);
    expect(me.json.data).toMatchObject({ is_management_key: true, limit: null });
  });
});

describe("the free-model rate limit", () => {
  it("429 rate_limit_exceeded conforms, with the X-RateLimit headers", async () => {
    const a = await newAccount(f, 1);
    for (let i = 0; i < 20; i++) {
      const res = await postChat(f, a.key, { model: "openai/gpt-oss-20b:free", ...chatBody(`free ${i} [sim tokens=1]`) });
      expect(res.status).toBe(200);
      await res.body?.cancel();
    }
    const res = await postChat(f, a.key, { model: "openai/gpt-oss-20b:free", ...chatBody("one too many") });
    expect([res.headers.get("x-ratelimit-limit"), res.headers.get("x-ratelimit-remaining")]).toEqual(["20", "0"]);
    const c = await checkResponse(res, "/chat/completions", "POST");
    conforms(c);
    expect(c.status).toBe(429);
    expect(c.json.error.metadata.error_type).toBe("rate_limit_exceeded");
  });
});
