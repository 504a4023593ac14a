import * as z from "zod";

/** Most models accepted in `models` (400 above it): a fallback chain, not a catalog search. */
export const MAX_FALLBACK_MODELS = 8;
/** Longest `user` and `session_id` accepted (the contract's maxLength for session_id; the same for user). */
export const MAX_ID_CHARS = 256;

const plugin = z.looseObject({ id: z.string().min(1, "a plugin needs an `id`"), enabled: z.boolean().optional() });

/**
 * Type checks for the router's request fields (src/routing/router-fields.ts), shapes from the contract's
 * ChatRequest. `provider` is left to its own schema (src/routing/provider-preferences.ts, built separately).
 */
export const routerFieldsShape = {
  models: z
    .array(z.string().min(1, "model ids must be non-empty strings").max(256))
    .min(1, "`models` must list at least one model")
    .max(MAX_FALLBACK_MODELS, `at most ${MAX_FALLBACK_MODELS} models are accepted`)
    .optional(),
  route: z.enum(["fallback", "sort"]).nullable().optional(),
  anthropic_beta: z.array(z.string().min(1).max(100)).max(32, "at most 32 beta flags").optional(),
  session_id: z.string().max(MAX_ID_CHARS, `at most ${MAX_ID_CHARS} characters`).optional(),
  user: z.string().max(MAX_ID_CHARS, `at most ${MAX_ID_CHARS} characters`).optional(),
  usage: z.object({ include: z.boolean().optional() }).optional(),
  transforms: z.array(z.string()).optional(),
  trace: z
    .looseObject({
      trace_id: z.string().optional(),
      trace_name: z.string().optional(),
      span_name: z.string().optional(),
      generation_name: z.string().optional(),
      parent_span_id: z.string().optional(),
    })
    .optional(),
  debug: z.object({ echo_upstream_body: z.boolean().optional() }).optional(),
  stop_server_tools_when: z
    .array(z.looseObject({ type: z.string() }))
    .min(1)
    .optional(),
  // Refused rather than ignored: the caller would get answers without the search, moderation or healing
  // it asked for, and could not tell. An explicitly disabled plugin changes nothing and is accepted.
  plugins: z
    .array(plugin)
    .superRefine((plugins, ctx) => {
      const i = plugins.findIndex((p) => p.enabled !== false);
      if (i >= 0)
        ctx.addIssue({
          code: "custom",
          path: [i],
          message: `plugins are not available on this router yet: \`${plugins[i]!.id}\` would not run. Leave it out, or set \`enabled: false\`.`,
        });
    })
    .optional(),
  // Refused: a preset is named as the model here (docs/teams.md#presets); ignoring the field would serve a different model or prompt than the preset names.
  preset: z.never({ error: 'name a preset as the model instead: `"model": "@preset/<slug>"` (or `@preset/<slug>@<version>`).' }).optional(),
};
