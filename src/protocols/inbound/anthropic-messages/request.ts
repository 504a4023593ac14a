import { readOrigin } from "./signature-origin";
import { isObj, refuse, refuseUnknownFields, ROUTER_FIELDS_TAKEN, type Obj } from "../request-checks";

/** The Messages API's request fields we take, and the router's own (as on /chat/completions). */
const TAKEN = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "metadata",
  "stop_sequences",
  "stream",
  "temperature",
  "top_p",
  "top_k",
  "tools",
  "tool_choice",
  "thinking",
  "service_tier", // a hint of Anthropic's capacity tier: no meaning across carriers, so it is not sent
  // Server-side context edits (Claude Code sends "clear thinking, keep all"): not applied, the whole context is
  // sent and billed as sent (docs/api/messages.md); accepted so that agents which send it work.
  "context_management",
  "output_config", // effort → reasoning effort; format → response_format
  ...ROUTER_FIELDS_TAKEN,
]);

/**
 * An Anthropic Messages request as the canonical (chat) request: `system` → a system message; each
 * turn's blocks → chat messages in order (a user turn's `tool_result` blocks → `tool` messages, its
 * other blocks → a user message after them; an assistant turn's `tool_use` → `tool_calls`, its
 * `thinking` → `reasoning_details` with the signature untouched); `cache_control` kept on the part it
 * marks; tools → function tools; `tool_choice`; `stop_sequences` → `stop`; `thinking` → `reasoning`;
 * `metadata.user_id` → `user`. Fields it has no equivalent for are refused with a 400 naming them.
 */
export function chatFromMessages(json: Obj, betas: string[] = []): Obj {
  refuseUnknownFields(json, TAKEN, "/messages");
  if (typeof json.max_tokens !== "number") refuse("max_tokens: Field required (a positive integer).");
  if (!Array.isArray(json.messages)) refuse("messages: Field required (an array of turns).");
  const out: Obj = {};
  for (const k of ["model", "max_tokens", "stream", "temperature", "top_p", "top_k", ...ROUTER_FIELDS_TAKEN]) if (json[k] !== undefined) out[k] = json[k];
  const messages: Obj[] = [];
  const system = systemMessage(json.system);
  if (system) messages.push(system);
  (json.messages as unknown[]).forEach((turn, i) => messages.push(...turnMessages(turn, i)));
  out.messages = messages;
  if (Array.isArray(json.stop_sequences) && json.stop_sequences.length) out.stop = json.stop_sequences;
  if (json.tools !== undefined) {
    if (!Array.isArray(json.tools)) refuse("tools: must be an array.");
    if (json.tools.length) out.tools = (json.tools as unknown[]).map(tool);
  }
  const choice = toolChoice(json.tool_choice);
  if (choice) Object.assign(out, choice);
  const reasoning = thinking(json.thinking);
  const output = outputConfig(json.output_config);
  if (reasoning || output.effort) out.reasoning = { ...reasoning, ...(output.effort ? { effort: output.effort } : {}) };
  if (output.format) out.response_format = output.format;
  if (isObj(json.metadata) && typeof json.metadata.user_id === "string") out.user = json.metadata.user_id;
  if (json.context_management !== undefined && !isObj(json.context_management)) refuse("context_management: must be an object.");
  if (betas.length) out.anthropic_beta = betas.slice(0, 32);
  return out;
}

/** The `anthropic-beta` header's flags (comma-separated, possibly repeated). */
export function betaFlags(header: string | null): string[] {
  if (!header) return [];
  return header
    .split(",")
    .map((f) => f.trim())
    .filter((f) => f !== "" && f.length <= 100);
}

function systemMessage(system: unknown): Obj | null {
  if (system === undefined || system === null || system === "") return null;
  if (typeof system === "string") return { role: "system", content: system };
  if (!Array.isArray(system)) refuse("system: must be a string or an array of text blocks.");
  const parts = (system as unknown[]).map((b, i) => {
    if (!isObj(b) || b.type !== "text") refuse(`system.${i}: only text blocks are accepted in system.`);
    return withCache({ type: "text", text: b.text }, b);
  });
  return { role: "system", content: parts };
}

