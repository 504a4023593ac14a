import { describe, it, expect } from "vitest";
import { call, newAccount, generation } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import codexDefault from "../fixtures/codex/default-model.json";
import codexModelFlag from "../fixtures/codex/model-flag.json";

// Codex as its docs configure a custom provider (test/fixtures/codex: what the pinned 0.169.0 sends, at its
// default model and with -m) served on an OpenAI, an Anthropic and a Gemini carrier; its namespaced and
// custom tools flattened for the carrier and its calls given back as Codex's items; hosted tools dropped and
// named, refused under require_parameters (src/protocols/inbound/openai-responses/tools.ts).
type Json = Record<string, any>;
const MODELS = ["openai/gpt-5-mini", "anthropic/claude-haiku-4.5", "google/gemini-2.5-flash"];
/** Every carrier's tool name rule at once (Anthropic's and OpenAI's, and Gemini's first character). */
const EVERY_CARRIER = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

function post(key: string, body: unknown, headers: Record<string, string> = {}) {
  return call("/api/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** A recorded Codex request for `model`, its last user text carrying `directives`. */
function codexRequest(recorded: Json, model: string, stream: boolean, directives: string): Json {
  const body = structuredClone(recorded);
  const last = (body.input as Json[]).filter((i) => i.role === "user").at(-1)!;
  last.content = [{ type: "input_text", text: `say hi ${directives}` }];
  return { ...body, model, stream };
}

/** A stream's events as [name, data]. */
function events(text: string): Array<[string, Json]> {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((e) => {
      const [head, data] = e.split("\n");
      return [head!.replace("event: ", ""), JSON.parse(data!.replace("data: ", "")) as Json];
    });
}

/** The final response of an answer, streamed or not. */
async function finalResponse(res: Response, stream: boolean): Promise<Json> {
  if (!stream) return (await res.json()) as Json;
  const all = events(await res.text());
  expect(all.at(-1)![0]).toBe("response.completed");
  return all.at(-1)![1].response as Json;
}

describe.each(MODELS)("Codex's recorded requests on %s", (model) => {
  it.each([false, true])(
    "at its default model (additional_tools), stream %s: 200, its tools reach the carrier as functions every carrier accepts",
    async (stream) => {
      const { key } = await newAccount(5);
      const tag = uniqueTag();
      const res = await post(key, codexRequest(codexDefault, model, stream, `[sim tag=${tag} tokens=3]`));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-switchyard-dropped-tools")).toBeNull();
      expect((await finalResponse(res, stream)).status).toBe("completed");
      const [seen] = await simRequests(tag);
      const names = carrierToolNames(seen!.body);
      expect(names).toHaveLength(11);
      expect(names).toContain("functions__exec");
      for (const n of names) expect(n).toMatch(EVERY_CARRIER);
      expect((await generation(key, res.headers.get("x-generation-id")!)).inbound_api).toBe("responses");
    },
  );

  it.each([false, true])("with -m (namespace and web_search tools), stream %s: 200, web_search dropped and named", async (stream) => {
    const { key } = await newAccount(5);
    const tag = uniqueTag();
    const res = await post(key, codexRequest(codexModelFlag, model, stream, `[sim tag=${tag} tokens=3]`));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-dropped-tools")).toBe("web_search");
    expect((await finalResponse(res, stream)).status).toBe("completed");
    const [seen] = await simRequests(tag);
    const names = carrierToolNames(seen!.body);
    expect(names).toHaveLength(12);
    expect(names).toContain("multi_agent_v1__spawn_agent");
    for (const n of names) expect(n).toMatch(EVERY_CARRIER);
  });

  const lookup = {
    type: "function",
    name: "lookup",
    description: "Look up a thing.",
    parameters: { type: "object", properties: { query: { type: "string" } } },
  };
  const exec = { type: "custom", name: "exec", description: "Run code.", format: { type: "grammar", syntax: "lark", definition: "start: /.+/" } };

  it.each([false, true])("a namespaced call round-trips, stream %s: function_call with its namespace, then its output back to the carrier", async (stream) => {
    const { key } = await newAccount(5);
    const tools = [{ type: "namespace", name: "crm", description: "", tools: [lookup] }];
    const first = await post(key, { model, stream, tools, input: "find it [sim tool_call tokens=6]" });
    expect(first.status).toBe(200);
    const call = (await finalResponse(first, stream)).output.find((i: Json) => i.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", namespace: "crm", name: "lookup", status: "completed" });
    expect(JSON.parse(call.arguments)).toHaveProperty("query");

    const tag = uniqueTag();
    const second = await post(key, {
      model,
      stream,
      tools,
      input: [
        { role: "user", content: "find it" },
        { type: "function_call", call_id: call.call_id, namespace: "crm", name: "lookup", arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: "found: 42" },
        // The simulator reads its directives from the last user text (Anthropic and Gemini put tool results in user turns).
        { role: "user", content: `go on [sim tag=${tag} tokens=3]` },
      ],
    });
    expect(second.status).toBe(200);
    expect((await finalResponse(second, stream)).status).toBe("completed");
    const [seen] = await simRequests(tag);
    expect(JSON.stringify(seen!.body)).toContain("crm__lookup");
    expect(JSON.stringify(seen!.body)).toContain("found: 42");
  });

  it.each([false, true])(
    "a custom tool call round-trips, stream %s: custom_tool_call with its input, then custom_tool_call_output back to the carrier",
    async (stream) => {
      const { key } = await newAccount(5);
      const first = await post(key, { model, stream, tools: [exec], input: "run it [sim tool_call tokens=6]" });
      expect(first.status).toBe(200);
      let call: Json;
      if (stream) {
        const all = events(await first.text());
        const done = all.find(([k]) => k === "response.custom_tool_call_input.done")![1];
        call = all.at(-1)![1].response.output.find((i: Json) => i.type === "custom_tool_call");
        expect(done.input).toBe(call.input);
      } else call = ((await first.json()) as Json).output.find((i: Json) => i.type === "custom_tool_call");
      expect(call).toMatchObject({ type: "custom_tool_call", name: "exec", status: "completed" });
      expect(typeof call.input).toBe("string");
      expect(call.input).not.toBe("");

      const tag = uniqueTag();
      const second = await post(key, {
        model,
        stream,
        tools: [exec],
        input: [
          { role: "user", content: "run it" },
          { type: "custom_tool_call", call_id: call.call_id, name: "exec", input: call.input },
          { type: "custom_tool_call_output", call_id: call.call_id, output: "exit 0" },
          { role: "user", content: `go on [sim tag=${tag} tokens=3]` },
        ],
      });
      expect(second.status).toBe(200);
      expect((await finalResponse(second, stream)).status).toBe("completed");
      const [seen] = await simRequests(tag);
      expect(JSON.stringify(seen!.body)).toContain("exit 0");
    },
  );
});

describe("hosted tools", () => {
  it.each([false, true])("are named in the routing metadata when asked for (stream %s)", async (stream) => {
    const { key } = await newAccount(5);
    const res = await post(
      key,
      { model: "openai/gpt-5-mini", stream, input: "hi [sim tokens=2]", tools: [{ type: "web_search" }, { type: "file_search", vector_store_ids: ["v"] }] },
      { "x-openrouter-metadata": "enabled" },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-dropped-tools")).toBe("web_search, file_search");
    // A browser client may read it (CORS).
    expect(res.headers.get("access-control-expose-headers")).toContain("X-Switchyard-Dropped-Tools");
    expect((await finalResponse(res, stream)).openrouter_metadata.params.dropped_tools).toEqual(["web_search", "file_search"]);
  });

  it("are refused with provider.require_parameters, in OpenAI's error shape, at cost 0", async () => {
    const { key } = await newAccount(5);
    const res = await post(key, { ...codexRequest(codexModelFlag, "openai/gpt-5-mini", true, ""), provider: { require_parameters: true } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error.message).toMatch(/^tools\.8: web_search tools run on OpenAI's servers.*require_parameters/);
    expect(await generation(key, res.headers.get("x-generation-id")!)).toMatchObject({ inbound_api: "responses", status: 400, total_cost: 0 });
  });
});

/** The tool names a carrier received, in its own protocol (OpenAI's `tools`, Anthropic's, Gemini's `functionDeclarations`). */
function carrierToolNames(body: Json): string[] {
  const tools = (body.tools ?? []) as Json[];
  return tools.flatMap((t) => (t.functionDeclarations ? (t.functionDeclarations as Json[]).map((d) => d.name) : [t.function?.name ?? t.name]));
}
