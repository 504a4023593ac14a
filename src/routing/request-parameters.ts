/**
 * The request fields `require_parameters` checks: the contract's sampling and tool parameters (the
 * names models list in `supported_parameters`). Router fields (model, messages, stream, provider, …)
 * are not parameters. `max_completion_tokens` counts as `max_tokens`; a `json_schema` response format
 * also needs `structured_outputs`.
 */
const PARAMETERS = [
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "top_a",
  "frequency_penalty",
  "presence_penalty",
  "repetition_penalty",
  "max_tokens",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "seed",
  "response_format",
  "structured_outputs",
  "stop",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "include_reasoning",
  "reasoning",
  "reasoning_effort",
  "web_search_options",
  "verbosity",
] as const;

/** The parameter names a request body sets (null and absent fields are not sent). */
export function requestParameters(body: Record<string, unknown>): string[] {
  const set = new Set<string>();
  for (const p of PARAMETERS) if (body[p] != null) set.add(p);
  if (body.max_completion_tokens != null) set.add("max_tokens");
  const format = body.response_format as { type?: unknown } | null | undefined;
  if (format && typeof format === "object" && format.type === "json_schema") set.add("structured_outputs");
  return [...set];
}
