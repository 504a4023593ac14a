import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { call, chat, newAccount, get } from "./helpers";

// Property: whatever arrives, the answer is a success or a 4xx JSON error in the spec's shape —
// never a 5xx, a hang or a stack trace.
async function expectWellFormed(res: Response): Promise<void> {
  expect(res.status).toBeLessThan(500);
  const type = res.headers.get("content-type") ?? "";
  const text = await res.text();
  expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack traces
  if (res.status >= 400) {
    expect(type).toMatch(/application\/json/);
    const body = JSON.parse(text) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(res.status);
    expect(typeof body.error.message).toBe("string");
  } else if (type.includes("text/event-stream")) {
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  } else JSON.parse(text);
}

const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom("user", "system", "assistant", "tool"), fc.string()),
    content: fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.constant(null), fc.array(fc.record({ type: fc.constant("text"), text: fc.string() }))),
  },
  { requiredKeys: [] },
);
const chatBody = fc.record(
  {
    model: fc.oneof(fc.constantFrom("openai/gpt-oss-20b:free", "router/auto", "nope/none", "", "openai/gpt-oss-20b:free/../x"), fc.string(), fc.integer()),
    messages: fc.oneof(fc.array(message, { maxLength: 4 }), fc.anything()),
    stream: fc.oneof(fc.boolean(), fc.anything()),
    max_tokens: fc.oneof(fc.integer({ min: -5, max: 50 }), fc.double(), fc.string()),
    temperature: fc.anything(),
    // The router's own fields (src/routing/router-fields.ts): checked here, never sent upstream.
    user: fc.oneof(fc.string(), fc.anything()),
    models: fc.oneof(fc.array(fc.constantFrom("openai/gpt-oss-20b:free", "nope/none", "")), fc.anything()),
    route: fc.anything(),
    session_id: fc.anything(),
    plugins: fc.anything(),
    provider: fc.anything(),
  },
  { requiredKeys: [] },
);

describe("bad input never breaks the service", { timeout: 30_000 }, () => {
  it("arbitrary chat bodies get a success or a 4xx JSON error", async () => {
    const a = await newAccount(1);
    await fc.assert(
      fc.asyncProperty(chatBody, async (body) => expectWellFormed(await chat(a.key, body))),
      { numRuns: 150 },
    );
  });

  it("arbitrary JSON values and raw strings as the body", async () => {
    const a = await newAccount(1);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string(),
          fc.string({ unit: "grapheme" }),
        ),
        async (raw) => expectWellFormed(await chat(a.key, raw)),
      ),
      { numRuns: 150 },
    );
  });

  it("deeply nested JSON, huge strings and many messages", async () => {
    const a = await newAccount(1);
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    await expectWellFormed(await chat(a.key, deep));
    let nested: unknown = "x";
    for (let i = 0; i < 5000; i++) nested = { n: nested };
    await expectWellFormed(await chat(a.key, { model: "openai/gpt-oss-20b:free", messages: [{ role: "user", content: "hi" }], extra: nested }));
    const many = await chat(a.key, { model: "openai/gpt-oss-20b:free", messages: Array.from({ length: 2049 }, () => ({ role: "user", content: "x" })) });
    expect(many.status).toBe(400);
    expect(((await many.json()) as { error: { message: string } }).error.message).toMatch(/2048/);
    await expectWellFormed(
      await chat(a.key, { model: "openai/gpt-oss-20b:free", messages: [{ role: "user", content: "\ud800 lone surrogate \u0000 \uffff 🚀" }] }),
    );
  });

  it("bad Authorization headers get 401 JSON", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 200 }).filter((s) => !/[\r\n\0]/.test(s)),
        async (value) => {
          let res: Response;
          try {
            res = await call("/api/v1/key", { headers: { authorization: value } });
          } catch {
            return; // a header value the Fetch API itself refuses never reaches the service
          }
          expect(res.status).toBe(401);
          await expectWellFormed(res);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("bad generation ids and catalog paths get 4xx JSON", async () => {
    const a = await newAccount(1);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), fc.string({ maxLength: 100 }), fc.string({ maxLength: 100 }), async (id, author, slug) => {
        await expectWellFormed(await get(`/generation?id=${encodeURIComponent(id)}`, a.key));
        await expectWellFormed(await call(`/api/v1/models/${encodeURIComponent(author)}/${encodeURIComponent(slug)}/endpoints`));
      }),
      { numRuns: 50 },
    );
  });
});
