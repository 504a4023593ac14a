import type { EmbeddingsCarrier } from "./carrier-protocol";
import { Untranslatable } from "../../request/errors";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether every value is a finite number: a vector we can pass on. */
const isVector = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number" && Number.isFinite(x));

/**
 * OpenAI's embeddings (`POST {base}/embeddings`), which OpenAI-compatible carriers share: `input` as
 * strings or token arrays, `dimensions`, `user` (hashed); `input_type` has no equivalent (the carrier is
 * skipped). Answers `data[].embedding` by `index`, and `usage.prompt_tokens`.
 */
export const openAiEmbeddings: EmbeddingsCarrier = {
  url(base) {
    return `${base.replace(/\/$/, "")}/embeddings`;
  },

  body(req, endpoint, userHash) {
    if (req.input_type !== undefined) throw new Untranslatable("OpenAI's embeddings take no input_type");
    const body: Obj = {
      model: endpoint.upstream_model,
      input: req.inputs.length === 1 ? req.inputs[0] : req.inputs,
      encoding_format: "float",
    };
    if (req.dimensions !== undefined) body.dimensions = req.dimensions;
    if (userHash !== null) body.user = userHash;
    return JSON.stringify(body);
  },

  answer(json, inputs) {
    if (!isObj(json) || !Array.isArray(json.data)) return { unusable: "the carrier's embeddings answer has no data" };
    const vectors: number[][] = new Array<number[]>(inputs);
    for (const item of json.data as unknown[]) {
      if (!isObj(item) || typeof item.index !== "number" || item.index < 0 || item.index >= inputs || !isVector(item.embedding))
        return { unusable: "the carrier's embeddings answer has a malformed item" };
      vectors[item.index] = item.embedding;
    }
    if (vectors.some((v) => v === undefined) || vectors.length !== inputs)
      return { unusable: `the carrier answered ${json.data.length} embeddings for ${inputs} inputs` };
    const usage = isObj(json.usage) ? json.usage : {};
    const prompt = usage.prompt_tokens;
    return { vectors, promptTokens: typeof prompt === "number" && Number.isSafeInteger(prompt) && prompt >= 0 ? prompt : null };
  },
};
