import { describe, it, expect } from "vitest";
import * as z from "zod";
import { chatRequestSchema } from "../../src/request/chat-request";
import { sparseParser } from "../../src/request/sparse-parse";

/** What a parse gives, key order included: the sparse parser must give exactly this. */
function outcome(r: z.ZodSafeParseResult<unknown>): unknown {
  return r.success ? { ok: JSON.stringify(r.data), keys: Object.keys(r.data as object) } : { issues: r.error.issues };
}

const messages = [{ role: "user", content: "Hi" }];
const chatInputs: Array<[string, Record<string, unknown>]> = [
  ["the least a request sends", { model: "a/b", messages }],
  ["fields in another order than the shape's", { stream: true, messages, max_tokens: 5, model: "a/b", temperature: 0.2 }],
  [
    "many fields",
    {
      model: "a/b",
      models: ["a/b", "c/d"],
      messages,
      top_p: 0.9,
      seed: 1,
      stop: ["x"],
      user: "u",
      provider: { order: ["x"], allow_fallbacks: false },
      usage: { include: true },
    },
  ],
  ["nulls where fields are nullish", { model: "a/b", messages, max_tokens: null, temperature: null }],
  ["fields the schema does not know (kept: loose)", { model: "a/b", messages, zzz: 1, another: { deep: true } }],
  ["a field present as undefined", { model: "a/b", messages, stream: undefined }],
  ["a wrong type in an optional field", { model: "a/b", messages, temperature: "hot" }],
  ["two wrong fields", { model: 5, messages, max_tokens: -1 }],
  ["bad messages", { model: "a/b", messages: [{ role: 3 }] }],
  ["messages not an array", { model: "a/b", messages: "hi" }],
  ["a bad provider preference", { model: "a/b", messages, provider: { sort: "fastest-ever" } }],
  ["__proto__ as an own key", JSON.parse('{"__proto__": {"x": 1}, "model": "a/b", "messages": [{"role": "user", "content": "Hi"}]}')],
];

describe("sparseParser", () => {
  it.each(chatInputs)("gives the chat schema's own result: %s", (_, input) => {
    const parse = sparseParser(chatRequestSchema);
    expect(outcome(parse(input))).toEqual(outcome(chatRequestSchema.safeParse(input)));
    expect(outcome(parse(input)), "the second parse of a set, from its kept schema").toEqual(outcome(chatRequestSchema.safeParse(input)));
  });

  const small = z
    .object({ need: z.string(), dflt: z.number().default(7), ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}`, z.int().optional()])) })
    .loose();

  it("runs required fields and defaulted ones even when absent", () => {
    const parse = sparseParser(small);
    expect(outcome(parse({ f3: 1 }))).toEqual(outcome(small.safeParse({ f3: 1 })));
    const ok = parse({ need: "x", f1: 2 });
    expect(ok.success && ok.data).toEqual({ need: "x", dflt: 7, f1: 2 });
  });

  it("past the sets it keeps schemas for, still gives the schema's own result", () => {
    const parse = sparseParser(small);
    // 1,024 distinct sets of present fields, past the 256 kept; each one valid and one invalid.
    for (let mask = 0; mask < 1024; mask++) {
      const input: Record<string, unknown> = { need: "x" };
      for (let i = 0; i < 10; i++) if (mask & (1 << i)) input[`f${i}`] = mask % 3 === 0 && i === 0 ? "bad" : i;
      expect(outcome(parse(input)), `set ${mask}`).toEqual(outcome(small.safeParse(input)));
    }
  });
});
