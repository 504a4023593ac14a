import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { chatFromResponses } from "../../src/protocols/inbound/openai-responses/request";
import { responsesStream } from "../../src/protocols/inbound/openai-responses/stream";
import { openAiResponses } from "../../src/protocols/inbound/openai-responses";
import { carrierTools, ToolNames } from "../../src/protocols/inbound/openai-responses/tools";
import { parseChatRequest } from "../../src/request/chat-request";
import { plainUsage } from "../../src/request/usage";
import type { AnswerFacts } from "../../src/protocols/inbound/caller-protocol";
import type { SseEvent } from "../../src/http/sse-parser";
import codexDefault from "../fixtures/codex/default-model.json";
import codexModelFlag from "../fixtures/codex/model-flag.json";
import codexToolResults from "../fixtures/codex/tool-results.json";
import { accounted } from "./accounted-stream";

// The Responses API's tools carriers do not have (namespace, custom, hosted, tools declared in the
// conversation), as tables of the adapter's pure functions, from what the pinned Codex sends
// (test/fixtures/codex: recorded from @openai/codex 0.169.0 against a local server, texts trimmed).
type Json = Record<string, any>;
const catalog = Catalog.parse(catalogJson);
const endpoint = catalog.endpoints("anthropic/claude-sonnet-4.5")[0]!;
/** Every carrier's tool name rule at once: Anthropic's and OpenAI's `^[a-zA-Z0-9_-]{1,64}$`, and Gemini's first character. */
const EVERY_CARRIER = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
const fn = (name: string, extra: Json = {}) => ({ type: "function", name, parameters: { type: "object", properties: {} }, ...extra });
const ns = (name: string, tools: Json[]) => ({ type: "namespace", name, description: "", tools });
const read = (body: Json) => chatFromResponses({ model: "m", input: "hi", ...structuredClone(body) });
const toolNames = (chat: Json) => (chat.tools as Json[]).map((t) => t.function.name as string);

describe("Codex's recorded requests → canonical", () => {
  it("at its default model: the additional_tools item's namespaces and custom tool become the request's function tools; it is no message", () => {
    const { chat, dropped } = read(codexDefault);
    expect(toolNames(chat)).toEqual([
      "functions__exec",
      "functions__wait",
      "functions__request_user_input",
      "functions__request_user_input_async",
      "clock__sleep",
      "collaboration__followup_task",
      "collaboration__interrupt_agent",
      "collaboration__list_agents",
      "collaboration__send_message",
      "collaboration__spawn_agent",
      "collaboration__wait_agent",
    ]);
    expect(dropped).toEqual([]);
    // `reasoning.context` is OpenAI's own (which turns' reasoning the model keeps): not sent to carriers.
    expect(chat.reasoning).toEqual({ effort: "low" });
    // The custom `exec`: one string argument, its Lark grammar in the description.
    const exec = (chat.tools as Json[])[0]!.function;
    expect(exec.parameters).toEqual({ type: "object", properties: { input: { type: "string" } }, required: ["input"] });
    expect(exec.description).toContain("lark grammar");
    expect(exec.description).toContain("pragma_source");
    // The developer and user messages in order, nothing for the additional_tools item.
    expect((chat.messages as Json[]).map((m) => m.role)).toEqual(["system", "system", "system", "system", "user", "user"]);
    expect(() => parseChatRequest(chat)).not.toThrow();
  });

  it("with -m: function tools as they are, the namespace flattened, the hosted web_search dropped and named", () => {
    const { chat, dropped } = read(codexModelFlag);
    expect(toolNames(chat)).toEqual([
      "exec_command",
      "write_stdin",
      "request_user_input",
      "view_image",
      "multi_agent_v1__close_agent",
      "multi_agent_v1__resume_agent",
      "multi_agent_v1__send_input",
      "multi_agent_v1__spawn_agent",
      "multi_agent_v1__wait_agent",
      "get_goal",
      "create_goal",
      "update_goal",
    ]);
    expect(dropped).toEqual(["web_search"]);
    expect(() => parseChatRequest(chat)).not.toThrow();
  });

  it("its next turn (recorded: it ran functions.exec and clock.sleep as this router gives them back) reaches the carrier as calls of the flattened tools and their results", () => {
    const turn = (items: Json[]) => read({ ...codexDefault, input: [...codexDefault.input, ...items] }).chat.messages as Json[];
    expect(turn(codexToolResults.custom).slice(-2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "functions__exec", arguments: '{"input":"text(\\"hello from exec\\")"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "Script completed\nWall time 0.2 seconds\nOutput:\n\nhello from exec" },
    ]);
    expect(turn(codexToolResults.function).slice(-2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "clock__sleep", arguments: '{"duration_ms": 10}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "Wall time: 0.0131 seconds\nSleep completed." },
    ]);
  });

  it("with provider.require_parameters the hosted tool is refused, naming it", () => {
    expect(() => read({ ...codexModelFlag, provider: { require_parameters: true } })).toThrow(
      /tools\.8: web_search tools run on OpenAI's servers.*require_parameters/,
    );
  });
});

