import type { PricedEndpoint } from "../../../catalog/catalog";
import type { ChatRequest } from "../../../request/chat-request";
import { Untranslatable } from "../../../request/errors";
import { detailBlocks, thinkingFields } from "./thinking";
import { relaxesToolChoice } from "../thinking-rules";

export { ANTHROPIC_REASONING_FORMAT, MIN_THINKING_BUDGET } from "./thinking";

type Obj = Record<string, unknown>;
type Block = Obj & { type: string };
export type Turn = { role: "user" | "assistant"; content: Block[] };

/** The beta flag of Anthropic's structured outputs (`output_format`). */
export const STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-11-13";

/** The JSON schema of a `response_format: {type: "json_schema"}`, which Anthropic takes as `output_format`; null otherwise. */
export function structuredOutput(body: ChatRequest): unknown {
  const format = body.response_format as Obj | null | undefined;
  if (format?.type !== "json_schema") return null;
  const schema = (format.json_schema as Obj | undefined)?.schema;
  return schema === undefined ? null : schema;
}

/** Most `cache_control` breakpoints one request may carry. */
export const MAX_CACHE_BREAKPOINTS = 4;

/**
 * Chat fields Anthropic's Messages API does not take. They are left out (the catalog does not list them
 * among the endpoint's supported parameters, so `provider.require_parameters` routes around the carrier).
 */
export const NOT_TAKEN = ["n", "frequency_penalty", "presence_penalty", "logprobs", "top_logprobs", "logit_bias", "seed", "best_of"] as const;

/**
 * The chat request as an Anthropic Messages body: system and developer messages → top-level `system`;
 * the other messages → alternating user/assistant turns of blocks (tool calls → `tool_use`, tool
 * messages → `tool_result` blocks in the next user turn, before that turn's own content; signed
 * reasoning → `thinking` blocks, first in their turn, signatures untouched, where this endpoint's model
 * can verify them: ./thinking.ts); tools → `input_schema`; `tool_choice` (`required` → `any`; `auto`
 * where the endpoint refuses forcing a tool while it thinks); `stop` → `stop_sequences`; reasoning →
 * `thinking` (./thinking.ts); `max_tokens` always set. `cache_control` stays where the caller put it (at most 4); automatic caching:
 * `automaticCache`.
 */
export function anthropicBody(body: ChatRequest, stream: boolean, userHash: string | null, endpoint: PricedEndpoint): Obj {
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? endpoint.max_completion_tokens ?? endpoint.context_length;
  const { system, turns } = conversation(body.messages as Obj[], endpoint);
  const out: Obj = { model: endpoint.upstream_model, max_tokens: maxTokens };
  if (system.length) out.system = system;
  out.messages = turns;
  if (stream) out.stream = true;
  for (const [from, to] of [
    ["temperature", "temperature"],
    ["top_p", "top_p"],
    ["top_k", "top_k"],
  ] as const)
    if (typeof (body as Obj)[from] === "number") out[to] = (body as Obj)[from];
  const stop = body.stop;
  if (typeof stop === "string") out.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length) out.stop_sequences = stop;
  if (Array.isArray(body.tools) && body.tools.length) out.tools = body.tools.map((t) => tool(t, endpoint));
  const choice = toolChoice(relaxesToolChoice(body, endpoint) ? "auto" : body.tool_choice, body.parallel_tool_calls);
  if (choice) out.tool_choice = choice;
  if (userHash !== null) out.metadata = { user_id: userHash };
  const format = body.response_format as Obj | null | undefined;
  const schema = structuredOutput(body);
  if (schema !== null) {
    if (!endpoint.supportedParameters.includes("structured_outputs"))
      throw new Untranslatable(
        `${endpoint.modelId} does not take structured outputs (response_format json_schema) on Anthropic; ask for JSON in the prompt, or use a tool with an input_schema.`,
      );
    out.output_format = { type: "json_schema", schema };
  } else if (format && format.type !== "text")
    throw new Untranslatable(
      `response_format ${String(format.type)} has no equivalent on Anthropic carriers: use json_schema (structured outputs) with a schema, or ask for JSON in the prompt.`,
    );
  Object.assign(out, thinkingFields(body, endpoint, maxTokens));
  const automatic = automaticCache(body, out);
  if (automatic !== null) out.cache_control = automatic;
  const breakpoints = countCacheControl(out);
  if (breakpoints > MAX_CACHE_BREAKPOINTS)
    throw new Untranslatable(`The request marks ${breakpoints} cache_control breakpoints; Anthropic takes at most ${MAX_CACHE_BREAKPOINTS}.`);
  return out;
}

