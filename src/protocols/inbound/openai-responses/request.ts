import { isObj, refuse, refuseUnknownFields, ROUTER_FIELDS_TAKEN, type Obj } from "../request-checks";
import { reasoningDetails, type OpenedEnvelopes } from "./reasoning-envelope";
import { strictApplied } from "./echo";
import { carrierName, carrierToolChoice, carrierTools, customArguments, type ToolNames } from "./tools";

/** The Responses API's request fields we take, and the router's own (as on /chat/completions). */
const TAKEN = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "reasoning",
  "max_output_tokens",
  "text",
  "temperature",
  "top_p",
  "top_k",
  "frequency_penalty",
  "presence_penalty",
  "metadata",
  "include",
  "prompt_cache_key",
  "user",
  "safety_identifier",
  "stream",
  "store",
  "service_tier",
  "truncation",
  "background",
  "previous_response_id",
  "max_tool_calls",
  "top_logprobs",
  "client_metadata", // the client's own labels (Codex's turn and session ids): not sent to carriers
  ...ROUTER_FIELDS_TAKEN,
]);

/** What the answer repeats of the request (OpenAI's response object echoes these). */
const ECHOED = [
  "instructions",
  "max_output_tokens",
  "metadata",
  "parallel_tool_calls",
  "temperature",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
  "tool_choice",
  "tools",
  "reasoning",
  "text",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "service_tier",
] as const;

/** The one `include` we honour; anything else names an output we do not produce. */
const ENCRYPTED_REASONING = "reasoning.encrypted_content";

/**
 * An OpenAI Responses request as the canonical (chat) request, and what the answer echoes. Stateless, as
 * OpenRouter's: `store: true`, `previous_response_id`, stored prompts and background runs are refused.
 * `instructions` → a system message; `input` items → chat messages in order (user, system and developer
 * messages; assistant messages, `function_call` and `reasoning` items of one assistant turn → one
 * assistant message with its text, `tool_calls` and `reasoning_details`; `function_call_output` → a
 * `tool` message; `custom_tool_call` and its output alike); function, `namespace` and `custom` tools and
 * `additional_tools` items → function tools, hosted tools dropped (`dropped`: ./tools.ts); `tool_choice`;
 * `reasoning`; `max_output_tokens` → `max_tokens`;
 * `text.format` → `response_format`; `prompt_cache_key` → the session (sticky routing) and the carrier's
 * cache key. Fields and items with no equivalent are refused with a 400 naming them. Our reasoning
 * envelopes come opened (`opened`: ./reasoning-envelope.ts, the async step before this one).
 */
export function chatFromResponses(json: Obj, opened: OpenedEnvelopes = new Map()): { chat: Obj; echo: Obj; dropped: string[] } {
  refuseUnknownFields(json, TAKEN, "/responses");
  refuseStateful(json);
  if (json.input === undefined || json.input === null) refuse("input: Field required (a string or an array of items).");
  const out: Obj = {};
  for (const k of ["model", "stream", "temperature", "top_p", "top_k", "frequency_penalty", "presence_penalty", "metadata", "parallel_tool_calls"])
    if (json[k] !== undefined && json[k] !== null) out[k] = json[k];
  for (const k of [...ROUTER_FIELDS_TAKEN, "prompt_cache_key"]) if (json[k] !== undefined) out[k] = json[k];
  if (json.max_output_tokens !== undefined && json.max_output_tokens !== null) out.max_tokens = json.max_output_tokens;
  const user = json.user ?? json.safety_identifier;
  if (typeof user === "string") out.user = user;
  if (typeof json.prompt_cache_key === "string" && out.session_id === undefined) out.session_id = json.prompt_cache_key;
  if (json.stream === true) out.stream_options = { include_usage: true };

  // Tools first: the history's calls are named as the carrier knows their tools (./tools.ts).
  const strict = isObj(json.provider) && json.provider.require_parameters === true;
  const { tools, names, dropped } = carrierTools(json, strict, tool);
  const messages: Obj[] = [];
  if (typeof json.instructions === "string" && json.instructions !== "") messages.push({ role: "system", content: json.instructions });
  else if (json.instructions !== undefined && json.instructions !== null && typeof json.instructions !== "string") refuse("instructions: must be a string.");
  messages.push(...inputMessages(json.input, opened, names));
  out.messages = messages;

  if (tools.length) out.tools = tools;
  const choice = (isObj(json.tool_choice) && carrierToolChoice(json.tool_choice, names)) || toolChoice(json.tool_choice);
  if (choice !== null) out.tool_choice = choice;
  if (isObj(json.reasoning)) {
    // `context` (Codex at its default model: which turns' reasoning the model keeps) is OpenAI's own: carriers get their reasoning back through the input.
    const reasoning = Object.fromEntries(Object.entries(json.reasoning).filter(([k, v]) => v !== null && k !== "generate_summary" && k !== "context"));
    if (Object.keys(reasoning).length) out.reasoning = reasoning;
  } else if (json.reasoning !== undefined && json.reasoning !== null) refuse("reasoning: must be an object ({effort, summary}).");
  Object.assign(out, textConfig(json.text));

  const echo: Obj = { include_encrypted_reasoning: includes(json.include), tool_names: names };
  for (const k of ECHOED) if (json[k] !== undefined) echo[k] = json[k];
  return { chat: out, echo, dropped };
}