describe("tool flattening: names every carrier accepts, unique, mapped back from the request", () => {
  const identity = (t: Json) => ({ type: "function", function: { name: t.name, parameters: t.parameters } });
  it.each<[string, Json[], string[]]>([
    ["plain function tools keep their names", [fn("a"), fn("b-c")], ["a", "b-c"]],
    ["a namespace's tools: <namespace>__<name>", [ns("crm", [fn("lookup"), fn("save")])], ["crm__lookup", "crm__save"]],
    ["a flattened name taken by a plain tool is numbered", [fn("crm__lookup"), ns("crm", [fn("lookup")])], ["crm__lookup", "crm__lookup_2"]],
    ["characters a carrier refuses are replaced", [ns("my.crm", [fn("look up")])], ["my_crm__look_up"]],
    ["a name that starts with a digit gets a leading underscore (Gemini)", [ns("9", [fn("x")])], ["_9__x"]],
    ["too long: cut to 64, then numbered within 64", [ns("n".repeat(60), [fn("abcdef"), fn("abcdeg")])], ["n".repeat(60) + "__ab", "n".repeat(60) + "___2"]],
    ["an invalid plain name is renamed", [fn("a.b")], ["a_b"]],
    ["the same tool declared twice keeps one name", [ns("x", [fn("y")]), ns("x", [fn("y")])], ["x__y", "x__y"]],
  ])("%s", (_, tools, want) => {
    const { tools: out, names } = carrierTools({ tools }, false, identity);
    const got = out.map((t) => (t.function as Json).name as string);
    expect(got).toEqual(want);
    for (const name of got) expect(name).toMatch(EVERY_CARRIER);
    // Each carrier name leads back to the tool it was given for.
    const leaves = tools.flatMap((t) => (t.type === "namespace" ? t.tools.map((x: Json) => ({ namespace: t.name, name: x.name })) : [{ name: t.name }]));
    got.forEach((name, i) => expect(names.origin(name)).toEqual({ kind: "function", ...leaves[i] }));
  });

  it("a namespace holds function and custom tools only; unknown tool types are refused", () => {
    expect(() => carrierTools({ tools: [ns("x", [{ type: "web_search" }])] }, false, identity)).toThrow(
      /tools\.0\.tools\.0: a namespace groups function and custom tools only/,
    );
    expect(() => carrierTools({ tools: [{ type: "local_shell" }] }, false, identity)).toThrow(/tools\.0: local_shell tools have no equivalent here/);
  });

  it("every hosted tool is dropped, each type named once", () => {
    const hosted = ["web_search", "file_search", "code_interpreter", "image_generation", "computer_use_preview", "mcp", "web_search"].map((type) => ({ type }));
    const { tools, dropped } = carrierTools({ tools: [fn("f"), ...hosted] }, false, identity);
    expect(tools.map((t) => (t.function as Json).name)).toEqual(["f"]);
    expect(dropped).toEqual(["web_search", "file_search", "code_interpreter", "image_generation", "computer_use_preview", "mcp"]);
  });

  it("tools of additional_tools items follow the top-level tools, in the order of input", () => {
    const { tools } = carrierTools(
      {
        tools: [fn("first")],
        input: [
          { type: "additional_tools", role: "developer", tools: [fn("second")] },
          { role: "user", content: "hi" },
          { type: "additional_tools", role: "developer", tools: [ns("n", [fn("third")])] },
        ],
      },
      false,
      identity,
    );
    expect(tools.map((t) => (t.function as Json).name)).toEqual(["first", "second", "n__third"]);
  });

  it("a name table of its own: ToolNames gives each tool one name and knows the plain ones", () => {
    const names = new ToolNames();
    names.reserve("a__b");
    expect(names.add({ kind: "function", name: "b", namespace: "a" })).toBe("a__b_2");
    expect(names.add({ kind: "function", name: "b", namespace: "a" })).toBe("a__b_2");
    expect(names.origin("a__b")).toEqual({ kind: "function", name: "a__b" });
    expect(names.origin("a__b_2")).toEqual({ kind: "function", name: "b", namespace: "a" });
  });
});

