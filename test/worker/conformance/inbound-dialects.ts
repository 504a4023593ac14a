type Json = Record<string, any>;

/** The tokens an answer shows the caller. */
export type Shown = { prompt: number; completion: number };

/** One SSE event of a caller's stream: its `event:` name (if any) and its `data:` (parsed JSON, or the literal "[DONE]"). */
export type StreamEvent = { event: string | null; data: Json | "[DONE]" };

/** What the suite sends and reads for one behaviour a protocol expresses. */
type Expressed<Read> = { body(model: string, prompt: string): Json; read: Read };

/** A behaviour the protocol cannot express: the request asking for it is refused with this status, its message matching `message`. */
export type NotExpressible = { refused: { body(model: string, prompt: string): Json; status: number; message: RegExp }; why: string };

/**
 * How the suite speaks one inbound API: the bodies of its behaviours and how its answers are read. A new
 * inbound API registered in src/protocols/inbound/index.ts needs its line here (the suite fails without it);
 * a behaviour it cannot express is declared as `NotExpressible` and tested as the refusal it is.
 */
export type Dialect = {
  /** The model the suite asks (its carriers are played by the simulator). */
  model: string;
  text: Expressed<(json: Json) => { text: string; shown: Shown }>;
  stream: Expressed<(events: StreamEvent[]) => { text: string; shown: Shown; ended: boolean }> | NotExpressible;
  tools: Expressed<(json: Json) => { name: string; args: Json; finished: boolean }> | NotExpressible;
  /** The error body's message, once its shape is checked against the status. */
  error(json: Json, status: number): string;
  /** A body the API refuses before any carrier is asked (400). */
  badBody: Json;
};

const LLAMA = "meta-llama/llama-3.1-8b-instruct";

