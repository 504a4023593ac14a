// What newer reasoning models changed on the wire, per upstream model, as the real carriers enforce it:
// thinking that cannot be turned off, forced tool use refused while thinking, signatures bound to the
// model that made them. From the catalog's endpoint fields (src/catalog/schema.ts) where catalog.json
// sets them, and for the models the carriers' own pages name, whichever catalog a test serves. Pure.

export interface ModelRules {
  /** Refuses `thinking: {type: "disabled"}`, a thinking budget, `reasoning_effort: "none"`, `thinkingBudget: 0`. */
  thinkingAlwaysOn: boolean;
  /** Refuses a forced tool choice (`any`, a named tool) while it thinks. */
  refusesForcedToolChoice: boolean;
  /** Verifies only the signatures this model made (Gemini 3: and requires one on a turn's function calls). */
  thinkingBoundToModel: boolean;
  /**
   * Takes function tools on Chat Completions only with `reasoning_effort: "none"`: tools with reasoning go to
   * the Responses API (OpenAI's GPT-6 family: "Using GPT-6" and its deployment checklist).
   */
  chatToolsOnlyWithoutReasoning?: boolean;
}

export const NO_RULES: ModelRules = { thinkingAlwaysOn: false, refusesForcedToolChoice: false, thinkingBoundToModel: false };

const NEWER_CLAUDE: ModelRules = { thinkingAlwaysOn: true, refusesForcedToolChoice: true, thinkingBoundToModel: true };

/** The models whose pages say so (Anthropic's "What's new in Claude Opus 5.5": the first three also on Fable 5.1; GPT-6 Astra and 6.1 Sol have no effort `none`). */
const PUBLISHED: Record<string, ModelRules> = {
  "claude-opus-5-5": NEWER_CLAUDE,
  "claude-fable-5-1": NEWER_CLAUDE,
  // Gemini 3: only works thinking; a turn's function calls need its own thought signature.
  "gemini-3-pro-preview": { ...NO_RULES, thinkingAlwaysOn: true, thinkingBoundToModel: true },
  "gemini-3.1-pro-preview": { ...NO_RULES, thinkingAlwaysOn: true, thinkingBoundToModel: true },
  "gpt-6-astra": { ...NO_RULES, thinkingAlwaysOn: true, chatToolsOnlyWithoutReasoning: true },
  "gpt-6.1-sol": { ...NO_RULES, thinkingAlwaysOn: true, chatToolsOnlyWithoutReasoning: true },
};

/** The catalog endpoint fields, as catalog.json spells them. */
export function rulesFromEndpoint(e: Record<string, unknown>): ModelRules | null {
  const rules: ModelRules = {
    thinkingAlwaysOn: e.thinking_always_on === true,
    refusesForcedToolChoice: e.refuses_forced_tool_choice === true,
    thinkingBoundToModel: e.thinking_bound_to_model === true,
  };
  return rules.thinkingAlwaysOn || rules.refusesForcedToolChoice || rules.thinkingBoundToModel ? rules : null;
}

/**
 * The rules a request for `model` meets: the catalog's for it, else the published ones, else none. Which
 * protocol takes its tools is the model's, not a catalog field: always the published rule.
 */
export function rulesOf(model: string, fromCatalog: ReadonlyMap<string, ModelRules>): ModelRules {
  const rules = fromCatalog.get(model) ?? PUBLISHED[model] ?? NO_RULES;
  const chatTools = PUBLISHED[model]?.chatToolsOnlyWithoutReasoning;
  return chatTools ? { ...rules, chatToolsOnlyWithoutReasoning: chatTools } : rules;
}