describe("Responses history with namespaced and custom calls → canonical", () => {
  it("function_call with a namespace and custom_tool_call go to the carrier by their flattened names; custom_tool_call_output is the call's tool result", () => {
    const { chat } = read({
      tools: [ns("crm", [fn("lookup"), { type: "custom", name: "exec", description: "Run code." }])],
      input: [
        { role: "user", content: "go" },
        { type: "function_call", call_id: "c1", namespace: "crm", name: "lookup", arguments: '{"q":1}' },
        { type: "function_call_output", call_id: "c1", output: "found" },
        { type: "custom_tool_call", call_id: "c2", namespace: "crm", name: "exec", input: "print(1)" },
        { type: "custom_tool_call_output", call_id: "c2", output: "1" },
      ],
      tool_choice: { type: "function", namespace: "crm", name: "lookup" },
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "crm__lookup", arguments: '{"q":1}' } }] },
      { role: "tool", tool_call_id: "c1", content: "found" },
      { role: "assistant", content: null, tool_calls: [{ id: "c2", type: "function", function: { name: "crm__exec", arguments: '{"input":"print(1)"}' } }] },
      { role: "tool", tool_call_id: "c2", content: "1" },
    ]);
    expect(chat.tool_choice).toEqual({ type: "function", function: { name: "crm__lookup" } });
    expect((chat.tools as Json[])[1]).toEqual({
      type: "function",
      function: {
        name: "crm__exec",
        description: "Run code.\n\nThe `input` argument is free-form raw text.",
        parameters: { type: "object", properties: { input: { type: "string" } }, required: ["input"] },
      },
    });
  });

  it("a call of a tool the request no longer declares still gets a carrier name every carrier accepts", () => {
    const { chat } = read({
      input: [
        { type: "function_call", call_id: "c1", namespace: "old.ns", name: "gone", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "x" },
      ],
    });
    expect((chat.messages as Json[])[0]!.tool_calls[0].function.name).toBe("old_ns__gone");
  });
});

/** The facts of an answer to `request`, as the service builds them: its echo (with the tool names) from the read. */
function factsOf(request: Json): AnswerFacts {
  return { genId: "gen-abc", model: "m/x", provider: "P", created: 1700000000, echo: read(request).echo, metadata: () => null, sealer: null };
}
const NAMESPACED = { tools: [fn("plain"), ns("crm", [fn("lookup"), { type: "custom", name: "exec", format: { type: "text" } }])] };
const chunk = (delta: Json, finish: string | null = null): SseEvent => {
  const data = JSON.stringify({ id: "up-1", choices: [{ index: 0, delta, finish_reason: finish }] });
  return { data, bytes: data.length } as SseEvent;
};
function events(text: string): Array<[string, Json]> {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((e) => {
      const [head, data] = e.split("\n");
      return [head!.replace("event: ", ""), JSON.parse(data!.replace("data: ", "")) as Json];
    });
}

