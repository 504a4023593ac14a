// Anthropic's Messages API (`POST /v1/messages`), as api.anthropic.com speaks it.
import type { IncomingMessage } from "node:http";
import { isRecord, type Json } from "./http";
import { anthropicToolPairing } from "./tool-pairing";
import { counts, joined, named, signFor, type Exchange, type Normalized, type Refusal, type StreamEvent, type Wire } from "./wire";
import { NO_RULES, type ModelRules } from "./model-rules";

/** Block boundaries before a breakpoint that Anthropic checks for a cached prefix. */
const LOOKBACK_BLOCKS = 20;
const TOP_LEVEL = new Set([
  "model",
  "messages",
  "max_tokens",
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
  "service_tier",
  "container",
  "mcp_servers",
  "output_format", // structured outputs, with their beta flag only
  "output_config", // effort (adaptive thinking)
  "cache_control", // automatic caching: one breakpoint on the last cacheable block
]);
const EFFORTS = new Set(["low", "medium", "high", "xhigh", "max"]);
const STRUCTURED_OUTPUTS_BETA = "structured-outputs-2025-11-13";
const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};
const STOP_REASONS = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" } as const;
const MAX_BREAKPOINTS = 4;

const refuse = (message: string): Refusal => ({ status: 400, message });

/** A block's text as the prompt counts it. */
/** A media block's source as a URL: its own (`url`), or its base64 data as a data URL; "" otherwise. */
function sourceUrl(source: unknown): string {
  if (!isRecord(source)) return "";
  if (source.type === "url" && typeof source.url === "string") return source.url;
  if (source.type === "base64" && typeof source.data === "string") return `data:${String(source.media_type ?? "")};base64,${source.data}`;
  return "";
}

function blockText(b: Json): string {
  if (typeof b.text === "string") return b.text;
  if (b.type === "tool_result")
    return typeof b.content === "string" ? b.content : Array.isArray(b.content) ? (b.content as Json[]).map(blockText).join("\n") : "";
  if (b.type === "tool_use") return `${String(b.name)} ${JSON.stringify(b.input ?? {})}`;
  return "";
}

/** Checks one message's blocks the way Anthropic does; returns why it refuses, if it does. `boundTo`: the model whose signatures alone verify. */
function checkBlocks(role: string, blocks: Json[], boundTo?: string): string | null {
  for (const b of blocks) {
    const t = b.type;
    if (t === "thinking") {
      if (role !== "assistant") return "thinking blocks may only appear in assistant turns";
      if (typeof b.signature !== "string" || b.signature !== signFor(String(b.thinking ?? ""), boundTo)) return "Invalid `signature` in `thinking` block";
    } else if (t === "tool_use" && role !== "assistant") return "tool_use blocks may only appear in assistant turns";
    else if (t === "tool_result" && role !== "user") return "tool_result blocks may only appear in user turns";
    else if (!["text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking"].includes(String(t)))
      return `unknown content block type ${JSON.stringify(t)}`;
  }
  return null;
}

function usage(x: Exchange, outputTokens: number): Json {
  const c = counts(x);
  return {
    input_tokens: c.prompt - x.cache.read - x.cache.write,
    cache_creation_input_tokens: x.cache.write,
    cache_read_input_tokens: x.cache.read,
    output_tokens: outputTokens,
  };
}

/** The thinking as returned (empty where the display is omitted), or null when none is. */
function shownThinking(x: Exchange): string | null {
  const plan = x.plans[0]!;
  if (!x.reasoningModel || !plan.reasoning.length) return null;
  if (x.request.thinkingOmitted) return "";
  return x.showsThinking ? joined(plan.reasoning) : null;
}