function turnMessages(turn: unknown, i: number): Obj[] {
  // Claude Code sends mid-conversation `system` turns (text): system messages where they stand.
  if (isObj(turn) && turn.role === "system") return [systemMessage(turn.content) ?? { role: "system", content: "" }];
  if (!isObj(turn) || (turn.role !== "user" && turn.role !== "assistant")) refuse(`messages.${i}.role: must be "user", "assistant" or "system".`);
  const blocks = typeof turn.content === "string" ? [{ type: "text", text: turn.content }] : Array.isArray(turn.content) ? (turn.content as unknown[]) : null;
  if (!blocks) refuse(`messages.${i}.content: must be a string or an array of blocks.`);
  return turn.role === "user" ? userMessages(blocks as unknown[], i) : [assistantMessage(blocks as unknown[], i)];
}

/** A user turn: its tool results as `tool` messages, in order, its other blocks as user messages between them. */
function userMessages(blocks: unknown[], i: number): Obj[] {
  const out: Obj[] = [];
  let parts: Obj[] = [];
  const flush = () => {
    if (parts.length) out.push({ role: "user", content: parts });
    parts = [];
  };
  blocks.forEach((b, j) => {
    if (!isObj(b)) refuse(`messages.${i}.content.${j}: must be a block.`);
    if (b.type === "tool_result") {
      flush();
      out.push(...toolResult(b, `messages.${i}.content.${j}`));
    } else parts.push(userPart(b, `messages.${i}.content.${j}`));
  });
  flush();
  return out;
}

function userPart(b: Obj, at: string): Obj {
  switch (b.type) {
    case "text":
      return withCache({ type: "text", text: b.text }, b);
    case "image":
      return withCache({ type: "image_url", image_url: { url: sourceUrl(b.source, at) } }, b);
    case "document":
      return withCache({ type: "file", file: { filename: typeof b.title === "string" ? b.title : "document.pdf", file_data: sourceUrl(b.source, at) } }, b);
    default:
      return refuse(`${at}: a ${String(b.type)} block has no equivalent here (text, image, document and tool_result are accepted in user turns).`);
  }
}

function sourceUrl(source: unknown, at: string): string {
  if (isObj(source) && source.type === "base64" && typeof source.media_type === "string" && typeof source.data === "string")
    return `data:${source.media_type};base64,${source.data}`;
  if (isObj(source) && source.type === "url" && typeof source.url === "string") return source.url;
  return refuse(`${at}.source: a base64 source ({type, media_type, data}) or a url source ({type, url}) is required.`);
}

/** A tool_result block → a tool message (its text), and its images as a user message right after. */
function toolResult(b: Obj, at: string): Obj[] {
  if (typeof b.tool_use_id !== "string") refuse(`${at}.tool_use_id: Field required.`);
  const content = b.content;
  if (content === undefined || typeof content === "string") return [withCache({ role: "tool", tool_call_id: b.tool_use_id, content: content ?? "" }, b)];
  if (!Array.isArray(content)) refuse(`${at}.content: must be a string or an array of blocks.`);
  const texts: string[] = [];
  const images: Obj[] = [];
  (content as unknown[]).forEach((c, k) => {
    if (isObj(c) && c.type === "text" && typeof c.text === "string") texts.push(c.text);
    else if (isObj(c) && c.type === "image") images.push({ type: "image_url", image_url: { url: sourceUrl(c.source, `${at}.content.${k}`) } });
    else refuse(`${at}.content.${k}: text and image blocks are accepted in a tool_result.`);
  });
  const out: Obj[] = [withCache({ role: "tool", tool_call_id: b.tool_use_id, content: texts.join("\n") }, b)];
  if (images.length) out.push({ role: "user", content: images });
  return out;
}

