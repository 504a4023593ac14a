import { describe, it, expect } from "vitest";
import { applyPreset } from "../../src/presets/apply-preset";
import type { ChatRequest } from "../../src/request/chat-request";
import type { PresetContent } from "../../src/presets/preset-config";

// The merge a preset makes (pure): the preset fills what the request leaves unset; what the request sets wins.
const USER = { role: "user", content: "hi" };
const req = (over: Partial<ChatRequest> = {}): ChatRequest => ({ model: "@preset/p", messages: [USER], ...over }) as ChatRequest;
const preset = (config: PresetContent["config"], systemPrompt: string | null = null): PresetContent => ({ config, systemPrompt });

describe("applyPreset", () => {
  it("fills the model, models, parameters and system prompt the request leaves unset", () => {
    const out = applyPreset(req(), preset({ model: "a/b", models: ["c/d"], temperature: 0.2, max_tokens: 9, reasoning: { effort: "low" } }, "Sys."));
    expect(out).toEqual({
      model: "a/b",
      models: ["c/d"],
      temperature: 0.2,
      max_tokens: 9,
      reasoning: { effort: "low" },
      messages: [{ role: "system", content: "Sys." }, USER],
    });
  });

  it("a preset without a model leaves none: the request's models, or the default model, serve", () => {
    expect(applyPreset(req({ models: ["x/y"] }), preset({ temperature: 1 }))).toEqual({ models: ["x/y"], temperature: 1, messages: [USER] });
  });

  it("the request's own fields win, field by field in `provider`", () => {
    const out = applyPreset(
      req({ models: ["r/1"], temperature: 0.9, provider: { only: ["groq"] } }),
      preset({ model: "a/b", models: ["p/1"], temperature: 0.1, top_p: 0.5, provider: { only: ["groq", "cerebras"], allow_fallbacks: false } }),
    );
    expect(out).toMatchObject({ model: "a/b", models: ["r/1"], temperature: 0.9, top_p: 0.5, provider: { only: ["groq"], allow_fallbacks: false } });
  });

  it("the completion cap: the preset's only when the request sets neither max_tokens nor max_completion_tokens", () => {
    expect(applyPreset(req({ max_completion_tokens: 5 }), preset({ max_tokens: 9 }))).not.toHaveProperty("max_tokens");
    expect(applyPreset(req({ max_tokens: 5 }), preset({ max_tokens: 9 })).max_tokens).toBe(5);
    expect(applyPreset(req(), preset({ max_tokens: 9 })).max_tokens).toBe(9);
  });

  it("reasoning and reasoning_effort count as one: a request setting either keeps both of the preset's out", () => {
    const both = preset({ reasoning: { effort: "high" }, reasoning_effort: "high" });
    expect(applyPreset(req({ reasoning_effort: "low" }), both)).toMatchObject({ reasoning_effort: "low" });
    expect(applyPreset(req({ reasoning_effort: "low" }), both)).not.toHaveProperty("reasoning");
    expect(applyPreset(req({ reasoning: { enabled: false } }), both)).not.toHaveProperty("reasoning_effort");
  });

  it("the system prompt goes first only when the request has no system or developer message", () => {
    const sys = preset({}, "Preset.");
    for (const role of ["system", "developer"]) {
      const messages = [{ role, content: "Mine." }, USER];
      expect(applyPreset(req({ messages }), sys).messages).toEqual(messages);
    }
    expect(applyPreset(req(), preset({}, null)).messages).toEqual([USER]);
  });

  it("leaves the request's object as it was", () => {
    const body = req({ provider: { sort: "price" } });
    const copy = structuredClone(body);
    applyPreset(body, preset({ model: "a/b", temperature: 0.3, provider: { only: ["groq"] } }, "Sys."));
    expect(body).toEqual(copy);
  });
});