function conversation(messages: Obj[], endpoint: PricedEndpoint): { system: Block[]; turns: Turn[] } {
  const system: Block[] = [];
  const turns: Turn[] = [];
  const push = (role: Turn["role"], blocks: Block[], first = false) => {
    const last = turns.at(-1);
    if (last && last.role === role) {
      // Tool results lead their user turn, as Anthropic requires; the user's own words follow.
      if (first) last.content.splice(firstNonResult(last.content), 0, ...blocks);
      else last.content.push(...blocks);
    } else turns.push({ role, content: blocks });
  };
  for (const m of messages) {
    switch (m.role) {
      case "system":
      case "developer":
        system.push(...textBlocks(m.content, m.role));
        break;
      case "user":
        push("user", contentBlocks(m.content));
        break;
      case "assistant":
        push("assistant", assistantBlocks(m, endpoint));
        break;
      case "tool":
        push("user", [toolResult(m)], true);
        break;
      default:
        throw new Untranslatable(`A message with role ${JSON.stringify(m.role)} has no equivalent in Anthropic's Messages API.`);
    }
  }
  for (const t of turns) if (t.content.length === 0) t.content.push({ type: "text", text: "" });
  return { system, turns: withUserFirst(turns) };
}

/** The user turn put before a history Anthropic would refuse for how it starts (`withUserFirst`). */
export const OPENING_USER_TURN: Turn = { role: "user", content: [{ type: "text", text: "(conversation continues)" }] };

/**
 * Anthropic's Messages API refuses a conversation that does not start with a user turn (a history opening
 * with the assistant, as a client resuming or seeding one sends) or has no turn at all (only a system
 * prompt): other APIs take both. Such a history gets a minimal user turn first (`OPENING_USER_TURN`),
 * so the request is served as the caller wrote it rather than refused by the carrier (docs/protocols.md).
 */
export function withUserFirst(turns: Turn[]): Turn[] {
  if (turns[0]?.role === "user") return turns;
  return [{ role: "user", content: OPENING_USER_TURN.content.map((b) => ({ ...b })) }, ...turns];
}

function firstNonResult(blocks: Block[]): number {
  const i = blocks.findIndex((b) => b.type !== "tool_result");
  return i === -1 ? blocks.length : i;
}

function textBlocks(content: unknown, role: string): Block[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return (content as Obj[]).map((p) => {
    if (p.type !== "text") throw new Untranslatable(`A ${role} message may carry only text parts on Anthropic (found ${String(p.type)}).`);
    return withCache({ type: "text", text: p.text }, p);
  });
}

function contentBlocks(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return (content as Obj[]).map((p) => withCache(part(p), p));
}

/** One chat content part as an Anthropic block. */
function part(p: Obj): Block {
  switch (p.type) {
    case "text":
      return { type: "text", text: p.text };
    case "image_url": {
      const image = p.image_url as Obj | string | undefined;
      const url = typeof image === "string" ? image : typeof image?.url === "string" ? image.url : "";
      return { type: "image", source: source(url, "image") };
    }
    case "file": {
      const file = (p.file ?? {}) as Obj;
      const data = typeof file.file_data === "string" ? file.file_data : "";
      return { type: "document", source: source(data, "document") };
    }
    default:
      throw new Untranslatable(`Anthropic carriers do not take ${String(p.type)} parts.`);
  }
}

/** A data URL as a base64 source, an http(s) URL as a url source. */
function source(url: string, what: string): Obj {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: "base64", media_type: data[1], data: data[2] };
  if (/^https?:\/\//.test(url)) return { type: "url", url };
  throw new Untranslatable(`An ${what} part needs a data: URL (base64) or an http(s) URL on Anthropic.`);
}

function assistantBlocks(m: Obj, endpoint: PricedEndpoint): Block[] {
  const blocks: Block[] = [];
  // Signed thinking first, byte for byte as the carrier gave it (where this model can verify it).
  if (Array.isArray(m.reasoning_details)) for (const d of m.reasoning_details as Obj[]) blocks.push(...(detailBlocks(d, endpoint) as Block[]));
  if (typeof m.content === "string") {
    if (m.content !== "") blocks.push({ type: "text", text: m.content });
  } else if (Array.isArray(m.content)) blocks.push(...contentBlocks(m.content));
  if (Array.isArray(m.tool_calls))
    for (const call of m.tool_calls as Obj[]) {
      const fn = (call.function ?? {}) as Obj;
      blocks.push({ type: "tool_use", id: call.id, name: fn.name, input: toolInput(fn.arguments, fn.name) });
    }
  return blocks;
}

