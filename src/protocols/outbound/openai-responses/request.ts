import type { PricedEndpoint } from "../../../catalog/catalog";
import type { ChatRequest } from "../../../request/chat-request";
import { Untranslatable } from "../../../request/errors";
import { reasoningAsk } from "../../../request/reasoning";
import { reasoningOffRefused, relaxesToolChoice } from "../thinking-rules";

type Obj = Record<string, unknown>;

/** The `reasoning_details` format of OpenAI's reasoning items (OpenRouter's name for it). */
export const OPENAI_RESPONSES_REASONING_FORMAT = "openai-responses-v1";

/**
 * Chat fields the Responses API has no place for: left out (named in the routing metadata;
 * `provider.require_parameters` keeps such carriers out instead).
 */
export const NOT_TAKEN = [
  "n",
  "stop",
  "frequency_penalty",
  "presence_penalty",
  "repetition_penalty",
  "seed",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "top_k",
  "min_p",
  "top_a",
  "best_of",
  "prediction",
  "modalities",
] as const;

/**
 * The chat request as an OpenAI Responses body (`POST /v1/responses`), stateless: `store: false`, and for
 * a reasoning model `include: ["reasoning.encrypted_content"]`, so its reasoning comes back sealed by
 * OpenAI and goes back in the next turn as a `reasoning` item (no stored response is ever named).
 * Leading system messages → `instructions`; the rest → `input` items: messages (`input_text`,
 * `input_image`, `input_file` parts; an assistant's text as `output_text`), an assistant's reasoning
 * (OpenAI's own `reasoning_details` only: another carrier's signatures mean nothing to OpenAI) →
 * `reasoning` items, its tool calls → `function_call` items, tool messages → `function_call_output`;
 * function tools flat (`{type, name, description, parameters, strict}`: strict only when asked, as in
 * chat, where OpenAI's Responses default is strict); `tool_choice` (`auto` where the endpoint refuses a
 * forced one while thinking: ../thinking-rules.ts); reasoning → `reasoning.effort` (at least `low` on a model
 * that always thinks) and `summary: "auto"` (none when `reasoning.exclude`); the cap → `max_output_tokens`; `response_format` →
 * `text.format`; the session → `prompt_cache_key`; `user` (hashed) → `safety_identifier`.
 */
export function responsesBody(body: ChatRequest, stream: boolean, userHash: string | null, endpoint: PricedEndpoint): Obj {
  const messages = body.messages as Obj[];
  const out: Obj = { model: endpoint.upstream_model };
  let first = 0;
  const instructions: string[] = [];
  while (first < messages.length && messages[first]!.role === "system") instructions.push(systemText(messages[first++]!.content));
  if (instructions.length) out.instructions = instructions.join("\n\n");
  out.input = messages.slice(first).flatMap(inputItems);
  out.store = false;
  if (stream) out.stream = true;
  const cap = body.max_completion_tokens ?? body.max_tokens ?? null;
  if (cap !== null) out.max_output_tokens = cap;
  for (const k of ["temperature", "top_p", "parallel_tool_calls", "service_tier", "metadata"] as const)
    if (body[k] !== undefined && body[k] !== null) out[k] = body[k];
  if (Array.isArray(body.tools) && body.tools.length) out.tools = body.tools.map(tool);
  const choice = relaxesToolChoice(body, endpoint) ? "auto" : toolChoice(body.tool_choice);
  if (choice !== null) out.tool_choice = choice;
  const format = textFormat(body.response_format as Obj | null | undefined);
  if (format) out.text = { format };
  const ask = reasoningAsk(body);
  if (ask !== null) {
    // A model that always thinks (`thinking_always_on`: GPT-6.1 Sol) takes neither none nor minimal: its lowest is low.
    const always = endpoint.thinking_always_on === true;
    const effort = ask.on ? (ask.effort ?? "medium") : "none";
    const reasoning: Obj = { effort: always && (effort === "none" || effort === "minimal") ? "low" : effort };
    if ((ask.on || reasoningOffRefused(body, endpoint)) && !(ask.on && ask.exclude)) reasoning.summary = body.reasoning?.summary ?? "auto";
    out.reasoning = reasoning;
  }
  if (endpoint.supports_reasoning) out.include = ["reasoning.encrypted_content"];
  const cacheKey = typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : body.session_id;
  if (typeof cacheKey === "string" && cacheKey !== "") out.prompt_cache_key = cacheKey;
  if (userHash !== null) out.safety_identifier = userHash;
  return out;
}

function systemText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Obj[])
    .map((p) => {
      if (p.type !== "text") throw new Untranslatable(`A system message may carry only text parts on the Responses API (found ${String(p.type)}).`);
      return String(p.text ?? "");
    })
    .join("");
}