function content(x: Exchange): Json[] {
  const plan = x.plans[0]!;
  const blocks: Json[] = [];
  const thinking = shownThinking(x);
  if (thinking !== null) blocks.push({ type: "thinking", thinking, signature: signFor(thinking, x.request.signedBy) });
  if (plan.content.length) blocks.push({ type: "text", text: joined(plan.content) });
  if (plan.toolCall)
    blocks.push({ type: "tool_use", id: toolUseId(x), name: plan.toolCall.name, input: JSON.parse(plan.toolCall.arguments.join("")) as unknown });
  return blocks;
}

function toolUseId(x: Exchange): string {
  return `toolu_${x.id.slice(-12)}`;
}

/** The top-level fields Anthropic's token count takes: the prompt and what shapes it, no generation fields (`max_tokens`, `stream`, …). */
const COUNT_TOP_LEVEL = new Set(["model", "messages", "system", "tools", "tool_choice", "thinking", "output_format", "mcp_servers"]);

/**
 * A token-count request (`POST /v1/messages/count_tokens`) as the engine's request: refused as
 * api.anthropic.com refuses it (a generation field like `max_tokens` is an extra input), otherwise
 * checked as a Messages request is, so the count is the prompt the completion would be billed for.
 */
export function readCountTokens(body: unknown, req: IncomingMessage, rules: ModelRules = NO_RULES): Normalized | Refusal {
  if (!isRecord(body)) return refuse("request body is not a JSON object");
  for (const key of Object.keys(body)) if (!COUNT_TOP_LEVEL.has(key)) return refuse(`${key}: Extra inputs are not permitted`);
  // Any cap above the thinking budget: a count generates nothing.
  return anthropicWire.read({ ...body, max_tokens: Number.MAX_SAFE_INTEGER }, { stream: false, headers: req.headers, rules });
}

