// OpenAI Chat Completions, as the OpenAI-compatible carriers speak it.
import type { IncomingMessage } from "node:http";
import { errorJson, isRecord, type Json } from "./http";
import { boundaryPrefixes, counts, joined, plain, type Exchange, type Normalized, type Refusal, type StreamEvent, type Wire } from "./wire";
import { contentText } from "./tokens";
import { chatToolPairing } from "./tool-pairing";

function nonNegativeInt(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}
function positiveInt(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : undefined;
}

/** The chunk or body head: id, object, created, model, and the carrier's own `provider` when asked for. */
function head(x: Exchange, object: string): Json {
  const h: Json = { id: x.id, object, created: x.created, model: x.model };
  if (x.directives.providerField) h.provider = `Sim ${x.carrier}`;
  return h;
}

function reasoningKey(x: Exchange): string {
  return x.directives.reasoningContent ? "reasoning_content" : "reasoning";
}

/** Usage over every completion generated (all `best_of` candidates are billed); cache reads included in the prompt. */
function usageOf(x: Exchange): Json {
  const c = counts(x);
  const usage: Json = { prompt_tokens: c.prompt, completion_tokens: c.completion, total_tokens: c.prompt + c.completion };
  if (x.cache.read > 0 || x.directives.cacheRead !== undefined) usage.prompt_tokens_details = { cached_tokens: x.cache.read };
  if (x.reasoningModel) usage.completion_tokens_details = { reasoning_tokens: c.reasoning };
  return usage;
}

function callId(x: Exchange, index: number): string {
  return `call_${x.id.slice(-8)}${index ? `_${index}` : ""}`;
}

export const openAiWire: Wire = {
  name: "openai-chat",
  reportsCacheWrites: false,
  implicitStep: 128,

  auth(_req: IncomingMessage): Refusal | null {
    return null; // the Bearer key's presence is recorded, not checked (as before)
  },

  read(body, req): Normalized | Refusal {
    if (body === undefined) return { status: 400, message: "request body is not valid JSON" };
    if (!isRecord(body) || !Array.isArray(body.messages)) return { status: 400, message: "`messages` must be an array" };
    // GPT-6 Astra and 6.1 Sol always reason: they have no effort "none".
    if (req.rules?.thinkingAlwaysOn && body.reasoning_effort === "none")
      return {
        status: 400,
        message: "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'low', 'medium', 'high' and 'xhigh'.",
      };
    if (req.rules?.chatToolsOnlyWithoutReasoning && Array.isArray(body.tools) && body.tools.length > 0 && body.reasoning_effort !== "none")
      return {
        status: 400,
        message: `Function tools with reasoning_effort are not supported for ${String(body.model)} in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.`,
      };
    const messages = body.messages as unknown[];
    const unpaired = chatToolPairing(messages);
    if (unpaired) return { status: 400, message: unpaired };
    const answered = positiveInt(body.n) ?? 1;
    return {
      model: typeof body.model === "string" ? body.model : "unknown",
      messages,
      tools: Array.isArray(body.tools) ? (body.tools as unknown[]) : undefined,
      extraCounted: { tool_choice: body.tool_choice, response_format: body.response_format },
      stream: body.stream === true,
      includeUsage: isRecord(body.stream_options) && body.stream_options.include_usage === true,
      answered,
      generated: Math.max(answered, positiveInt(body.best_of) ?? 1),
      maxTokens: (field) => (field ? nonNegativeInt(body[field]) : (nonNegativeInt(body.max_completion_tokens) ?? nonNegativeInt(body.max_tokens))),
      reasoningBudget: isRecord(body.reasoning) ? positiveInt(body.reasoning.max_tokens) : undefined,
      thinks: null,
      showsThinking: true,
      breakpoints: [],
      implicitPrefixes: boundaryPrefixes(messages.map((m) => (isRecord(m) ? contentText(m.content) : ""))),
      endsWithToolResult: isRecord(messages.at(-1)) && ((messages.at(-1) as Json).role === "tool" || (messages.at(-1) as Json).role === "function"),
    };
  },

  errorBody(status, message, refusal = false) {
    return errorJson(status, message, refusal ? "invalid_request_error" : "sim_error");
  },

  answerJson(x) {
    const choices = x.plans.map((plan, index) => {
      const { toolCall } = plan;
      const message: Json = { role: "assistant", content: toolCall ? null : joined(plan.content) };
      if (x.reasoningModel) message[reasoningKey(x)] = joined(plan.reasoning);
      if (toolCall)
        message.tool_calls = [{ id: callId(x, index), type: "function", function: { name: toolCall.name, arguments: toolCall.arguments.join("") } }];
      return { index, message, finish_reason: x.directives.noFinish ? null : plan.finishReason };
    });
    const completion: Json = { ...head(x, "chat.completion"), choices };
    if (!x.directives.noUsage) completion.usage = usageOf(x);
    return JSON.stringify(completion);
  },

  /** Each choice in turn (role chunk, token chunks, finish chunk, all with its `index`), then usage and [DONE]. */
  streamEvents(x) {
    const chunk = (choices: unknown[], extra?: Json): StreamEvent => plain({ ...head(x, "chat.completion.chunk"), choices, ...extra });
    const events: StreamEvent[] = [];
    for (const [index, plan] of x.plans.entries()) {
      const delta = (d: Json): StreamEvent => ({ ...chunk([{ index, delta: d, finish_reason: null }]), token: true });
      const tokens = [...plan.reasoning.map((w) => delta({ [reasoningKey(x)]: w })), ...plan.content.map((w) => delta({ content: w }))];
      const { toolCall } = plan;
      if (toolCall) {
        // OpenAI's shape: the first delta names the call, the next ones carry argument fragments.
        tokens.push(delta({ tool_calls: [{ index: 0, id: callId(x, index), type: "function", function: { name: toolCall.name, arguments: "" } }] }));
        for (const fragment of toolCall.arguments) tokens.push(delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }));
      }
      if (x.directives.malformed && index === 0) tokens.splice(Math.floor(tokens.length / 2), 0, this.malformedEvent(x));
      events.push(chunk([{ index, delta: { role: "assistant", content: "" }, finish_reason: null }]), ...tokens);
      if (!x.directives.noFinish) events.push(chunk([{ index, delta: {}, finish_reason: plan.finishReason }]));
    }
    if (x.request.includeUsage && !x.directives.noUsage) events.push({ ...chunk([], { usage: usageOf(x) }), usage: true });
    events.push(plain("[DONE]"));
    return events;
  },

  malformedEvent(x) {
    return plain(`{"id":"${x.id}","choices":[{"delta": not json`);
  },
};