function inputItems(m: Obj): Obj[] {
  switch (m.role) {
    case "system":
    case "developer":
    case "user":
      return [{ type: "message", role: m.role, content: inputParts(m.content) }];
    case "assistant":
      return assistantItems(m);
    case "tool":
      return [{ type: "function_call_output", call_id: String(m.tool_call_id ?? ""), output: toolOutput(m.content) }];
    default:
      throw new Untranslatable(`A message with role ${JSON.stringify(m.role)} has no equivalent in OpenAI's Responses API.`);
  }
}

function inputParts(content: unknown): Obj[] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  if (!Array.isArray(content)) return [];
  return (content as Obj[]).map(inputPart);
}

/** One chat content part as a Responses input part. */
function inputPart(p: Obj): Obj {
  switch (p.type) {
    case "text":
      return { type: "input_text", text: p.text };
    case "image_url": {
      const image = p.image_url as Obj | string | undefined;
      const url = typeof image === "string" ? image : image?.url;
      const detail = typeof image === "object" && typeof image.detail === "string" ? image.detail : "auto";
      return { type: "input_image", image_url: url, detail };
    }
    case "file": {
      const file = (p.file ?? {}) as Obj;
      const data = typeof file.file_data === "string" ? file.file_data : "";
      const out: Obj = /^https?:\/\//.test(data) ? { type: "input_file", file_url: data } : { type: "input_file", file_data: data };
      if (typeof file.filename === "string") out.filename = file.filename;
      else if (out.file_data !== undefined) out.filename = "file.pdf";
      return out;
    }
    default:
      throw new Untranslatable(`OpenAI's Responses API does not take ${String(p.type)} parts here.`);
  }
}

/** An assistant turn: its OpenAI reasoning items, its text, then its tool calls (the order OpenAI gives them). */
function assistantItems(m: Obj): Obj[] {
  const items: Obj[] = [];
  if (Array.isArray(m.reasoning_details)) {
    const details = (m.reasoning_details as Obj[]).filter((d) => d.format === OPENAI_RESPONSES_REASONING_FORMAT);
    for (const d of details)
      if (d.type === "reasoning.encrypted" && typeof d.data === "string" && d.data !== "") {
        const summary = details
          .filter((s) => s.type === "reasoning.summary" && typeof s.summary === "string" && s.id === d.id && d.id !== undefined)
          .map((s) => ({ type: "summary_text", text: s.summary }));
        items.push({ type: "reasoning", summary, encrypted_content: d.data });
      }
  }
  const text = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? (m.content as Obj[]).map(assistantText).join("") : "";
  if (text !== "") items.push({ type: "message", role: "assistant", content: [{ type: "output_text", text }] });
  if (Array.isArray(m.tool_calls))
    for (const call of m.tool_calls as Obj[]) {
      const fn = (call.function ?? {}) as Obj;
      const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
      items.push({ type: "function_call", call_id: String(call.id ?? ""), name: fn.name, arguments: args });
    }
  return items;
}

function assistantText(p: Obj): string {
  if (p.type === "text" || p.type === "output_text") return String(p.text ?? "");
  throw new Untranslatable(`An assistant message may carry only text parts on the Responses API (found ${String(p.type)}).`);
}

/** A tool result: its text (the Responses API takes a string, or input parts). */
function toolOutput(content: unknown): string | Obj[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts = (content as Obj[]).map(inputPart);
  return parts.every((p) => p.type === "input_text") ? parts.map((p) => String(p.text ?? "")).join("") : parts;
}

function tool(t: unknown): Obj {
  const fn = ((t as Obj).function ?? {}) as Obj;
  if ((t as Obj).type !== "function") throw new Untranslatable(`OpenAI Responses carriers take only function tools here (found ${String((t as Obj).type)}).`);
  const out: Obj = { type: "function", name: fn.name, parameters: fn.parameters ?? { type: "object", properties: {} }, strict: fn.strict === true };
  if (typeof fn.description === "string") out.description = fn.description;
  return out;
}

function toolChoice(choice: unknown): unknown {
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  if (typeof choice === "object" && choice !== null) {
    const fn = (choice as Obj).function as Obj | undefined;
    if (typeof fn?.name === "string") return { type: "function", name: fn.name };
  }
  return null;
}

function textFormat(format: Obj | null | undefined): Obj | null {
  if (!format || format.type === "text") return null;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type === "json_schema") {
    const js = (format.json_schema ?? {}) as Obj;
    const out: Obj = { type: "json_schema", name: typeof js.name === "string" ? js.name : "response", schema: js.schema ?? {} };
    if (typeof js.strict === "boolean") out.strict = js.strict;
    if (typeof js.description === "string") out.description = js.description;
    return out;
  }
  throw new Untranslatable(`response_format ${String(format.type)} has no equivalent on OpenAI's Responses API: use json_schema or json_object.`);
}