function assistantMessage(blocks: unknown[], i: number): Obj {
  const texts: Obj[] = [];
  const calls: Obj[] = [];
  const details: Obj[] = [];
  blocks.forEach((b, j) => {
    const at = `messages.${i}.content.${j}`;
    if (!isObj(b)) refuse(`${at}: must be a block.`);
    if (b.type === "text") texts.push(withCache({ type: "text", text: b.text }, b));
    else if (b.type === "tool_use") calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    else if (b.type === "thinking") {
      // The origin our answer put before the signature (./signature-origin.ts) read back off it.
      const { value, origin } = readOrigin(b.signature);
      details.push({ type: "reasoning.text", text: b.thinking, signature: value ?? null, index: details.length, ...origin });
    } else if (b.type === "redacted_thinking") {
      const { value, origin } = readOrigin(b.data);
      details.push({ type: "reasoning.encrypted", data: value, index: details.length, ...origin });
    } else refuse(`${at}: a ${String(b.type)} block has no equivalent in an assistant turn here.`);
  });
  const plain = texts.every((t) => t.cache_control === undefined);
  const message: Obj = { role: "assistant", content: texts.length === 0 ? (calls.length ? null : "") : plain ? texts.map((t) => t.text).join("") : texts };
  if (calls.length) message.tool_calls = calls;
  if (details.length) message.reasoning_details = details;
  return message;
}

function tool(t: unknown, i: number): Obj {
  if (!isObj(t)) refuse(`tools.${i}: must be an object.`);
  if (t.type !== undefined && t.type !== "custom")
    refuse(`tools.${i}: ${String(t.type)} is one of Anthropic's server tools, which only Anthropic runs; define it as a custom tool (name, input_schema).`);
  if (typeof t.name !== "string") refuse(`tools.${i}.name: Field required.`);
  const fn: Obj = { name: t.name, parameters: t.input_schema ?? { type: "object", properties: {} } };
  if (typeof t.description === "string") fn.description = t.description;
  return withCache({ type: "function", function: fn }, t);
}

function toolChoice(choice: unknown): Obj | null {
  if (choice === undefined || choice === null) return null;
  if (!isObj(choice)) refuse("tool_choice: must be an object ({type: auto | any | tool | none}).");
  const parallel = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case "auto":
      return { tool_choice: "auto", ...parallel };
    case "any":
      return { tool_choice: "required", ...parallel };
    case "none":
      return { tool_choice: "none" };
    case "tool":
      if (typeof choice.name !== "string") refuse("tool_choice.name: Field required for type tool.");
      return { tool_choice: { type: "function", function: { name: choice.name } }, ...parallel };
    default:
      return refuse(`tool_choice.type: ${String(choice.type)} is not one of auto, any, tool, none.`);
  }
}

function thinking(t: unknown): Obj | null {
  if (t === undefined || t === null) return null;
  if (!isObj(t)) refuse("thinking: must be an object.");
  if (t.type === "disabled") return { enabled: false };
  if (t.type === "adaptive") return { enabled: true };
  // `display` ("summarized", "omitted") says how much thinking text to show: thinking is returned as the carrier gives it.
  if (t.type === "enabled") return typeof t.budget_tokens === "number" ? { max_tokens: t.budget_tokens } : { enabled: true };
  return refuse(`thinking.type: ${String(t.type)} is not one of enabled, disabled, adaptive.`);
}

/** `output_config`: `effort` (low, medium, high, max) and `format` (a JSON schema the answer follows). */
function outputConfig(config: unknown): { effort?: string; format?: Obj } {
  if (config === undefined || config === null) return {};
  if (!isObj(config)) refuse("output_config: must be an object ({effort, format}).");
  const unknown = Object.keys(config).filter((k) => k !== "effort" && k !== "format");
  if (unknown.length) refuse(`output_config: ${unknown.join(", ")} has no equivalent here (effort and format are accepted).`);
  const out: { effort?: string; format?: Obj } = {};
  if (config.effort !== undefined) {
    if (typeof config.effort !== "string") refuse("output_config.effort: must be a string (low, medium, high, max).");
    out.effort = config.effort;
  }
  if (config.format !== undefined && config.format !== null) {
    const f = config.format;
    if (!isObj(f) || f.type !== "json_schema" || !isObj(f.schema)) refuse('output_config.format: must be {type: "json_schema", schema}.');
    out.format = { type: "json_schema", json_schema: { name: "output", schema: f.schema, strict: true } };
  }
  return out;
}

function withCache(target: Obj, from: Obj): Obj {
  return from.cache_control === undefined ? target : { ...target, cache_control: from.cache_control };
}
