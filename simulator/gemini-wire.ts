// Google's Gemini API (`models/{model}:generateContent`, `:streamGenerateContent?alt=sse`).
import type { IncomingMessage } from "node:http";
import { isRecord, type Json } from "./http";
import { geminiToolPairing } from "./tool-pairing";
import { boundaryPrefixes, counts, joined, plain, sign, type Exchange, type Normalized, type Refusal, type StreamEvent, type Wire } from "./wire";

const TOP_LEVEL = new Set(["contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "safetySettings", "cachedContent", "labels"]);
const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};
const FINISH = { stop: "STOP", length: "MAX_TOKENS", tool_calls: "STOP" } as const;

const refuse = (message: string): Refusal => ({ status: 400, message });

/** An `inlineData` or `fileData` part in the chat shape of its media kind (by its MIME type); null for other parts. */
function mediaPart(p: Json): Json | null {
  const inline = isRecord(p.inlineData) ? p.inlineData : null;
  const file = isRecord(p.fileData) ? p.fileData : null;
  if (!inline && !file) return null;
  const mime = String((inline ?? file)!.mimeType ?? "");
  const url = inline ? `data:${mime};base64,${String(inline.data ?? "")}` : String(file!.fileUri ?? "");
  if (mime === "application/pdf" || mime.startsWith("text/")) return { type: "file", file: { file_data: url } };
  if (mime.startsWith("audio/") && inline) return { type: "input_audio", input_audio: { data: String(inline.data ?? ""), format: mime.slice(6) } };
  if (mime.startsWith("video/")) return { type: "video_url", video_url: { url } };
  return { type: "image_url", image_url: { url } };
}

function partText(p: Json): string {
  if (typeof p.text === "string") return p.text;
  if (isRecord(p.functionCall)) return `${String(p.functionCall.name)} ${JSON.stringify(p.functionCall.args ?? {})}`;
  if (isRecord(p.functionResponse)) return JSON.stringify(p.functionResponse.response ?? {});
  return "";
}

/** A function call's signature as the simulated model gives it: a change breaks it. */
/** Google's documented signature that makes Gemini 3 skip validating a function call's (one it did not make). */
const SKIP_SIGNATURE_VALIDATION = "skip_thought_signature_validator";

function callSignature(name: unknown, args: unknown): string {
  return sign(`${String(name)}\n${JSON.stringify(args ?? {})}`);
}

function usageMetadata(x: Exchange): Json {
  const c = counts(x);
  const candidates = c.completion - c.reasoning;
  const u: Json = { promptTokenCount: c.prompt, candidatesTokenCount: candidates, totalTokenCount: c.prompt + c.completion };
  if (x.cache.read > 0) u.cachedContentTokenCount = x.cache.read;
  if (c.reasoning > 0) u.thoughtsTokenCount = c.reasoning;
  return u;
}

export const geminiWire: Wire = {
  name: "gemini",
  reportsCacheWrites: false,
  implicitStep: 1,

  auth(req: IncomingMessage): Refusal | null {
    if (typeof req.headers["x-goog-api-key"] !== "string") return { status: 403, message: "Method doesn't allow unregistered callers. Please use an API key." };
    return null;
  },

  read(body, req): Normalized | Refusal {
    if (!isRecord(body)) return refuse("Invalid JSON payload received.");
    for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) return refuse(`Invalid JSON payload received. Unknown name "${key}": Cannot find field.`);
    if (!Array.isArray(body.contents) || body.contents.length === 0) return refuse("contents is not specified");
    const config = isRecord(body.generationConfig) ? body.generationConfig : {};
    const messages: unknown[] = [];
    const system = isRecord(body.systemInstruction) && Array.isArray(body.systemInstruction.parts) ? (body.systemInstruction.parts as Json[]) : [];
    if (system.length) messages.push({ role: "system", content: system.map(partText).join("\n") });
    const contents = body.contents as unknown[];
    const unpaired = geminiToolPairing(contents);
    if (unpaired) return refuse(unpaired);
    for (const [i, c] of contents.entries()) {
      if (!isRecord(c) || (c.role !== "user" && c.role !== "model") || !Array.isArray(c.parts))
        return refuse(`contents[${i}]: role must be "user" or "model", with parts`);
      const parts = c.parts as Json[];
      const made = parts.filter((p) => isRecord(p.functionCall));
      if (req.rules?.thinkingBoundToModel && c.role === "model" && made.length && made.every((p) => p.thoughtSignature === undefined))
        return refuse(
          `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly. Additional data, function call \`${String((made[0]!.functionCall as Json).name)}\`, position ${parts.indexOf(made[0]!) + 1}.`,
        );
      for (const p of parts)
        if (
          isRecord(p.functionCall) &&
          p.thoughtSignature !== undefined &&
          p.thoughtSignature !== callSignature(p.functionCall.name, p.functionCall.args) &&
          !(req.rules?.thinkingBoundToModel && p.thoughtSignature === SKIP_SIGNATURE_VALIDATION)
        )
          return refuse(`contents[${i}]: Corrupted thought signature.`);
      const calls = parts
        .filter((p) => isRecord(p.functionCall))
        .map((p) => ({ type: "function", function: { name: (p.functionCall as Json).name, arguments: JSON.stringify((p.functionCall as Json).args ?? {}) } }));
      const content = parts.map((p) => mediaPart(p) ?? { type: "text", text: partText(p) });
      messages.push({ role: c.role === "model" ? "assistant" : "user", content, ...(calls.length ? { tool_calls: calls } : {}) });
    }
    const declarations = Array.isArray(body.tools)
      ? (body.tools as Json[]).flatMap((t) => (Array.isArray(t.functionDeclarations) ? (t.functionDeclarations as Json[]) : []))
      : [];
    const thinking = isRecord(config.thinkingConfig) ? config.thinkingConfig : {};
    // Gemini 2.5 Pro and 3.x only work thinking.
    if (req.rules?.thinkingAlwaysOn && thinking.thinkingBudget === 0) return refuse("Budget 0 is invalid. This model only works in thinking mode.");
    const n = typeof config.candidateCount === "number" && config.candidateCount >= 1 ? config.candidateCount : 1;
    const maxOutput = typeof config.maxOutputTokens === "number" ? config.maxOutputTokens : undefined;
    return {
      model: req.model ?? "unknown",
      messages,
      tools: declarations.map((d) => ({ type: "function", function: { name: d.name, parameters: d.parameters } })),
      extraCounted: { toolConfig: body.toolConfig },
      stream: req.stream,
      includeUsage: true,
      answered: n,
      generated: n,
      maxTokens: () => maxOutput,
      reasoningBudget: undefined,
      // Gemini 2.5 thinks unless its budget is 0; its thoughts are returned only when asked for.
      thinks: thinking.thinkingBudget === 0 ? false : null,
      showsThinking: thinking.includeThoughts === true,
      breakpoints: [],
      // The system instruction leads the prompt Gemini's cache keys on.
      implicitPrefixes: boundaryPrefixes([
        ...(system.length ? [system.map(partText).join("\n")] : []),
        ...contents.map((c) => (isRecord(c) && Array.isArray(c.parts) ? (c.parts as Json[]).map(partText).join("\n") : "")),
      ]),
      // Text after the response is the user's next words, not the result's end.
      endsWithToolResult: (contents.at(-1) as Json).role === "user" && isRecord(((contents.at(-1) as Json).parts as Json[]).at(-1)?.functionResponse),
    };
  },

  errorBody(status, message) {
    return JSON.stringify({ error: { code: status, message, status: STATUS_NAMES[status] ?? (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT") } });
  },

  answerJson(x) {
    const candidates = x.plans.map((plan, index) => ({
      content: { role: "model", parts: parts(x, plan, index) },
      ...(x.directives.noFinish ? {} : { finishReason: FINISH[plan.finishReason] }),
      index,
    }));
    const response: Json = { candidates, modelVersion: x.model, responseId: x.id.slice(-22) };
    if (!x.directives.noUsage) response.usageMetadata = usageMetadata(x);
    return JSON.stringify(response);
  },

  streamEvents(x) {
    const events: StreamEvent[] = [];
    const responseId = x.id.slice(-22);
    const event = (index: number, ps: Json[], extra: Json = {}, token = false) =>
      plain({ candidates: [{ content: { role: "model", parts: ps }, index, ...extra }], modelVersion: x.model, responseId }, token);
    for (const [index, plan] of x.plans.entries()) {
      if (x.reasoningModel && x.showsThinking) for (const w of plan.reasoning) events.push(event(index, [{ text: w, thought: true }], {}, true));
      for (const w of plan.content) events.push(event(index, [{ text: w }], {}, true));
      if (plan.toolCall) events.push(event(index, [callPart(plan.toolCall)], {}, true));
      if (x.directives.malformed && index === 0) events.splice(Math.floor(events.length / 2), 0, this.malformedEvent(x));
      if (!x.directives.noFinish) events.push(event(index, [], { finishReason: FINISH[plan.finishReason] }));
    }
    // The running usage rides on the last event (Gemini repeats it on each; the last is the total).
    if (!x.directives.noUsage) {
      const last = events.at(-1);
      if (last) {
        const json = JSON.parse(last.text.slice(6)) as Json;
        events[events.length - 1] = plain({ ...json, usageMetadata: usageMetadata(x) }, last.token);
      }
    }
    return events;
  },

  malformedEvent() {
    return plain('{"candidates": [ not json');
  },
};

function callPart(call: { name: string; arguments: string[] }): Json {
  const args = JSON.parse(call.arguments.join("")) as unknown;
  return { functionCall: { name: call.name, args }, thoughtSignature: callSignature(call.name, args) };
}

function parts(x: Exchange, plan: Exchange["plans"][number], _index: number): Json[] {
  const out: Json[] = [];
  if (x.reasoningModel && x.showsThinking && plan.reasoning.length) out.push({ text: joined(plan.reasoning), thought: true });
  if (plan.content.length) out.push({ text: joined(plan.content) });
  if (plan.toolCall) out.push(callPart(plan.toolCall));
  return out;
}