describe("canonical → Responses: the carrier's calls as the caller's tools", () => {
  it("an answer: a plain call as it is, a namespaced one as function_call with its namespace, a custom one as custom_tool_call with its input", async () => {
    const calls = [
      { id: "c0", type: "function", function: { name: "plain", arguments: "{}" } },
      { id: "c1", type: "function", function: { name: "crm__lookup", arguments: '{"q":1}' } },
      { id: "c2", type: "function", function: { name: "crm__exec", arguments: '{"input":"ls -la"}' } },
    ];
    const out = (await openAiResponses.answer(
      { choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: null, tool_calls: calls } }] },
      { tokens: plainUsage(1, 1, 0), charged: { costNano: 1, insured: false, cacheDiscountNano: 0 }, endpoint },
      factsOf(NAMESPACED),
    )) as Json;
    expect(out.output).toEqual([
      { type: "function_call", id: "fc_abc_0", call_id: "c0", name: "plain", arguments: "{}", status: "completed" },
      { type: "function_call", id: "fc_abc_1", call_id: "c1", namespace: "crm", name: "lookup", arguments: '{"q":1}', status: "completed" },
      { type: "custom_tool_call", id: "fc_abc_2", call_id: "c2", namespace: "crm", name: "exec", input: "ls -la", status: "completed" },
    ]);
  });

  it.each<[string, string]>([
    ["the input argument", '{"input":"a\\nb"}'],
    ["the one string argument under another name", '{"code":"a\\nb"}'],
    ["text that is not JSON, as it came", "a\nb"],
  ])("a custom call's input from %s", async (_, args) => {
    const out = (await openAiResponses.answer(
      {
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "crm__exec", arguments: args } }] },
          },
        ],
      },
      { tokens: plainUsage(1, 1, 0), charged: { costNano: 1, insured: false, cacheDiscountNano: 0 }, endpoint },
      factsOf(NAMESPACED),
    )) as Json;
    expect(out.output[0]).toMatchObject({ type: "custom_tool_call", input: "a\nb" });
  });

  it("a stream: the namespaced call's events name its namespace, the custom call's input comes in custom_tool_call_input events", () => {
    const s = accounted(responsesStream(factsOf(NAMESPACED)), endpoint);
    let text = "";
    for (const c of [
      chunk({ role: "assistant", content: "" }),
      chunk({ tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "crm__lookup", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "c2", type: "function", function: { name: "crm__exec", arguments: '{"inp' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: 'ut":"ls"}' } }] }),
      chunk({}, "tool_calls"),
    ])
      text += s.rewrite(c) as string;
    const ev = events(text + s.end(null));
    const kinds = ev.map(([k]) => k);
    expect(kinds).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(ev[2]![1].item).toEqual({
      type: "function_call",
      id: "fc_abc_0",
      call_id: "c1",
      namespace: "crm",
      name: "lookup",
      arguments: "",
      status: "in_progress",
    });
    expect(ev[5]![1]).toMatchObject({ item_id: "fc_abc_0", output_index: 0, name: "lookup", arguments: '{"q":1}' });
    expect(ev[7]![1].item).toEqual({
      type: "custom_tool_call",
      id: "fc_abc_1",
      call_id: "c2",
      namespace: "crm",
      name: "exec",
      input: "",
      status: "in_progress",
    });
    expect(ev[8]![1]).toMatchObject({ item_id: "fc_abc_1", output_index: 1, delta: "ls" });
    expect(ev[9]![1]).toMatchObject({ item_id: "fc_abc_1", output_index: 1, input: "ls" });
    expect(ev[10]![1].item).toEqual({
      type: "custom_tool_call",
      id: "fc_abc_1",
      call_id: "c2",
      namespace: "crm",
      name: "exec",
      input: "ls",
      status: "completed",
    });
    expect(ev[11]![1].response.output.map((i: Json) => [i.type, i.namespace, i.name])).toEqual([
      ["function_call", "crm", "lookup"],
      ["custom_tool_call", "crm", "exec"],
    ]);
  });

  it("a request without namespaced or custom tools streams its calls as before", () => {
    const s = accounted(responsesStream(factsOf({ tools: [fn("f")] })), endpoint);
    const ev = events(
      (s.rewrite(chunk({ tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "f", arguments: "{}" } }] })) as string) + s.end(null),
    );
    expect(ev.find(([k]) => k === "response.output_item.done")![1].item).toEqual({
      type: "function_call",
      id: "fc_abc_0",
      call_id: "c",
      name: "f",
      arguments: "{}",
      status: "completed",
    });
  });
});
