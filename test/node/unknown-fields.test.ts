import { describe, it, expect } from "vitest";
import { namedUnknown, unknownFields } from "../../src/request/unknown-fields";

// Which chat fields the answer names as unknown to the router (passed on as sent), and how a name is shown.
describe("unknownFields", () => {
  it.each([
    { name: "a plain request", json: { model: "m", messages: [], temperature: 1 }, out: [] },
    { name: "a typo", json: { messages: [], temprature: 1 }, out: ["temprature"] },
    { name: "in the order sent", json: { zeta: 1, messages: [], alpha: 2 }, out: ["zeta", "alpha"] },
    { name: "the router's own fields", json: { messages: [], provider: {}, models: [], session_id: "s", plugins: [], anthropic_beta: [] }, out: [] },
    { name: "the contract's fields not type-checked", json: { messages: [], image_config: {}, prompt_cache_options: {} }, out: [] },
    { name: "OpenAI's fields", json: { messages: [], verbosity: "low", store: false, web_search_options: {}, functions: [], n: 2 }, out: [] },
    { name: "a name a header cannot carry", json: { messages: [], "bad name,\n": 1 }, out: ["bad?name??"] },
    { name: "a long name, cut", json: { messages: [], ["x".repeat(100)]: 1 }, out: ["x".repeat(64)] },
  ])("$name", ({ json, out }) => {
    expect(unknownFields(json)).toEqual(out);
  });

  it("at most UNKNOWN_PARAMETERS_NAMED names, then how many more", () => {
    const names = unknownFields(Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`f${i}`, i])));
    expect(names).toHaveLength(25);
    expect(namedUnknown(names, 20)).toEqual([...names.slice(0, 20), "(5 more)"]);
    expect(namedUnknown(names, 25)).toEqual(names);
  });
});
