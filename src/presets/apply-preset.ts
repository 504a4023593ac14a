import type { ChatRequest } from "../request/chat-request";
import { PRESET_PARAMETERS, type PresetContent } from "./preset-config";

/**
 * A request with a preset version applied (docs/teams.md#presets, "Precedence"): the preset fills what
 * the request leaves unset, and whatever the request sets itself wins.
 * - `model`: the preset's (the request's was `@preset/…`); none, and the request's `models` or the default model serve.
 * - `models`: the request's when it sends them, else the preset's.
 * - `provider`: merged field by field, the request's fields winning.
 * - parameters: each the preset's only where the request has none; the completion cap only when the request
 *   sets neither `max_tokens` nor `max_completion_tokens`; `reasoning` and `reasoning_effort` as one
 *   (a request setting either keeps the preset's out).
 * - the system prompt: the first message, unless the request has a system (or developer) message of its own.
 * Pure; the request's object is left as it was.
 */
export function applyPreset(body: ChatRequest, { config, systemPrompt }: PresetContent): ChatRequest {
  const out: Record<string, unknown> = { ...body };
  delete out.model;
  if (config.model !== undefined) out.model = config.model;
  if (body.models === undefined && config.models !== undefined) out.models = config.models;
  if (config.provider) out.provider = { ...config.provider, ...definedFields(body.provider ?? {}) };
  const reasoningSet = body.reasoning !== undefined || body.reasoning_effort !== undefined;
  for (const name of PRESET_PARAMETERS) {
    const value = config[name];
    if (value === undefined || body[name] !== undefined) continue;
    if (name === "max_tokens" && body.max_completion_tokens != null) continue;
    if ((name === "reasoning" || name === "reasoning_effort") && reasoningSet) continue;
    out[name] = value;
  }
  if (systemPrompt && !body.messages.some((m) => m.role === "system" || m.role === "developer"))
    out.messages = [{ role: "system", content: systemPrompt }, ...body.messages];
  return out as ChatRequest;
}

function definedFields(o: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
