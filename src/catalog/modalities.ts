/**
 * The input kinds beyond text that a carrier bills per message part, by the catalog's modality names
 * (`input_modalities`), and the chat content part types that carry each.
 */
export const MEDIA_MODALITIES = ["image", "file", "audio", "video"] as const;
export type MediaModality = (typeof MEDIA_MODALITIES)[number];

/** Content part `type` → the modality it carries (the contract's ChatContentItems, and the older `input_image`). */
export const PART_MODALITY: Readonly<Record<string, MediaModality>> = {
  image_url: "image",
  input_image: "image",
  file: "file",
  input_audio: "audio",
  video_url: "video",
  input_video: "video",
};

/** Tokens one part of each kind counts for, in the hold and the estimate: the model's catalog allowance. */
export type PartTokens = Record<MediaModality, number>;
/** How many parts of each kind a request carries. */
export type PartCounts = Record<MediaModality, number>;

/** Tokens a part counts for when the model's catalog entry does not say (images: `image_tokens`). */
export const DEFAULT_PART_TOKENS = 1600;

/** Σ parts × allowance: the prompt tokens a request's media parts may be billed as. */
export function partTokensOf(parts: PartCounts, tokens: PartTokens): number {
  let n = 0;
  for (const m of MEDIA_MODALITIES) n += parts[m] * tokens[m];
  return n;
}

/**
 * What the hold counts each measured media part as, at the carrier's published rates (the model's
 * catalog entry): the most one image is billed as, or its tiles where the carrier tiles without a most;
 * tokens per PDF page, per second of audio and of video. Null: the model names no such rate, so such a
 * part cannot be measured there and the prompt is held at the whole context.
 */
export type MediaRates = {
  imageTokens: number;
  imageTiles: { tilePx: number; tokensPerTile: number; smallPx: number | null } | null;
  filePageTokens: number | null;
  audioTokensPerSecond: number | null;
  videoTokensPerSecond: number | null;
};
