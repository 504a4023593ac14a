import * as z from "zod";
import { ApiError } from "./errors";
import { invalidInput } from "./json-body";
import { providerPreferences } from "./provider-preferences";
import { MAX_ID_CHARS } from "./router-field-schemas";
import { BYTES_PER_TOKEN, utf8Bytes } from "./token-estimate";

/** Most inputs embedded in one request (400 above it): OpenAI's own limit. */
export const MAX_EMBEDDING_INPUTS = 2048;

const text = z.string().min(1, "inputs must be non-empty strings");
const tokens = z.array(z.int().min(0)).min(1, "token arrays must be non-empty");

/** OpenRouter's embeddings request (the contract's), text and token inputs; fields beyond it are refused. */
export const embeddingsRequestSchema = z.strictObject({
  model: z.string({ error: "`model` is required: an embeddings model id (GET /api/v1/embeddings/models lists them)" }).min(1).max(256),
  input: z.union(
    [
      text,
      z.array(text).min(1).max(MAX_EMBEDDING_INPUTS, `at most ${MAX_EMBEDDING_INPUTS} inputs are accepted`),
      tokens,
      z.array(tokens).min(1).max(MAX_EMBEDDING_INPUTS, `at most ${MAX_EMBEDDING_INPUTS} inputs are accepted`),
    ],
    { error: "must be a string, an array of strings, an array of token ids or an array of token arrays (text and token inputs; images are not embedded here)" },
  ),
  dimensions: z.int().min(1, "must be at least 1").optional(),
  encoding_format: z.enum(["float", "base64"]).optional(),
  input_type: z.string().min(1).max(64).optional(),
  user: z.string().max(MAX_ID_CHARS, `at most ${MAX_ID_CHARS} characters`).optional(),
  provider: providerPreferences,
});

type Parsed = z.infer<typeof embeddingsRequestSchema>;

/** The canonical embeddings request: every input as text or as token ids, in order. */
export type EmbeddingsRequest = Omit<Parsed, "input"> & { inputs: Array<string | number[]> };

export function parseEmbeddingsRequest(json: Record<string, unknown>): EmbeddingsRequest {
  const parsed = embeddingsRequestSchema.safeParse(json);
  if (!parsed.success) throw invalidInput(parsed.error);
  const { input, ...rest } = parsed.data;
  const inputs: Array<string | number[]> =
    typeof input === "string" ? [input] : input.length > 0 && typeof input[0] === "number" ? [input as number[]] : (input as Array<string | number[]>);
  if (inputs.length > MAX_EMBEDDING_INPUTS) throw new ApiError(400, `Invalid request: \`input\`: at most ${MAX_EMBEDDING_INPUTS} inputs are accepted`);
  return { ...rest, inputs };
}

/** The most tokens the inputs can be: a token is at least one byte of text; a token array is its length. */
export function inputTokensBound(r: EmbeddingsRequest): number {
  return r.inputs.reduce((n: number, i) => n + (typeof i === "string" ? utf8Bytes(i) : i.length), 0);
}

/** Our estimate of the input tokens (BYTES_PER_TOKEN bytes of text a token, as for prompts), for a carrier that reports no usage. */
export function estimateInputTokens(r: EmbeddingsRequest): number {
  return r.inputs.reduce((n: number, i) => n + (typeof i === "string" ? Math.ceil(utf8Bytes(i) / BYTES_PER_TOKEN) : i.length), 0);
}
