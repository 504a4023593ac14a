import * as z from "zod";

/**
 * Type checks for the standard chat parameters the router forwards to carriers, from the contract's
 * ChatRequest: their types, enums and the ranges its descriptions state. A wrong value is the caller's
 * 400 here, named, rather than a carrier's refusal later. Null is accepted wherever the contract allows
 * it; objects the contract leaves open stay open (unknown keys pass to the carrier as sent).
 */

const number = (min?: number, max?: number) => {
  let n = z.number();
  if (min !== undefined) n = n.min(min, `must be at least ${min}`);
  if (max !== undefined) n = n.max(max, `must be at most ${max}`);
  return n.nullable().optional();
};
const int = (min?: number, max?: number) => {
  let n = z.int();
  if (min !== undefined) n = n.min(min, `must be at least ${min}`);
  if (max !== undefined) n = n.max(max, `must be at most ${max}`);
  return n.nullable().optional();
};
const effort = z.enum(["max", "xhigh", "high", "medium", "low", "minimal", "none"]).nullable();

/** `type: "function"` tools are checked; the contract's server tools (other types) pass to the carrier. */
const tool = z.looseObject({ type: z.string({ error: "each tool needs a `type`" }) }).superRefine((t, ctx) => {
  if (t.type !== "function") return;
  const parsed = functionTool.safeParse(t);
  if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
});
const functionTool = z.looseObject({
  function: z.looseObject({
    name: z.string({ error: "a function tool needs `function.name`, a string" }).min(1).max(64, "at most 64 characters"),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const toolChoice = z.union(
  [
    z.enum(["none", "auto", "required"]),
    z
      .looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }).optional() })
      .refine((c) => c.type !== "function" || c.function !== undefined, "a `function` tool choice names `function.name`"),
  ],
  { error: 'must be "none", "auto", "required" or {type: "function", function: {name}}' },
);

const responseFormat = z.discriminatedUnion(
  "type",
  [
    z.looseObject({ type: z.literal("text") }),
    z.looseObject({ type: z.literal("json_object") }),
    z.looseObject({
      type: z.literal("json_schema"),
      json_schema: z.looseObject({ name: z.string(), schema: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullable().optional() }),
    }),
    z.looseObject({ type: z.literal("grammar"), grammar: z.string() }),
    z.looseObject({ type: z.literal("python") }),
  ],
  { error: "`type` must be text, json_object, json_schema, grammar or python" },
);

export const standardParametersShape = {
  temperature: number(0, 2),
  top_p: number(0, 1),
  top_k: int(),
  min_p: number(),
  top_a: number(),
  frequency_penalty: number(-2, 2),
  presence_penalty: number(-2, 2),
  repetition_penalty: number(),
  seed: int(),
  logit_bias: z.record(z.string(), z.number()).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: int(0, 20),
  stop: z
    .union([z.string(), z.array(z.string()).max(4, "at most 4 stop sequences")], { error: "must be a string or an array of at most 4 strings" })
    .nullable()
    .optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  response_format: responseFormat.nullable().optional(),
  tools: z.array(tool).nullable().optional(),
  tool_choice: toolChoice.nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  reasoning: z
    .looseObject({
      effort: effort.optional(),
      summary: z.enum(["auto", "concise", "detailed"]).nullable().optional(),
      max_tokens: z.int().min(0).nullable().optional(),
      exclude: z.boolean().optional(),
      enabled: z.boolean().optional(),
    })
    .optional(),
  reasoning_effort: effort.optional(),
  modalities: z.array(z.enum(["text", "image", "audio"])).optional(),
  metadata: z
    .record(z.string().max(64, "metadata keys are at most 64 characters"), z.string().max(512, "metadata values are at most 512 characters"))
    .refine((m) => Object.keys(m).length <= 16, "at most 16 metadata pairs")
    .optional(),
  prompt_cache_key: z.string().nullable().optional(),
  // OpenRouter's automatic prompt caching: on Anthropic carriers the request-level `cache_control` (the breakpoint
  // on the last cacheable block); carriers that cache by themselves need nothing.
  cache_control: z
    .object({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() })
    .strict()
    .optional(),
  service_tier: z.enum(["auto", "default", "fast", "flex", "priority", "scale"]).nullable().optional(),
  prediction: z
    .looseObject({ type: z.literal("content"), content: z.union([z.string(), z.array(z.unknown())]) })
    .nullable()
    .optional(),
  // Not in the contract, but forwarded and billed per choice (the hold multiplies by them).
  n: z.int().min(1, "must be at least 1").nullable().optional(),
  best_of: z.int().min(1, "must be at least 1").nullable().optional(),
};
