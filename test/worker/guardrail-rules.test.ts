import { describe, it, expect } from "vitest";
import { allowed, allowedEndpoints, modelMatches, refusedMessage, zdrAuthor, type GuardrailRules, type RuledEndpoint } from "../../src/guardrails/rules";
import { NO_RULES } from "../../src/keys/guardrail-store";

// The rules of a guardrail, pure: which endpoint each one lets through, and what a refusal says.
const NONE: GuardrailRules = { ...NO_RULES, id: "g1", name: "rail" };
const CLEAN = { retains_prompts: false, trains_on_prompts: false, zdr: true };
const RETAINS = { retains_prompts: true, trains_on_prompts: false, zdr: false };
const endpoint = (
  modelId: string,
  provider: string,
  p?: typeof CLEAN,
  inputNano = 100,
  outputNano = 200,
  longContext: RuledEndpoint["longContext"] = null,
): RuledEndpoint => ({
  modelId,
  provider,
  inputNano,
  outputNano,
  longContext,
  providerEntry: { data_policy: p },
});
const LLAMA_GROQ = endpoint("meta-llama/llama-3.1-8b-instruct", "groq", CLEAN);
const SONNET = endpoint("anthropic/claude-sonnet-4.5", "anthropic", RETAINS, 3000, 15000);

describe("guardrail rules", () => {
  it.each([
    ["anthropic/*", "anthropic/claude-sonnet-4.5", true],
    ["anthropic/*", "anthropic-x/model", false],
    ["*/llama-*", "meta-llama/llama-3.1-8b-instruct", true],
    ["meta-llama/llama-3.1-8b-instruct", "meta-llama/llama-3.1-8b-instruct", true],
    ["meta-llama/llama-3.1-8b", "meta-llama/llama-3.1-8b-instruct", false],
    ["openai/gpt-5.", "openai/gpt-5x", false], // a dot is a dot, not any character
    ["*", "any/model", true],
    ["a*a", "a", false], // the two pieces may not overlap
    ["a*a", "aa", true],
    ["*-instruct", "meta-llama/llama-3.1-8b-instruct", true],
    ["meta-*-8b-*", "meta-llama/llama-3.1-8b-instruct", true],
    ["meta-*-70b-*", "meta-llama/llama-3.1-8b-instruct", false],
    ["*free*", "openai/gpt-oss-20b:free", true],
  ])("pattern %s matches %s: %s", (pattern, id, expected) => {
    expect(modelMatches(pattern, id)).toBe(expected);
  });

  it.each([
    ["anthropic/claude-sonnet-4.5", "anthropic"],
    ["openai/gpt-5", "openai"],
    ["google/gemma-3-27b-it", "google"],
    ["x-ai/grok-4", "xai"],
    ["meta-llama/llama-3.1-8b-instruct", "other"],
  ])("the ZDR flag of %s is %s's", (id, author) => {
    expect(zdrAuthor(id)).toBe(author);
  });

  const cases: Array<[string, Partial<GuardrailRules>, RuledEndpoint, string | null]> = [
    ["no rule allows", {}, SONNET, null],
    ["allowed_models refuses another model", { allowedModels: ["anthropic/*"] }, LLAMA_GROQ, "allowed_models"],
    ["allowed_models allows a match", { allowedModels: ["anthropic/*"] }, SONNET, null],
    ["ignored_models refuses a match", { ignoredModels: ["meta-llama/*"] }, LLAMA_GROQ, "ignored_models"],
    ["allowed_providers refuses another carrier", { allowedProviders: ["groq"] }, SONNET, "allowed_providers"],
    ["allowed_providers allows its carrier", { allowedProviders: ["groq"] }, LLAMA_GROQ, null],
    ["ignored_providers refuses its carrier", { ignoredProviders: ["groq"] }, LLAMA_GROQ, "ignored_providers"],
    ["ZDR refuses a carrier that retains", { zdrAnthropic: true }, SONNET, "enforce_zdr_anthropic"],
    ["ZDR refuses a carrier with no declared policy", { zdrOther: true }, endpoint("meta-llama/x", "unknown"), "enforce_zdr_other"],
    ["ZDR of another author does not apply", { zdrOpenai: true }, SONNET, null],
    ["ZDR allows a clean carrier", { zdrOther: true }, LLAMA_GROQ, null],
    ["max prompt price refuses above", { maxPromptNano: 2999 }, SONNET, "max_price.prompt"],
    ["max prompt price allows at the cap", { maxPromptNano: 3000 }, SONNET, null],
    ["max completion price refuses above", { maxCompletionNano: 14999 }, SONNET, "max_price.completion"],
    [
      "the long-prompt tier's price counts",
      { maxPromptNano: 1500 },
      endpoint("google/gemini-2.5-pro", "g", CLEAN, 1250, 10000, {
        above: 200_000,
        inputNano: 2500,
        outputNano: 15000,
        cacheReadNano: 0,
        cacheWriteNano: 0,
        cacheWrite1hNano: 0,
      }),
      "max_price.prompt",
    ],
  ];
  it.each(cases)("%s", (_, rule, e, refusedBy) => {
    expect(allowed(e, [{ ...NONE, ...rule }])?.rule ?? null).toBe(refusedBy);
  });

  it("a key's guardrails must all allow: the first that refuses is named", () => {
    const a = { ...NONE, id: "a", name: "A", allowedProviders: ["groq", "anthropic"] };
    const b = { ...NONE, id: "b", name: "B", allowedModels: ["meta-llama/*"] };
    expect(allowed(LLAMA_GROQ, [a, b])).toBeNull();
    expect(allowed(SONNET, [a, b])).toMatchObject({ guardrail: { id: "b", name: "B" }, rule: "allowed_models" });
    expect(allowedEndpoints([SONNET, LLAMA_GROQ], [a, b])).toEqual([LLAMA_GROQ]);
    expect(allowedEndpoints([SONNET, LLAMA_GROQ], [])).toEqual([SONNET, LLAMA_GROQ]);
  });

  it("the refusal message names each guardrail and rule once", () => {
    const g = { ...NONE, id: "g-id", name: "Prod", allowedProviders: ["groq"] };
    const refusal = allowed(SONNET, [g])!;
    const message = refusedMessage([refusal, refusal]);
    expect(message).toBe(
      `This key's guardrails forbid this request: guardrail "Prod" (g-id), rule allowed_providers: carrier anthropic is not among its allowed providers (groq). GET /api/v1/models/user lists what this key may use.`,
    );
  });
});
