import { isObj, type Obj } from "../request-checks";

/**
 * What the response object repeats of the request, in the types the Responses API's schema gives them
 * (OpenAI's reference; openresponses' `ResponseResource`): the request's value, or OpenAI's default where
 * it gave none — never null where the schema wants a number or a string. `temperature` and `top_p`
 * default to 1, the penalties to 0; `service_tier` is the tier that served it (`default`: this router
 * offers no other, and OpenAI reports `auto` as the tier it resolved to); `reasoning` always has its
 * `effort` and `summary` (null when not asked for); `text` always has a `format`.
 */
export function echoedFields(e: Obj): Obj {
  return {
    instructions: typeof e.instructions === "string" ? e.instructions : null,
    max_output_tokens: typeof e.max_output_tokens === "number" ? e.max_output_tokens : null,
    parallel_tool_calls: typeof e.parallel_tool_calls === "boolean" ? e.parallel_tool_calls : true,
    prompt_cache_key: typeof e.prompt_cache_key === "string" ? e.prompt_cache_key : null,
    reasoning: echoedReasoning(e.reasoning),
    safety_identifier: typeof e.safety_identifier === "string" ? e.safety_identifier : null,
    service_tier: typeof e.service_tier === "string" && e.service_tier !== "auto" ? e.service_tier : "default",
    temperature: typeof e.temperature === "number" ? e.temperature : 1,
    text: echoedText(e.text),
    tool_choice: e.tool_choice ?? "auto",
    tools: Array.isArray(e.tools) ? e.tools.map(echoedTool) : [],
    top_p: typeof e.top_p === "number" ? e.top_p : 1,
    presence_penalty: typeof e.presence_penalty === "number" ? e.presence_penalty : 0,
    frequency_penalty: typeof e.frequency_penalty === "number" ? e.frequency_penalty : 0,
    user: typeof e.user === "string" ? e.user : null,
    metadata: isObj(e.metadata) ? e.metadata : {},
  };
}

function echoedReasoning(r: unknown): Obj {
  const given = isObj(r) ? r : {};
  return { effort: given.effort ?? null, summary: given.summary ?? given.generate_summary ?? null };
}

function echoedText(t: unknown): Obj {
  const given = isObj(t) ? t : {};
  return { ...given, format: isObj(given.format) ? given.format : { type: "text" } };
}

/**
 * A function tool as OpenAI echoes it: `description` and `parameters` present (null when not given) and
 * `strict` as applied (`strictApplied`). Other tools as they came.
 */
export function echoedTool(t: unknown): unknown {
  if (!isObj(t) || t.type !== "function") return t;
  return { ...t, description: t.description ?? null, parameters: t.parameters ?? null, strict: strictApplied(t) };
}

/**
 * Whether a function tool of a Responses request is strict. The Responses API's default is `strict: true`
 * (its reference: "Whether to enforce strict parameter validation. Default `true`."); as OpenAI does, a
 * tool that does not say is strict when its schema can be (`strictCapable`: every object closed with
 * `additionalProperties: false` and all its properties required), and not strict otherwise — rather than
 * refusing a schema the caller never asked to be strict.
 */
export function strictApplied(t: Obj): boolean {
  if (typeof t.strict === "boolean") return t.strict;
  return strictCapable(t.parameters ?? { type: "object", properties: {} });
}

/** Can this JSON schema be enforced strictly (Structured Outputs' rule: each object closed, every property required)? */
export function strictCapable(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(strictCapable);
  if (!isObj(schema)) return true;
  const props = isObj(schema.properties) ? schema.properties : null;
  if (schema.type === "object" || props) {
    if (schema.additionalProperties !== false) return false;
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    if (props && !Object.keys(props).every((k) => required.has(k))) return false;
  }
  for (const [k, v] of Object.entries(schema))
    if (k !== "required" && k !== "enum" && k !== "const" && typeof v === "object" && !strictCapable(v)) return false;
  return true;
}
