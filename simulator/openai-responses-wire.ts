// OpenAI's Responses API (`POST /v1/responses`), stateless as the router calls it (`store: false`).
import type { IncomingMessage } from "node:http";
import { errorJson, isRecord, type Json } from "./http";
import { boundaryPrefixes, counts, joined, named, sign, type Exchange, type Normalized, type Refusal, type StreamEvent, type Wire } from "./wire";
import { contentText } from "./tokens";

const refuse = (message: string): Refusal => ({ status: 400, message });

/** Sealed reasoning as the simulated model gives it (`encrypted_content`): its text and a signature; any change breaks it. */
function seal(text: string): string {
  return `${Buffer.from(text, "utf8").toString("base64url")}.${sign(text)}`;
}
function opens(sealed: string): boolean {
  const [data, signature] = sealed.split(".");
  return data !== undefined && signature !== undefined && sign(Buffer.from(data, "base64url").toString("utf8")) === signature;
}

/** As OpenAI refuses it: a function call with no output in the input, or an output answering no earlier call; null when they pair up. */
function responsesToolPairing(input: readonly unknown[]): string | null {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const item of input) {
    if (!isRecord(item)) continue;
    if (item.type === "function_call") calls.add(String(item.call_id));
    else if (item.type === "function_call_output") {
      if (!calls.has(String(item.call_id))) return `No tool call found for function call output with call_id ${String(item.call_id)}.`;
      answered.add(String(item.call_id));
    }
  }
  for (const id of calls) if (!answered.has(id)) return `No tool output found for function call ${id}.`;
  return null;
}

/** An input part as the chat part the engine counts. */
function chatPart(p: Json): Json {
  if (p.type === "input_image") return { type: "image_url", image_url: { url: p.image_url } };
  if (p.type === "input_file") return { type: "file", file: { file_data: p.file_data ?? p.file_url } };
  return { type: "text", text: typeof p.text === "string" ? p.text : "" };
}

function usageOf(x: Exchange): Json {
  const c = counts(x);
  return {
    input_tokens: c.prompt,
    input_tokens_details: { cached_tokens: x.cache.read },
    output_tokens: c.completion,
    output_tokens_details: { reasoning_tokens: c.reasoning },
    total_tokens: c.prompt + c.completion,
  };
}