function refuseStateful(json: Obj): void {
  if (json.store === true)
    refuse(
      "store: this router keeps no responses (it is stateless, as OpenRouter's /responses is): send `store: false` and give the whole conversation in `input`.",
    );
  if (json.previous_response_id !== undefined && json.previous_response_id !== null)
    refuse("previous_response_id: this router keeps no responses (stateless): give the whole conversation in `input`, with `store: false`.");
  if (json.background === true) refuse("background: background responses are not offered: stream the response instead.");
  if (json.truncation !== undefined && json.truncation !== null && json.truncation !== "disabled")
    refuse('truncation: only "disabled" is offered: a conversation longer than the model\'s context is refused, never cut silently.');
  if (json.max_tool_calls !== undefined && json.max_tool_calls !== null)
    refuse("max_tool_calls: applies to built-in tools, which this router does not run; function calls are returned to you to run.");
  if (typeof json.top_logprobs === "number" && json.top_logprobs > 0) refuse("top_logprobs: log probabilities are not offered on /responses.");
}

function includes(include: unknown): boolean {
  if (include === undefined || include === null) return false;
  if (!Array.isArray(include)) refuse("include: must be an array.");
  const other = (include as unknown[]).filter((i) => i !== ENCRYPTED_REASONING);
  if (other.length) refuse(`include: ${other.map(String).join(", ")} cannot be produced here; "${ENCRYPTED_REASONING}" is the one supported.`);
  return include.length > 0;
}

/** `input` as chat messages: the assistant side of a turn (its messages, function calls and reasoning) gathered into one message. */
function inputMessages(input: unknown, opened: OpenedEnvelopes, names: ToolNames): Obj[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  if (!Array.isArray(input)) refuse("input: must be a string or an array of items.");
  const out: Obj[] = [];
  let turn: { texts: string[]; calls: Obj[]; details: Obj[] } | null = null;
  const assistant = () => (turn ??= { texts: [], calls: [], details: [] });
  const flush = () => {
    if (!turn) return;
    const message: Obj = { role: "assistant", content: turn.texts.length ? turn.texts.join("") : turn.calls.length ? null : "" };
    if (turn.calls.length) message.tool_calls = turn.calls;
    if (turn.details.length) message.reasoning_details = turn.details.map((d, index) => ({ ...d, index }));
    out.push(message);
    turn = null;
  };
  (input as unknown[]).forEach((item, i) => {
    const at = `input.${i}`;
    if (!isObj(item)) refuse(`${at}: must be an item object.`);
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    switch (type) {
      case "message":
        if (item.role === "assistant") assistant().texts.push(...assistantTexts(item.content, at));
        else {
          flush();
          out.push(inputMessage(item, at));
        }
        return;
      case "function_call":
        if (typeof item.call_id !== "string" || typeof item.name !== "string") refuse(`${at}: a function_call needs call_id and name.`);
        assistant().calls.push({
          id: item.call_id,
          type: "function",
          function: { name: carrierName(names, "function", item.name, item.namespace), arguments: typeof item.arguments === "string" ? item.arguments : "{}" },
        });
        return;
      case "custom_tool_call":
        if (typeof item.call_id !== "string" || typeof item.name !== "string") refuse(`${at}: a custom_tool_call needs call_id and name.`);
        assistant().calls.push({
          id: item.call_id,
          type: "function",
          function: { name: carrierName(names, "custom", item.name, item.namespace), arguments: customArguments(item.input) },
        });
        return;
      case "additional_tools":
        // Its tools are the request's (./tools.ts); nothing of it is a message.
        return;
      case "reasoning":
        // Only its encrypted content can go back to a carrier; a summary alone carries nothing it accepts.
        if (typeof item.encrypted_content === "string" && item.encrypted_content !== "")
          assistant().details.push(...reasoningDetails(item.encrypted_content, opened, at));
        return;
      case "function_call_output":
      case "custom_tool_call_output":
        flush();
        if (typeof item.call_id !== "string") refuse(`${at}.call_id: Field required.`);
        out.push(...toolOutput(item, at));
        return;
      case "item_reference":
        return refuse(`${at}: item_reference needs stored responses, which this router does not keep: send the item itself.`);
      default:
        return refuse(
          `${at}: a ${String(type)} item has no equivalent here (message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, additional_tools and reasoning items are accepted).`,
        );
    }
  });
  flush();
  return out;
}