/** A function tool in OpenAI's chat shape, and its name. */
const TOOL = {
  name: "get_weather",
  description: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

const data = (events: StreamEvent[]) => events.flatMap((e) => (e.data === "[DONE]" ? [] : [e.data]));

export const DIALECTS: Record<string, Dialect> = {
  "openai-chat": {
    model: LLAMA,
    text: {
      body: (model, prompt) => ({ model, max_tokens: 50, messages: [{ role: "user", content: prompt }] }),
      read: (json) => ({ text: json.choices[0].message.content, shown: { prompt: json.usage.prompt_tokens, completion: json.usage.completion_tokens } }),
    },
    stream: {
      body: (model, prompt) => ({ model, max_tokens: 50, stream: true, messages: [{ role: "user", content: prompt }] }),
      read: (events) => {
        const chunks = data(events);
        const usage = chunks.find((c) => c.usage)?.usage;
        return {
          text: chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join(""),
          shown: { prompt: usage?.prompt_tokens, completion: usage?.completion_tokens },
          ended: events.at(-1)?.data === "[DONE]",
        };
      },
    },
    tools: {
      body: (model, prompt) => ({ model, max_tokens: 50, tools: [{ type: "function", function: TOOL }], messages: [{ role: "user", content: prompt }] }),
      read: (json) => {
        const call = json.choices[0].message.tool_calls[0].function;
        return { name: call.name, args: JSON.parse(call.arguments), finished: json.choices[0].finish_reason === "tool_calls" };
      },
    },
    error: (json, status) => {
      if (json.error.code !== status) throw new Error(`error.code ${json.error.code}, not ${status}`);
      return json.error.message;
    },
    badBody: { model: LLAMA },
  },

  "anthropic-messages": {
    model: LLAMA,
    text: {
      body: (model, prompt) => ({ model, max_tokens: 50, messages: [{ role: "user", content: prompt }] }),
      read: (json) => ({
        text: json.content
          .filter((b: Json) => b.type === "text")
          .map((b: Json) => b.text)
          .join(""),
        shown: { prompt: json.usage.input_tokens, completion: json.usage.output_tokens },
      }),
    },
    stream: {
      body: (model, prompt) => ({ model, max_tokens: 50, stream: true, messages: [{ role: "user", content: prompt }] }),
      read: (events) => {
        const chunks = data(events);
        // The prompt's count comes with the carrier's usage, at the end (message_delta), as the output's.
        const delta = chunks.find((c) => c.type === "message_delta");
        return {
          text: chunks
            .filter((c) => c.type === "content_block_delta" && c.delta.type === "text_delta")
            .map((c) => c.delta.text)
            .join(""),
          shown: { prompt: delta?.usage.input_tokens, completion: delta?.usage.output_tokens },
          ended: events.at(-1)?.event === "message_stop",
        };
      },
    },
    tools: {
      body: (model, prompt) => ({
        model,
        max_tokens: 50,
        tools: [{ name: TOOL.name, description: TOOL.description, input_schema: TOOL.parameters }],
        messages: [{ role: "user", content: prompt }],
      }),
      read: (json) => {
        const call = json.content.find((b: Json) => b.type === "tool_use");
        return { name: call.name, args: call.input, finished: json.stop_reason === "tool_use" };
      },
    },
    error: (json, status) => {
      const type = status >= 500 ? "api_error" : status === 400 ? "invalid_request_error" : status === 401 ? "authentication_error" : "?";
      if (json.type !== "error" || json.error.type !== type) throw new Error(`not Anthropic's ${type} error: ${JSON.stringify(json)}`);
      return json.error.message;
    },
    badBody: { model: LLAMA, messages: [{ role: "user", content: "hi" }] },
  },

  "openai-responses": {
    model: LLAMA,
    text: {
      body: (model, prompt) => ({ model, max_output_tokens: 50, input: prompt }),
      read: (json) => ({
        text: json.output
          .filter((i: Json) => i.type === "message")
          .flatMap((i: Json) => i.content.filter((c: Json) => c.type === "output_text").map((c: Json) => c.text))
          .join(""),
        shown: { prompt: json.usage.input_tokens, completion: json.usage.output_tokens },
      }),
    },
    stream: {
      body: (model, prompt) => ({ model, max_output_tokens: 50, stream: true, input: prompt }),
      read: (events) => {
        const chunks = data(events);
        const completed = chunks.find((c) => c.type === "response.completed");
        return {
          text: chunks
            .filter((c) => c.type === "response.output_text.delta")
            .map((c) => c.delta)
            .join(""),
          shown: { prompt: completed?.response.usage.input_tokens, completion: completed?.response.usage.output_tokens },
          ended: events.at(-1)?.event === "response.completed",
        };
      },
    },
    tools: {
      body: (model, prompt) => ({ model, max_output_tokens: 50, tools: [{ type: "function", ...TOOL }], input: prompt }),
      read: (json) => {
        const call = json.output.find((i: Json) => i.type === "function_call");
        return { name: call.name, args: JSON.parse(call.arguments), finished: json.status === "completed" };
      },
    },
    error: (json, status) => {
      if (json.error.code !== status || typeof json.error.type !== "string") throw new Error(`not the Responses API's error: ${JSON.stringify(json)}`);
      return json.error.message;
    },
    badBody: { model: LLAMA, input: "x", store: true },
  },

  embeddings: {
    model: "openai/text-embedding-3-small",
    text: {
      body: (model, prompt) => ({ model, input: prompt }),
      read: (json) => ({
        // An embedding's "text" is its vector: the suite checks it is one, of numbers.
        text: Array.isArray(json.data[0].embedding) && json.data[0].embedding.every((x: unknown) => typeof x === "number") ? "vector" : "",
        shown: { prompt: json.usage.prompt_tokens, completion: 0 },
      }),
    },
    stream: {
      why: "an embedding is one answer: the API has no stream",
      refused: { body: (model, prompt) => ({ model, input: prompt, stream: true }), status: 400, message: /stream/ },
    },
    tools: {
      why: "an embeddings model calls no tools",
      refused: { body: (model, prompt) => ({ model, input: prompt, tools: [{ type: "function", function: TOOL }] }), status: 400, message: /tools/ },
    },
    error: (json, status) => {
      if (json.error.code !== status) throw new Error(`error.code ${json.error.code}, not ${status}`);
      return json.error.message;
    },
    badBody: { input: "x" },
  },
};