export const anthropicWire: Wire = {
  name: "anthropic-messages",
  reportsCacheWrites: true,
  implicitStep: null,

  auth(req: IncomingMessage): Refusal | null {
    if (typeof req.headers["x-api-key"] !== "string") return { status: 401, message: "x-api-key header is required" };
    if (typeof req.headers["anthropic-version"] !== "string") return { status: 400, message: "anthropic-version: header is required" };
    return null;
  },

  read(body, req): Normalized | Refusal {
    if (!isRecord(body)) return refuse("request body is not a JSON object");
    const rules = req.rules ?? NO_RULES;
    const boundTo = rules.thinkingBoundToModel && typeof body.model === "string" ? body.model : undefined;
    const betas = String(req.headers["anthropic-beta"] ?? "")
      .split(",")
      .map((b) => b.trim());
    for (const key of Object.keys(body))
      if (!TOP_LEVEL.has(key) || (key === "output_format" && !betas.includes(STRUCTURED_OUTPUTS_BETA))) return refuse(`${key}: Extra inputs are not permitted`);
    if (
      body.output_format !== undefined &&
      (!isRecord(body.output_format) || body.output_format.type !== "json_schema" || !isRecord(body.output_format.schema))
    )
      return refuse('output_format: must be {type: "json_schema", schema: {...}}');
    if (typeof body.model !== "string") return refuse("model: Field required");
    if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
      return refuse("max_tokens: Field required (a positive integer)");
    if (!Array.isArray(body.messages) || body.messages.length === 0) return refuse("messages: Field required (a non-empty array)");
    const maxTokens = body.max_tokens;
    const messages: unknown[] = [];
    const texts: string[] = [];
    // Where each breakpoint is: how many of the prompt's blocks come up to and including it.
    const marked: number[] = [];
    const mark = (b: Json) => {
      if (b.cache_control !== undefined) marked.push(texts.length);
    };
    // System blocks, then tools, then messages: the order Anthropic caches prefixes in.
    const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : Array.isArray(body.system) ? (body.system as Json[]) : [];
    for (const b of system) {
      texts.push(blockText(b));
      mark(b);
    }
    if (system.length) messages.push({ role: "system", content: system.map(blockText).join("\n") });
    const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
    for (const t of tools) {
      if (typeof t.name !== "string" || !isRecord(t.input_schema)) return refuse("tools: each tool needs a name and an input_schema object");
      texts.push(JSON.stringify(t));
      mark(t);
    }
    const unpaired = anthropicToolPairing(body.messages as unknown[]);
    if (unpaired) return refuse(unpaired);
    let expected = "user";
    let endsWithToolResult = false;
    for (const [i, m] of (body.messages as unknown[]).entries()) {
      if (!isRecord(m) || (m.role !== "user" && m.role !== "assistant")) return refuse(`messages.${i}.role: must be "user" or "assistant"`);
      if (m.role !== expected)
        return refuse(`messages: roles must alternate between "user" and "assistant", starting with "user" (messages.${i} is ${m.role})`);
      expected = m.role === "user" ? "assistant" : "user";
      const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? (m.content as Json[]) : null;
      if (!blocks) return refuse(`messages.${i}.content: must be a string or an array of blocks`);
      const why = checkBlocks(m.role, blocks, boundTo);
      if (why) return refuse(`messages.${i}.content: ${why}`);
      // Text after the result is the user's next words (as chat's `role: "tool"` then `role: "user"`), not the result's end.
      endsWithToolResult = blocks.at(-1)?.type === "tool_result";
      for (const b of blocks) {
        texts.push(blockText(b));
        mark(b);
      }
      const calls = blocks
        .filter((b) => b.type === "tool_use")
        .map((b) => ({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }));
      const parts = blocks.map((b) =>
        b.type === "image"
          ? { type: "image_url", image_url: { url: sourceUrl(b.source) } }
          : b.type === "document"
            ? { type: "file", file: { file_data: sourceUrl(b.source) } }
            : { type: "text", text: blockText(b) },
      );
      messages.push({ role: m.role, content: parts, ...(calls.length ? { tool_calls: calls } : {}) });
    }
    // Automatic caching (a request-level cache_control): one breakpoint, on the last block, counted among the four.
    if (body.cache_control !== undefined) {
      if (!isRecord(body.cache_control) || body.cache_control.type !== "ephemeral") return refuse("cache_control.type: Input should be 'ephemeral'");
      marked.push(texts.length);
    }
    const marks = marked.length;
    // Anthropic looks for a cached prefix at each breakpoint and at the 20 block boundaries before it (the earlier
    // turns' breakpoints), and writes the last: the candidates in prompt order, the last breakpoint last.
    const breakpoints: string[] = [];
    for (const at of marked) for (let k = Math.max(1, at - LOOKBACK_BLOCKS); k <= at; k++) breakpoints.push(texts.slice(0, k).join("\n"));
    if (marks > MAX_BREAKPOINTS) return refuse(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks}.`);
    const thinking = isRecord(body.thinking) ? body.thinking : undefined;
    // Claude Opus 5.5 and Fable 5.1 always think, adaptively: "disabled" and a fixed budget are refused.
    if (rules.thinkingAlwaysOn && (thinking?.type === "disabled" || thinking?.type === "enabled"))
      return refuse(
        `"thinking.type.${thinking.type}" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`,
      );
    if (thinking && thinking.type === "enabled") {
      const budget = thinking.budget_tokens;
      if (typeof budget !== "number" || budget < 1024) return refuse("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
      if (budget >= maxTokens) return refuse("`max_tokens` must be greater than `thinking.budget_tokens`");
    }
    if (body.output_config !== undefined) {
      const effort = isRecord(body.output_config) ? body.output_config.effort : undefined;
      if (!isRecord(body.output_config) || (effort !== undefined && !EFFORTS.has(String(effort))))
        return refuse("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'");
    }
    const thinks = rules.thinkingAlwaysOn || thinking?.type === "enabled" || thinking?.type === "adaptive";
    const choice = isRecord(body.tool_choice) ? body.tool_choice.type : undefined;
    if (thinks && rules.refusesForcedToolChoice && (choice === "any" || choice === "tool"))
      return refuse("Thinking may not be enabled when tool_choice forces tool use.");
    // Adaptive thinking's display: models that always think omit the text unless asked ("summarized").
    const omitted = thinks && (thinking?.display === "omitted" || (rules.thinkingAlwaysOn && thinking?.display !== "summarized"));
    return {
      model: body.model,
      messages,
      tools: tools.map((t) => ({ type: "function", function: { name: t.name, parameters: t.input_schema } })),
      extraCounted: { tool_choice: body.tool_choice },
      stream: body.stream === true,
      includeUsage: true,
      answered: 1,
      generated: 1,
      maxTokens: () => maxTokens,
      reasoningBudget: undefined,
      thinks,
      showsThinking: thinks,
      thinkingOmitted: omitted,
      ...(boundTo === undefined ? {} : { signedBy: boundTo }),
      breakpoints,
      implicitPrefixes: [],
      endsWithToolResult,
    };
  },

  errorBody(status, message) {
    return JSON.stringify({ type: "error", error: { type: ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"), message } });
  },

  answerJson(x) {
    const plan = x.plans[0]!;
    const message: Json = {
      id: `msg_${x.id.slice(-24)}`,
      type: "message",
      role: "assistant",
      model: x.model,
      content: content(x),
      stop_reason: x.directives.noFinish ? null : STOP_REASONS[plan.finishReason],
      stop_sequence: null,
    };
    if (!x.directives.noUsage) message.usage = usage(x, counts(x).completion);
    return JSON.stringify(message);
  },

  streamEvents(x) {
    const plan = x.plans[0]!;
    const events: StreamEvent[] = [];
    const start: Json = {
      id: `msg_${x.id.slice(-24)}`,
      type: "message",
      role: "assistant",
      model: x.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
    };
    if (!x.directives.noUsage) start.usage = usage(x, 1);
    events.push(named("message_start", { type: "message_start", message: start }), named("ping", { type: "ping" }));
    let index = 0;
    const block = (startBlock: Json, deltas: Json[], extra: Json[] = []) => {
      events.push(named("content_block_start", { type: "content_block_start", index, content_block: startBlock }));
      for (const delta of deltas) events.push(named("content_block_delta", { type: "content_block_delta", index, delta }, true));
      for (const delta of extra) events.push(named("content_block_delta", { type: "content_block_delta", index, delta }));
      events.push(named("content_block_stop", { type: "content_block_stop", index }));
      index++;
    };
    const thinking = shownThinking(x);
    if (thinking !== null)
      block({ type: "thinking", thinking: "", signature: "" }, thinking === "" ? [] : plan.reasoning.map((w) => ({ type: "thinking_delta", thinking: w })), [
        { type: "signature_delta", signature: signFor(thinking, x.request.signedBy) },
      ]);
    if (plan.content.length)
      block(
        { type: "text", text: "" },
        plan.content.map((w) => ({ type: "text_delta", text: w })),
      );
    if (plan.toolCall)
      block(
        { type: "tool_use", id: toolUseId(x), name: plan.toolCall.name, input: {} },
        plan.toolCall.arguments.map((f) => ({ type: "input_json_delta", partial_json: f })),
      );
    if (x.directives.malformed) events.splice(Math.floor(events.length / 2), 0, this.malformedEvent(x));
    const delta: Json = { type: "message_delta", delta: { stop_reason: x.directives.noFinish ? null : STOP_REASONS[plan.finishReason], stop_sequence: null } };
    if (!x.directives.noUsage) delta.usage = { output_tokens: counts(x).completion };
    events.push(named("message_delta", delta), named("message_stop", { type: "message_stop" }));
    return events;
  },

  malformedEvent() {
    return { text: 'event: content_block_delta\ndata: {"type":"content_block_delta", not json\n\n', token: false };
  },
};
