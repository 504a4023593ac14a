import { describe, it, expect } from "vitest";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { candidateModels } from "../../src/routing/candidate-models";

// Aliases (pure): a provider's native id resolves to the catalog model that declares it, is answered and
// recorded as the catalog id, and a catalog whose aliases collide is refused when it is loaded.
const catalog = Catalog.parse(catalogJson);
const lookup = { has: (id: string) => catalog.model(id) !== undefined, resolve: (id: string | undefined) => catalog.resolve(id)?.id };
const pick = (model: string | undefined, models?: string[]) => candidateModels(model, models, lookup, "router/auto");

describe("aliases", () => {
  it.each([
    ["claude-opus-5-5", "anthropic/claude-opus-5.5"],
    ["claude-haiku-4-5-20251001", "anthropic/claude-haiku-4.5"],
    ["claude-haiku-4-5", "anthropic/claude-haiku-4.5"],
    ["gpt-6.1-sol", "openai/gpt-6.1-sol"],
    ["gpt-6.1-sol-2026-09-29", "openai/gpt-6.1-sol"],
    ["text-embedding-3-small", "openai/text-embedding-3-small"],
  ])("%s resolves to %s, and is answered as it", (alias, id) => {
    expect(catalog.resolve(alias)?.id).toBe(id);
    expect(catalog.model(alias)).toBeUndefined(); // an alias is not an id: /models/{id}/endpoints and `has` know ids only
    expect(pick(alias)).toEqual({ candidates: [{ modelId: id, answerAs: id }], strategy: "direct" });
  });

  it("a shortcut on an alias keeps its sort and its suffix on the catalog id", () => {
    expect(pick("claude-haiku-4-5:floor")).toEqual({
      candidates: [{ modelId: "anthropic/claude-haiku-4.5", answerAs: "anthropic/claude-haiku-4.5:floor", sort: "price" }],
      strategy: "direct",
    });
  });

  it("an alias and its model's id in one fallback list are one candidate; ids as sent stay as sent", () => {
    expect(pick("claude-opus-5-5", ["anthropic/claude-opus-5.5", "openai/gpt-5"])).toEqual({
      candidates: [
        { modelId: "anthropic/claude-opus-5.5", answerAs: "anthropic/claude-opus-5.5" },
        { modelId: "openai/gpt-5", answerAs: "openai/gpt-5" },
      ],
      strategy: "fallback",
    });
    expect(pick("router/auto")).toEqual({ candidates: [{ modelId: catalogJson.default_model, answerAs: "router/auto" }], strategy: "auto" });
  });

  it("an unknown name is still unknown, in `model` or in `models`", () => {
    expect(pick("claude-opus-9-9")).toEqual({ unknown: "claude-opus-9-9" });
    expect(pick("claude-opus-5-5", ["gpt-7"])).toEqual({ unknown: "gpt-7" });
  });

  it.each([
    ["another model's id", "openai/gpt-5-mini", /alias openai\/gpt-5-mini is already the model openai\/gpt-5-mini/],
    ["another model's alias", "claude-haiku-4-5", /alias claude-haiku-4-5 is already an alias of anthropic\/claude-haiku-4.5/],
    ["the router's auto model", "router/auto", /alias router\/auto is already the router's auto model/],
  ])("a catalog where an alias is %s is refused when loaded", (_name, alias, message) => {
    const file = structuredClone(catalogJson) as { models: Array<{ id: string; aliases?: string[] }> };
    file.models.find((m) => m.id === "openai/gpt-5")!.aliases = ["gpt-5", alias];
    expect(() => Catalog.parse(file)).toThrow(message);
  });
});
