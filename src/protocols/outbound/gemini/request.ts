import type { PricedEndpoint } from "../../../catalog/catalog";
import type { ChatRequest } from "../../../request/chat-request";
import { Untranslatable } from "../../../request/errors";
import { reasoningAsk, thinkingBudget } from "../../../request/reasoning";
import { reasoningOffRefused, relaxesToolChoice } from "../thinking-rules";

type Obj = Record<string, unknown>;
type Part = Obj;
type Content = { role: "user" | "model"; parts: Part[] };

/** Chat fields Gemini's API has no place for: left out (named in the routing metadata). */
export const NOT_TAKEN = ["logprobs", "top_logprobs", "logit_bias", "best_of", "parallel_tool_calls", "user"] as const;

/** The `reasoning_details` format of Gemini's thought signatures. */
export const GEMINI_REASONING_FORMAT = "google-gemini-v1";
/** Gemini's least thinking budget where thinking can be set (2.5 Flash takes 0 to turn it off; Pro at least 128). */
const MIN_THINKING_BUDGET = 128;

/**
 * The chat request as a Gemini `generateContent` body: system and developer messages →
 * `systemInstruction`; the rest → `contents` of `user`/`model` turns (same-role turns merged) with parts:
 * text, `inlineData` (data URLs), `fileData` (http URLs), `functionCall` (assistant tool calls, with the
 * thought signature the carrier gave them, byte for byte), `functionResponse` (tool messages, named from
 * the tool call they answer); `generationConfig` (caps, sampling, stops, `candidateCount`, JSON output,
 * `thinkingConfig`); tools → `functionDeclarations`; `tool_choice` → `functionCallingConfig`.
 */
export function geminiBody(body: ChatRequest, endpoint: PricedEndpoint): Obj {
  const messages = body.messages as Obj[];
  const names = toolNames(messages);
  const system: Part[] = [];
  const contents: Content[] = [];
  const push = (role: Content["role"], parts: Part[]) => {
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of messages) {
    switch (m.role) {
      case "system":
      case "developer":
        system.push(...textParts(m.content, String(m.role)));
        break;
      case "user":
        push("user", contentParts(m.content));
        break;
      case "assistant":
        push("model", modelParts(m, endpoint));
        break;
      case "tool":
        push("user", [functionResponse(m, names)]);
        break;
      default:
        throw new Untranslatable(`A message with role ${JSON.stringify(m.role)} has no equivalent in Gemini's API.`);
    }
  }
  for (const c of contents) if (c.parts.length === 0) c.parts.push({ text: "" });
  const out: Obj = { contents };
  if (system.length) out.systemInstruction = { parts: system };
  const config = generationConfig(body, endpoint);
  if (Object.keys(config).length) out.generationConfig = config;
  if (Array.isArray(body.tools) && body.tools.length) out.tools = [{ functionDeclarations: body.tools.map(declaration) }];
  const toolConfig = functionCalling(relaxesToolChoice(body, endpoint) ? "auto" : body.tool_choice);
  if (toolConfig) out.toolConfig = { functionCallingConfig: toolConfig };
  return out;
}

function generationConfig(body: ChatRequest, endpoint: PricedEndpoint): Obj {
  const b = body as Obj;
  const config: Obj = {};
  const cap = body.max_completion_tokens ?? body.max_tokens ?? null;
  if (cap !== null) config.maxOutputTokens = cap;
  for (const [from, to] of [
    ["temperature", "temperature"],
    ["top_p", "topP"],
    ["top_k", "topK"],
    ["seed", "seed"],
    ["presence_penalty", "presencePenalty"],
    ["frequency_penalty", "frequencyPenalty"],
  ] as const)
    if (typeof b[from] === "number") config[to] = b[from];
  if (typeof b.n === "number" && b.n > 1) config.candidateCount = b.n;
  const stop = body.stop;
  if (typeof stop === "string") config.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length) config.stopSequences = stop;
  const format = body.response_format as Obj | null | undefined;
  if (format?.type === "json_object") config.responseMimeType = "application/json";
  else if (format?.type === "json_schema") {
    config.responseMimeType = "application/json";
    const schema = (format.json_schema as Obj | undefined)?.schema;
    if (schema !== undefined) config.responseJsonSchema = schema;
  }
  const ask = reasoningAsk(body);
  if (ask !== null)
    config.thinkingConfig = !ask.on
      ? // A model that only works thinking (Gemini 2.5 Pro, 3.x: `thinking_always_on`) refuses budget 0: its least budget.
        reasoningOffRefused(body, endpoint)
        ? { thinkingBudget: MIN_THINKING_BUDGET, includeThoughts: false }
        : { thinkingBudget: 0 }
      : {
          // Without an effort or a budget, Gemini's own dynamic budget (-1).
          thinkingBudget: ask.budget ?? (ask.effort ? thinkingBudget(ask, cap ?? endpoint.max_completion_tokens ?? 8192, MIN_THINKING_BUDGET) : -1),
          includeThoughts: !ask.exclude,
        };
  return config;
}

/** Tool call id → function name, from the assistant turns (a functionResponse must name its function). */
function toolNames(messages: Obj[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages)
    if (m.role === "assistant" && Array.isArray(m.tool_calls))
      for (const call of m.tool_calls as Obj[]) {
        const fn = (call.function ?? {}) as Obj;
        if (typeof call.id === "string" && typeof fn.name === "string") names.set(call.id, fn.name);
      }
  return names;
}

function textParts(content: unknown, role: string): Part[] {
  if (typeof content === "string") return content === "" ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  return (content as Obj[]).map((p) => {
    if (p.type !== "text") throw new Untranslatable(`A ${role} message may carry only text parts on Gemini (found ${String(p.type)}).`);
    return { text: p.text };
  });
}