function inputMessage(item: Obj, at: string): Obj {
  const role = item.role === "developer" ? "system" : item.role;
  if (role !== "user" && role !== "system") refuse(`${at}.role: must be user, system, developer or assistant.`);
  if (typeof item.content === "string") return { role, content: item.content };
  if (!Array.isArray(item.content)) refuse(`${at}.content: must be a string or an array of parts.`);
  const parts = (item.content as unknown[]).map((p, j) => inputPart(p, `${at}.content.${j}`));
  return { role, content: role === "system" ? parts.map((p) => p.text).join("") : parts };
}

function inputPart(p: unknown, at: string): Obj {
  if (!isObj(p)) refuse(`${at}: must be a part object.`);
  switch (p.type) {
    case "input_text":
      if (typeof p.text !== "string") refuse(`${at}.text: Field required.`);
      return { type: "text", text: p.text };
    case "input_image":
      if (typeof p.image_url !== "string")
        refuse(`${at}: an input_image needs image_url (a URL or a data URL); file_id needs stored files, which this router does not keep.`);
      return { type: "image_url", image_url: p.detail ? { url: p.image_url, detail: p.detail } : { url: p.image_url } };
    case "input_file": {
      const data = typeof p.file_data === "string" ? p.file_data : typeof p.file_url === "string" ? p.file_url : null;
      if (data === null) refuse(`${at}: an input_file needs file_data or file_url; file_id needs stored files, which this router does not keep.`);
      return { type: "file", file: { filename: typeof p.filename === "string" ? p.filename : "file.pdf", file_data: data } };
    }
    default:
      return refuse(`${at}: a ${String(p.type)} part has no equivalent here (input_text, input_image and input_file are accepted).`);
  }
}

function assistantTexts(content: unknown, at: string): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) refuse(`${at}.content: must be a string or an array of parts.`);
  return (content as unknown[]).map((p, j) => {
    if (isObj(p) && (p.type === "output_text" || p.type === "input_text") && typeof p.text === "string") return p.text;
    if (isObj(p) && p.type === "refusal" && typeof p.refusal === "string") return p.refusal;
    return refuse(`${at}.content.${j}: an assistant message takes output_text and refusal parts.`);
  });
}

/** A function_call_output → a tool message (its text), and its images as a user message right after. */
function toolOutput(item: Obj, at: string): Obj[] {
  if (typeof item.output === "string") return [{ role: "tool", tool_call_id: item.call_id, content: item.output }];
  if (!Array.isArray(item.output)) refuse(`${at}.output: must be a string or an array of parts.`);
  const texts: string[] = [];
  const images: Obj[] = [];
  (item.output as unknown[]).forEach((p, k) => {
    const part = inputPart(p, `${at}.output.${k}`);
    if (part.type === "text") texts.push(part.text as string);
    else images.push(part);
  });
  const out: Obj[] = [{ role: "tool", tool_call_id: item.call_id, content: texts.join("\n") }];
  if (images.length) out.push({ role: "user", content: images });
  return out;
}

/** A function tool as the carriers' (its type and name checked by ./tools.ts, which then gives it its carrier name). */
function tool(t: Obj): Obj {
  const fn: Obj = { name: t.name, parameters: t.parameters ?? { type: "object", properties: {} } };
  if (typeof t.description === "string") fn.description = t.description;
  if (typeof t.strict === "boolean" || strictApplied(t)) fn.strict = strictApplied(t); // the Responses API's default is strict: ./echo.ts
  return { type: "function", function: fn };
}

function toolChoice(choice: unknown): unknown {
  if (choice === undefined || choice === null) return null;
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  if (isObj(choice) && choice.type === "function" && typeof choice.name === "string") return { type: "function", function: { name: choice.name } };
  return refuse('tool_choice: must be "auto", "none", "required" or {type: "function", name}.');
}

function textConfig(text: unknown): Obj {
  if (text === undefined || text === null) return {};
  if (!isObj(text)) refuse("text: must be an object ({format, verbosity}).");
  const out: Obj = {};
  if (typeof text.verbosity === "string") out.verbosity = text.verbosity;
  const format = text.format;
  if (format === undefined || format === null) return out;
  if (!isObj(format)) refuse("text.format: must be an object.");
  if (format.type === "text") return out;
  if (format.type === "json_object") return { ...out, response_format: { type: "json_object" } };
  if (format.type === "json_schema") {
    if (typeof format.name !== "string" || !isObj(format.schema)) refuse("text.format: a json_schema format needs name and schema.");
    const schema: Obj = { name: format.name, schema: format.schema };
    if (typeof format.strict === "boolean") schema.strict = format.strict;
    if (typeof format.description === "string") schema.description = format.description;
    return { ...out, response_format: { type: "json_schema", json_schema: schema } };
  }
  return refuse(`text.format.type: ${String(format.type)} is not one of text, json_object, json_schema.`);
}
