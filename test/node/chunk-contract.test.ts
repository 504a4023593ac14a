import { describe, it, expect } from "vitest";
import { chunkRewriter } from "../../src/protocols/inbound/openai-chat/chunk-rewriter.ts";
import type { PricedEndpoint } from "../../src/catalog/catalog.ts";
import { validateResponse } from "../contract/contract.ts";
import { accounted } from "./accounted-stream.ts";

// Carriers send chunks that OpenAI clients accept but the contract does not: `system_fingerprint: null`
// (the contract types it as a string) and choices without `finish_reason` (required, nullable). What the
// router relays must conform whichever way the chunk is rewritten: parsed (the first chunk) or by
// swapping the known head (every later one).
const endpoint = { inputNano: 100, outputNano: 200 } as PricedEndpoint;
const chunk = (fields: Record<string, unknown>) =>
  JSON.stringify({ id: "up-1", object: "chat.completion.chunk", created: 1700000000, model: "up-model", ...fields });
const relayed = (datas: string[]) => {
  const rewriter = accounted(chunkRewriter("gen-abc", "meta-llama/llama-3.1-8b-instruct", "Simulated", endpoint), endpoint);
  return datas.map((data) => {
    const out = rewriter.rewrite({ data, bytes: data.length });
    if (typeof out !== "string") throw new Error(out.message);
    return JSON.parse(out.slice("data: ".length)) as Record<string, unknown>;
  });
};

describe("relayed chunks conform to the contract's ChatStreamChunk whatever the carrier omits or nulls", () => {
  it.each([
    ["system_fingerprint: null", { system_fingerprint: null, choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }] }],
    ["no finish_reason", { choices: [{ index: 0, delta: { content: "hi" } }] }],
    ["both, with a role", { system_fingerprint: null, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }],
  ])("%s, on the first chunk and on later ones", (_name, fields) => {
    const chunks = relayed([chunk(fields), chunk(fields), chunk(fields)]);
    for (const c of chunks) {
      expect(validateResponse("/chat/completions", "post", 200, "text/event-stream", { data: c })).toEqual([]);
      expect(c.id).toBe("gen-abc");
      expect((c.choices as { delta: unknown }[])[0]!.delta).toEqual(fields.choices[0]!.delta);
    }
  });

  it("a carrier's string system_fingerprint and a real finish reason pass through unchanged", () => {
    const fields = { system_fingerprint: "fp_1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] };
    for (const c of relayed([chunk(fields), chunk(fields)])) {
      expect(c.system_fingerprint).toBe("fp_1");
      expect((c.choices as { finish_reason: unknown }[])[0]!.finish_reason).toBe("stop");
    }
  });
});