function contentParts(content: unknown): Part[] {
  if (typeof content === "string") return [{ text: content }];
  if (!Array.isArray(content)) return [];
  return (content as Obj[]).map(part);
}

function part(p: Obj): Part {
  switch (p.type) {
    case "text":
      return { text: p.text };
    case "image_url": {
      const image = p.image_url as Obj | string | undefined;
      return media(typeof image === "string" ? image : typeof image?.url === "string" ? image.url : "", "image/jpeg");
    }
    case "file": {
      const file = (p.file ?? {}) as Obj;
      return media(typeof file.file_data === "string" ? file.file_data : "", "application/pdf");
    }
    case "input_audio": {
      const audio = (p.input_audio ?? {}) as Obj;
      return { inlineData: { mimeType: `audio/${String(audio.format ?? "wav")}`, data: audio.data } };
    }
    case "video_url": {
      const video = p.video_url as Obj | string | undefined;
      return media(typeof video === "string" ? video : typeof video?.url === "string" ? video.url : "", "video/mp4");
    }
    default:
      throw new Untranslatable(`Gemini carriers do not take ${String(p.type)} parts.`);
  }
}

const EXTENSION_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  pdf: "application/pdf",
  mp4: "video/mp4",
  mp3: "audio/mp3",
  wav: "audio/wav",
};

/** A data URL as inline data; an http(s) URL as file data, its type from the extension. */
function media(url: string, fallbackType: string): Part {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { inlineData: { mimeType: data[1], data: data[2] } };
  if (/^https?:\/\//.test(url)) {
    const ext = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase() ?? "";
    return { fileData: { mimeType: EXTENSION_TYPES[ext] ?? fallbackType, fileUri: url } };
  }
  throw new Untranslatable("A media part needs a data: URL (base64) or an http(s) URL on Gemini.");
}

/** Google's documented thought signature for a function call the model did not make (Gemini 3 then skips validating it). */
export const SKIP_SIGNATURE_VALIDATION = "skip_thought_signature_validator";

function modelParts(m: Obj, endpoint: PricedEndpoint): Part[] {
  const parts: Part[] = [];
  const signatures = new Map<string | null, string>();
  if (Array.isArray(m.reasoning_details))
    for (const d of m.reasoning_details as Obj[])
      if (d.type === "reasoning.encrypted" && d.format === GEMINI_REASONING_FORMAT && typeof d.data === "string")
        signatures.set(typeof d.id === "string" ? d.id : null, d.data);
  if (typeof m.content === "string") {
    if (m.content !== "") parts.push({ text: m.content });
  } else if (Array.isArray(m.content)) parts.push(...contentParts(m.content));
  if (Array.isArray(m.tool_calls))
    for (const call of m.tool_calls as Obj[]) {
      const fn = (call.function ?? {}) as Obj;
      const p: Part = { functionCall: { name: fn.name, args: args(fn.arguments, fn.name) } };
      const signature = typeof call.id === "string" ? signatures.get(call.id) : undefined;
      if (signature !== undefined) p.thoughtSignature = signature;
      parts.push(p);
    }
  // A signature not tied to a tool call goes back on the turn's first part, as Gemini gave it.
  const loose = signatures.get(null);
  if (loose !== undefined && parts.length && parts[0]!.thoughtSignature === undefined) parts[0]!.thoughtSignature = loose;
  // Gemini 3 requires a signature on a turn's function calls (a 400 without one), and its signatures are its
  // own: calls another carrier or model made (a fallback mid tool loop) carry Google's documented sentinel.
  const calls = parts.filter((p) => p.functionCall !== undefined);
  if (endpoint.thinking_bound_to_model && calls.length && calls.every((p) => p.thoughtSignature === undefined))
    calls[0]!.thoughtSignature = SKIP_SIGNATURE_VALIDATION;
  return parts;
}

function args(text: unknown, name: unknown): unknown {
  if (text === undefined || text === "") return {};
  if (typeof text !== "string") return text;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
  } catch {
    // refused below
  }
  throw new Untranslatable(`The arguments of tool call ${JSON.stringify(name)} are not a JSON object, which Gemini requires of a functionCall.`);
}

function functionResponse(m: Obj, names: Map<string, string>): Part {
  const id = typeof m.tool_call_id === "string" ? m.tool_call_id : "";
  const name = names.get(id);
  if (name === undefined)
    throw new Untranslatable(
      `The tool message for ${JSON.stringify(id)} answers no tool call of an earlier assistant message; Gemini needs the function's name.`,
    );
  const text =
    typeof m.content === "string"
      ? m.content
      : Array.isArray(m.content)
        ? (m.content as Obj[]).map((p) => (typeof p.text === "string" ? p.text : "")).join("")
        : "";
  let response: unknown = { content: text };
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) response = parsed;
  } catch {
    // plain text: { content }
  }
  return { functionResponse: { name, response } };
}

function declaration(t: unknown): Obj {
  if ((t as Obj).type !== "function") throw new Untranslatable(`Gemini carriers take only function tools here (found ${String((t as Obj).type)}).`);
  const fn = ((t as Obj).function ?? {}) as Obj;
  const out: Obj = { name: fn.name };
  if (typeof fn.description === "string") out.description = fn.description;
  if (fn.parameters !== undefined) out.parameters = fn.parameters;
  return out;
}

function functionCalling(choice: unknown): Obj | null {
  if (choice === "auto") return { mode: "AUTO" };
  if (choice === "none") return { mode: "NONE" };
  if (choice === "required") return { mode: "ANY" };
  if (typeof choice === "object" && choice !== null) {
    const fn = (choice as Obj).function as Obj | undefined;
    if (typeof fn?.name === "string") return { mode: "ANY", allowedFunctionNames: [fn.name] };
  }
  return null;
}