/** The response's output items: reasoning (its summary when asked for, sealed when asked for), the message, the function call. */
function outputItems(x: Exchange): Json[] {
  const plan = x.plans[0]!;
  const suffix = x.id.slice(-12);
  const items: Json[] = [];
  if (x.reasoningModel) {
    const item: Json = { id: `rs_${suffix}`, type: "reasoning", summary: x.showsThinking ? [{ type: "summary_text", text: joined(plan.reasoning) }] : [] };
    if (x.request.sealsReasoning) item.encrypted_content = seal(joined(plan.reasoning));
    items.push(item);
  }
  if (plan.content.length || !plan.toolCall)
    items.push({
      id: `msg_${suffix}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: joined(plan.content), annotations: [] }],
    });
  if (plan.toolCall)
    items.push({
      id: `fc_${suffix}`,
      type: "function_call",
      status: "completed",
      call_id: `call_${suffix}`,
      name: plan.toolCall.name,
      arguments: plan.toolCall.arguments.join(""),
    });
  return items;
}

function response(x: Exchange, status: string, output: Json[], usage: boolean): Json {
  const incomplete = status === "completed" && x.plans[0]!.finishReason === "length";
  return {
    id: `resp_${x.id.slice(-24)}`,
    object: "response",
    created_at: x.created,
    status: incomplete ? "incomplete" : status,
    model: x.model,
    output,
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    error: null,
    store: false,
    usage: usage && !x.directives.noUsage ? usageOf(x) : null,
  };
}

export const openAiResponsesWire: Wire = {
  name: "openai-responses",
  reportsCacheWrites: false,
  implicitStep: 128,

  auth(_req: IncomingMessage): Refusal | null {
    return null; // the Bearer key's presence is recorded, not checked (as on Chat Completions)
  },

  read(body, req): Normalized | Refusal {
    if (!isRecord(body)) return refuse("request body is not valid JSON");
    if (body.store !== false) return refuse("store: this simulated carrier is called statelessly (store: false).");
    const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
    if (!Array.isArray(input)) return refuse("input: Field required (a string or an array of items).");
    const reasoning = isRecord(body.reasoning) ? body.reasoning : {};
    // GPT-6 Astra and 6.1 Sol always reason: they have no effort "none".
    if (req.rules?.thinkingAlwaysOn && reasoning.effort === "none")
      return refuse(
        "Unsupported value: 'reasoning.effort' does not support 'none' with this model. Supported values are: 'low', 'medium', 'high', 'xhigh' and 'max'.",
      );
    const unpaired = responsesToolPairing(input as unknown[]);
    if (unpaired) return refuse(unpaired);
    const messages: Json[] = [];
    if (typeof body.instructions === "string") messages.push({ role: "system", content: body.instructions });
    for (const [i, raw] of (input as unknown[]).entries()) {
      if (!isRecord(raw)) return refuse(`input[${i}]: an item must be an object`);
      const type = raw.type ?? "message";
      if (type === "message") {
        const content = Array.isArray(raw.content) ? (raw.content as Json[]).map(chatPart) : raw.content;
        messages.push({ role: raw.role, content });
      } else if (type === "function_call")
        messages.push({
          role: "assistant",
          content: null,
          tool_calls: [{ id: raw.call_id, type: "function", function: { name: raw.name, arguments: raw.arguments } }],
        });
      else if (type === "function_call_output") messages.push({ role: "tool", tool_call_id: raw.call_id, content: contentText(raw.output) });
      else if (type === "reasoning") {
        if (typeof raw.encrypted_content === "string" && !opens(raw.encrypted_content))
          return refuse(`input[${i}]: The encrypted content for item could not be verified.`);
      } else return refuse(`input[${i}].type: ${String(type)} is not an item this simulated carrier takes`);
    }
    const tools = Array.isArray(body.tools) ? (body.tools as unknown[]).filter(isRecord) : [];
    for (const [i, t] of tools.entries())
      if (t.type !== "function" || typeof t.name !== "string") return refuse(`tools[${i}]: a function tool needs type "function" and a name`);
    const maxOutput = typeof body.max_output_tokens === "number" ? body.max_output_tokens : undefined;
    return {
      model: typeof body.model === "string" ? body.model : "unknown",
      messages,
      tools: tools.map((t) => ({ type: "function", function: { name: t.name, parameters: t.parameters } })),
      extraCounted: { tool_choice: body.tool_choice, text: body.text },
      stream: body.stream === true,
      includeUsage: true,
      answered: 1,
      generated: 1,
      maxTokens: () => maxOutput,
      reasoningBudget: undefined,
      // A reasoning model thinks unless its effort is none; the summary comes back only when asked for.
      thinks: reasoning.effort === "none" ? false : null,
      showsThinking: typeof reasoning.summary === "string" && reasoning.summary !== "none",
      breakpoints: [],
      implicitPrefixes: boundaryPrefixes(messages.map((m) => contentText(m.content))),
      sealsReasoning: Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content"),
      endsWithToolResult: isRecord(input.at(-1)) && (input.at(-1) as Json).type === "function_call_output",
    };
  },

  errorBody(status, message, refusal = false) {
    return errorJson(status, message, refusal ? "invalid_request_error" : "sim_error");
  },

  answerJson(x) {
    return JSON.stringify(response(x, "completed", outputItems(x), true));
  },

  /** OpenAI's typed events (`event:` named), each with its sequence number: created, every item's deltas, completed. */
  streamEvents(x) {
    const events: StreamEvent[] = [];
    let sequence = 0;
    const emit = (json: Json, token = false) => events.push(named(String(json.type), { ...json, sequence_number: sequence++ }, token));
    emit({ type: "response.created", response: response(x, "in_progress", [], false) });
    emit({ type: "response.in_progress", response: response(x, "in_progress", [], false) });
    const plan = x.plans[0]!;
    const items = outputItems(x);
    for (const [output_index, item] of items.entries()) {
      const item_id = item.id;
      const bare =
        item.type === "reasoning"
          ? { ...item, summary: [], encrypted_content: undefined }
          : item.type === "message"
            ? { ...item, content: [] }
            : { ...item, arguments: "" };
      emit({ type: "response.output_item.added", output_index, item: bare });
      if (item.type === "reasoning" && x.showsThinking) {
        emit({ type: "response.reasoning_summary_part.added", item_id, output_index, summary_index: 0, part: { type: "summary_text", text: "" } });
        for (const w of plan.reasoning) emit({ type: "response.reasoning_summary_text.delta", item_id, output_index, summary_index: 0, delta: w }, true);
        emit({ type: "response.reasoning_summary_text.done", item_id, output_index, summary_index: 0, text: joined(plan.reasoning) });
        emit({
          type: "response.reasoning_summary_part.done",
          item_id,
          output_index,
          summary_index: 0,
          part: { type: "summary_text", text: joined(plan.reasoning) },
        });
      } else if (item.type === "message") {
        emit({ type: "response.content_part.added", item_id, output_index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
        for (const w of plan.content) emit({ type: "response.output_text.delta", item_id, output_index, content_index: 0, delta: w }, true);
        if (x.directives.malformed) events.splice(Math.floor(events.length / 2), 0, this.malformedEvent(x));
        emit({ type: "response.output_text.done", item_id, output_index, content_index: 0, text: joined(plan.content) });
        emit({ type: "response.content_part.done", item_id, output_index, content_index: 0, part: (item.content as Json[])[0] });
      } else if (item.type === "function_call") {
        for (const fragment of plan.toolCall!.arguments) emit({ type: "response.function_call_arguments.delta", item_id, output_index, delta: fragment }, true);
        emit({ type: "response.function_call_arguments.done", item_id, output_index, arguments: item.arguments });
      }
      emit({ type: "response.output_item.done", output_index, item });
    }
    const final = response(x, "completed", items, true);
    if (!x.directives.noFinish)
      events.push({
        ...named(final.status === "incomplete" ? "response.incomplete" : "response.completed", {
          type: final.status === "incomplete" ? "response.incomplete" : "response.completed",
          response: final,
          sequence_number: sequence++,
        }),
        usage: true,
      });
    return events;
  },

  malformedEvent() {
    return { text: 'event: response.output_text.delta\ndata: {"type": not json\n\n', token: false };
  },
};
