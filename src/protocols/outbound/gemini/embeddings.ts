import type { EmbeddingsCarrier } from "../carrier-protocol";
import { Untranslatable } from "../../../request/errors";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isVector = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number" && Number.isFinite(x));

/** OpenRouter's `input_type` values as Gemini task types. */
const TASK_TYPES: Record<string, string> = {
  search_query: "RETRIEVAL_QUERY",
  search_document: "RETRIEVAL_DOCUMENT",
  classification: "CLASSIFICATION",
  clustering: "CLUSTERING",
  semantic_similarity: "SEMANTIC_SIMILARITY",
  question_answering: "QUESTION_ANSWERING",
  fact_verification: "FACT_VERIFICATION",
  code_retrieval_query: "CODE_RETRIEVAL_QUERY",
};

/**
 * Gemini's embeddings (`POST {base}/v1beta/models/{model}:batchEmbedContents`): one request per input,
 * `dimensions` → `outputDimensionality`, `input_type` → `taskType`. Text only: token arrays have no
 * equivalent (the carrier is skipped). Gemini reports no token usage: the router's estimate is billed.
 */
export const geminiEmbeddings: EmbeddingsCarrier = {
  url(base, endpoint) {
    return `${base.replace(/\/$/, "")}/v1beta/models/${encodeURIComponent(endpoint.upstream_model)}:batchEmbedContents`;
  },

  body(req, endpoint) {
    let taskType: string | undefined;
    if (req.input_type !== undefined) {
      taskType = TASK_TYPES[req.input_type];
      if (!taskType) throw new Untranslatable(`input_type ${req.input_type} is not one of ${Object.keys(TASK_TYPES).join(", ")} (Gemini's task types)`);
    }
    const model = `models/${endpoint.upstream_model}`;
    const requests = req.inputs.map((input) => {
      if (typeof input !== "string") throw new Untranslatable("Gemini embeds text only, not token arrays");
      const r: Obj = { model, content: { parts: [{ text: input }] } };
      if (req.dimensions !== undefined) r.outputDimensionality = req.dimensions;
      if (taskType) r.taskType = taskType;
      return r;
    });
    return JSON.stringify({ requests });
  },

  answer(json, inputs) {
    if (!isObj(json) || !Array.isArray(json.embeddings)) return { unusable: "the carrier's embeddings answer has no embeddings" };
    const vectors = (json.embeddings as unknown[]).map((e) => (isObj(e) && isVector(e.values) ? e.values : null));
    if (vectors.length !== inputs || vectors.some((v) => v === null))
      return { unusable: `the carrier answered ${vectors.length} embeddings for ${inputs} inputs` };
    return { vectors: vectors as number[][], promptTokens: null };
  },
};