function toolInput(args: unknown, name: unknown): unknown {
  if (args === undefined || args === "") return {};
  if (typeof args !== "string") return args;
  try {
    const input: unknown = JSON.parse(args);
    if (typeof input === "object" && input !== null && !Array.isArray(input)) return input;
  } catch {
    // refused below
  }
  throw new Untranslatable(`The arguments of tool call ${JSON.stringify(name)} are not a JSON object, which Anthropic requires of a tool_use input.`);
}

function toolResult(m: Obj): Block {
  const content = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? contentBlocks(m.content) : "";
  return withCache({ type: "tool_result", tool_use_id: m.tool_call_id, content }, m);
}

function tool(t: unknown, endpoint: PricedEndpoint): Obj {
  const fn = ((t as Obj).function ?? {}) as Obj;
  if ((t as Obj).type !== "function") throw new Untranslatable(`Anthropic carriers take only function tools here (found ${String((t as Obj).type)}).`);
  const out: Obj = { name: fn.name, input_schema: fn.parameters ?? { type: "object", properties: {} } };
  if (typeof fn.description === "string") out.description = fn.description;
  if (strictTools(endpoint) && fn.strict === true) out.strict = true;
  return withCache(out, t as Obj);
}

/** Whether this endpoint enforces a tool's schema (`strict: true`, Anthropic's strict tool use, a part of its structured outputs beta). */
function strictTools(endpoint: PricedEndpoint): boolean {
  return endpoint.supportedParameters.includes("structured_outputs");
}

/** Whether the body asks the endpoint for structured output of any kind: `output_format`, or a strict tool (the beta flag goes with either). */
export function usesStructuredOutputs(body: ChatRequest, endpoint: PricedEndpoint): boolean {
  if (structuredOutput(body) !== null) return true;
  return strictTools(endpoint) && Array.isArray(body.tools) && body.tools.some((t) => ((t as Obj).function as Obj | undefined)?.strict === true);
}

function toolChoice(choice: unknown, parallel: boolean | null | undefined): Obj | null {
  let out: Obj | null = null;
  if (choice === "auto") out = { type: "auto" };
  else if (choice === "none") out = { type: "none" };
  else if (choice === "required") out = { type: "any" };
  else if (typeof choice === "object" && choice !== null) {
    const fn = (choice as Obj).function as Obj | undefined;
    if (typeof fn?.name === "string") out = { type: "tool", name: fn.name };
  }
  if (parallel === false) out = { ...(out ?? { type: "auto" }), disable_parallel_tool_use: true };
  return out;
}

/** The caller's `cache_control` kept on the block it marked. */
function withCache(block: Block, from: Obj): Block;
function withCache(block: Obj, from: Obj): Obj;
function withCache(block: Obj, from: Obj): Obj {
  return from.cache_control === undefined ? block : { ...block, cache_control: from.cache_control };
}

/**
 * Anthropic's automatic caching, a request-level `cache_control` (the breakpoint on the last cacheable block,
 * moving forward as the conversation grows): what the caller asked for with OpenRouter's top-level
 * `cache_control`; or, from a caller whose own protocol caches by itself and who named a cache key
 * (`prompt_cache_key`: Codex on every turn) but marked no breakpoint, what that key asks for there — without
 * it an agent on Claude would pay the full input price for its whole prompt on every turn.
 */
function automaticCache(body: ChatRequest, out: Obj): Obj | null {
  if (body.cache_control !== undefined) return body.cache_control;
  if (typeof body.prompt_cache_key === "string" && body.prompt_cache_key !== "" && countCacheControl(out) === 0) return { type: "ephemeral" };
  return null;
}

function countCacheControl(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + countCacheControl(x), 0);
  if (typeof v !== "object" || v === null) return 0;
  let n = "cache_control" in v ? 1 : 0;
  for (const key of ["system", "messages", "content", "tools"] as const) if (key in v) n += countCacheControl((v as Obj)[key]);
  return n;
}
