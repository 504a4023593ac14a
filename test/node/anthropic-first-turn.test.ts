import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatRequestSchema } from "../../src/request/chat-request";
import { anthropicBody, OPENING_USER_TURN } from "../../src/protocols/outbound/anthropic/request";

// Anthropic's Messages API refuses a conversation whose first turn is not the user's; other APIs (the
// Responses API's history, Chat Completions) take one that opens with the assistant, or has only a
// system prompt. The Anthropic carrier adapter puts a minimal user turn first, so every inbound API is served.
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("anthropic/claude-haiku-4.5")[0]!;
type Json = Record<string, any>;
const turns = (messages: Json[]) =>
  (anthropicBody(chatRequestSchema.parse({ model: "anthropic/claude-haiku-4.5", messages }), false, null, endpoint) as Json).messages as Json[];
const opening = { role: "user", content: [{ type: "text", text: "(conversation continues)" }] };

describe("Anthropic carrier: the first turn is the user's", () => {
  it.each<[string, Json[], Json[]]>([
    [
      "a history opening with the assistant gets the minimal user turn before it",
      [
        { role: "assistant", content: "Hello! How can I help?" },
        { role: "user", content: "What is 2+2?" },
      ],
      [
        opening,
        { role: "assistant", content: [{ type: "text", text: "Hello! How can I help?" }] },
        { role: "user", content: [{ type: "text", text: "What is 2+2?" }] },
      ],
    ],
    [
      "a system prompt, then the assistant: the system stays top-level, the user turn comes first",
      [
        { role: "system", content: "Be terse." },
        { role: "assistant", content: "Ready." },
      ],
      [opening, { role: "assistant", content: [{ type: "text", text: "Ready." }] }],
    ],
    [
      "an assistant tool call first, its result after: the tool_result stays in the user turn after the call",
      [
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "42" },
      ],
      [
        opening,
        { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "42" }] },
      ],
    ],
    ["only a system prompt: one user turn", [{ role: "system", content: "Say hi." }], [opening]],
    [
      "a history opening with the user is unchanged",
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
      [
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "assistant", content: [{ type: "text", text: "hello" }] },
      ],
    ],
  ])("%s", (_, messages, expected) => {
    expect(turns(messages)).toEqual(expected);
  });

  it("the opening turn is a copy: a request changing its body leaves the next one's alone", () => {
    const first = turns([{ role: "assistant", content: "a" }]);
    (first[0]!.content as Json[])[0]!.text = "changed";
    expect(turns([{ role: "assistant", content: "a" }])[0]).toEqual(opening);
    expect(OPENING_USER_TURN.content).toEqual(opening.content);
  });
});
