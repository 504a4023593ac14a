import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatRequestSchema } from "../../src/request/chat-request";
import { anthropicBody } from "../../src/protocols/outbound/anthropic/request";
import { anthropicMessages } from "../../src/protocols/outbound/anthropic";

// A strict function tool (the Responses API's default) reaches Anthropic as a strict tool where the model
// takes structured outputs (strict tool use is part of that beta, whose flag goes with it); elsewhere the
// tool goes as before, its schema a guide.
const catalog = Catalog.parse(catalogJson);
type Json = Record<string, any>;
const CLOSED = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
const request = (model: string, strict: boolean | undefined) =>
  chatRequestSchema.parse({
    model,
    messages: [{ role: "user", content: "hi" }],
    tools: [{ type: "function", function: { name: "w", parameters: CLOSED, ...(strict === undefined ? {} : { strict }) } }],
  });

describe("Anthropic carrier: strict tools", () => {
  it.each<[string, string, boolean | undefined, boolean, string | null]>([
    ["strict, on a model with structured outputs: strict tool and the beta flag", "anthropic/claude-sonnet-4.5", true, true, "structured-outputs-2025-11-13"],
    ["not strict, on the same model: no strict, no flag", "anthropic/claude-sonnet-4.5", false, false, null],
    ["strict unsaid: no strict", "anthropic/claude-sonnet-4.5", undefined, false, null],
    ["strict, on a model without structured outputs: the tool as before", "anthropic/claude-haiku-4.5", true, false, null],
  ])("%s", (_, model, strict, sent, beta) => {
    const endpoint = catalog.endpoints(model)[0]!;
    const body = request(model, strict);
    const tool = ((anthropicBody(body, false, null, endpoint) as Json).tools as Json[])[0]!;
    expect(tool).toEqual({ name: "w", input_schema: CLOSED, ...(sent ? { strict: true } : {}) });
    expect(anthropicMessages.requestHeaders?.(body, endpoint)?.["anthropic-beta"] ?? null).toBe(beta);
  });
});
