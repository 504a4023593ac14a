import { describe, it, expect } from "vitest";
import { modelShortcut, withShortcutSort } from "../../src/routing/model-shortcuts.ts";

const catalog = new Set(["meta-llama/llama-3.1-8b-instruct", "openai/gpt-oss-20b:free", "acme/odd:nitro"]);
const inCatalog = (id: string) => catalog.has(id);

describe("model shortcuts :nitro and :floor", () => {
  it.each([
    ["meta-llama/llama-3.1-8b-instruct", { modelId: "meta-llama/llama-3.1-8b-instruct" }],
    ["meta-llama/llama-3.1-8b-instruct:floor", { modelId: "meta-llama/llama-3.1-8b-instruct", sort: "price" }],
    ["meta-llama/llama-3.1-8b-instruct:nitro", { modelId: "meta-llama/llama-3.1-8b-instruct", sort: "throughput" }],
    ["openai/gpt-oss-20b:free:floor", { modelId: "openai/gpt-oss-20b:free", sort: "price" }],
    ["acme/odd:nitro", { modelId: "acme/odd:nitro" }], // a model really named so is not a shortcut
    ["nobody/nothing:floor", { modelId: "nobody/nothing", sort: "price" }], // then not in the catalog: 400 as any unknown model
    [":floor", { modelId: "", sort: "price" }],
    [undefined, { modelId: undefined }],
  ] as const)("%s → %o", (requested, expected) => {
    expect(modelShortcut(requested, inCatalog)).toEqual(expected);
  });

  it.each([
    [undefined, "price", { sort: "price" }],
    [null, "throughput", { sort: "throughput" }],
    [{ only: ["groq"] }, "price", { only: ["groq"], sort: "price" }],
    [{ sort: "latency" }, "price", { sort: "latency" }], // the caller's own sort wins
    [{ only: ["groq"] }, undefined, { only: ["groq"] }],
    [undefined, undefined, undefined],
  ] as const)("preferences %o with shortcut sort %s → %o", (prefs, sort, expected) => {
    expect(withShortcutSort(prefs as never, sort)).toEqual(expected);
  });
});
