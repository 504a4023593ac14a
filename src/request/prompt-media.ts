import type { ChatRequest } from "./chat-request";
import { PART_MODALITY, type MediaRates } from "../catalog/modalities";
import { dataUrl, base64Bytes } from "../media/data-url";
import { imageSize, type ImageSize } from "../media/image-size";
import { pdfPages } from "../media/pdf-pages";
import { audioSeconds } from "../media/audio-duration";
import { videoSeconds } from "../media/video-duration";

/**
 * One media part of a prompt as the router measured it (docs/money.md, Media). A part carried inline is
 * measured by its own bytes: an image's pixels, a PDF's pages, a text file's bytes, audio's and video's
 * seconds. A part the router cannot measure — a file, audio or video by URL, an inline format it does not
 * read — is `unmeasured`: a carrier may bill it up to the whole context.
 */
export type MeasuredPart =
  /** `pixels`: read from an inline image's header when a carrier tiles (decoded then, at most once). */
  | { kind: "image"; pixels: () => ImageSize | null; inline: boolean }
  | { kind: "pdf"; pages: number }
  | { kind: "text"; bytes: number }
  | { kind: "audio"; seconds: number }
  | { kind: "video"; seconds: number }
  | { kind: "unmeasured"; what: string };

/** The prompt's media parts, measured; `inlineChars`: the characters of inline data they carry (billed by their size, not as text). */
export type PromptMedia = { parts: MeasuredPart[]; inlineChars: number };

export const NO_MEDIA: PromptMedia = { parts: [], inlineChars: 0 };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Measures every media part of the request's messages (async: a PDF's page tree may sit in compressed streams). */
export async function measurePromptMedia(body: ChatRequest): Promise<PromptMedia> {
  const media: PromptMedia = { parts: [], inlineChars: 0 };
  for (const m of body.messages)
    if (Array.isArray(m.content))
      for (const part of m.content as unknown[]) {
        if (!isObj(part) || typeof part.type !== "string" || !PART_MODALITY[part.type]) continue;
        const { measured, inline } = await measurePart(part);
        media.parts.push(measured);
        if (measured.kind !== "unmeasured") media.inlineChars += inline;
      }
  return media;
}

/** One part, and the characters of inline data it carries. */
async function measurePart(part: Obj): Promise<{ measured: MeasuredPart; inline: number }> {
  switch (PART_MODALITY[part.type as string]) {
    case "image": {
      const url = urlOf(part.image_url) ?? urlOf(part);
      const inline = url !== null && url.startsWith("data:");
      return { measured: { kind: "image", pixels: once(() => imageSize(dataUrl(url!)?.bytes ?? new Uint8Array())), inline }, inline: inline ? url.length : 0 };
    }
    case "file": {
      const file = isObj(part.file) ? part.file : {};
      const url = typeof file.file_data === "string" ? file.file_data : null;
      const data = url === null ? null : dataUrl(url);
      if (!data) return unmeasured(url === null ? "a file by id" : "a file by URL");
      const measured = await measureFile(data.mime, data.bytes);
      return { measured, inline: url!.length };
    }
    case "audio": {
      const audio = isObj(part.input_audio) ? part.input_audio : {};
      const raw = typeof audio.data === "string" ? audio.data : null;
      const data = raw === null ? null : raw.startsWith("data:") ? (dataUrl(raw)?.bytes ?? null) : base64Bytes(raw);
      const seconds = data ? audioSeconds(data, typeof audio.format === "string" ? audio.format : "") : null;
      return seconds === null
        ? unmeasured(`audio in ${String(audio.format ?? "an unknown format")}`)
        : { measured: { kind: "audio", seconds }, inline: raw!.length };
    }
    default: {
      const url = urlOf(part.video_url) ?? urlOf(part);
      const data = url === null ? null : dataUrl(url);
      if (!data) return unmeasured("a video by URL");
      const seconds = videoSeconds(data.bytes);
      return seconds === null ? unmeasured(`a video of type ${data.mime}`) : { measured: { kind: "video", seconds }, inline: url!.length };
    }
  }
}

async function measureFile(mime: string, bytes: Uint8Array): Promise<MeasuredPart> {
  if (mime === "application/pdf" || mime === "") {
    const pages = await pdfPages(bytes);
    if (pages !== null) return { kind: "pdf", pages };
  }
  // Text is billed as text: a token is at least one byte.
  if (mime.startsWith("text/") || mime === "application/json") return { kind: "text", bytes: bytes.length };
  if (mime.startsWith("image/")) return { kind: "image", pixels: once(() => imageSize(bytes)), inline: true };
  return { kind: "unmeasured", what: `a file of type ${mime || "unknown"}` };
}

/** `f`'s value, computed on the first call only. */
function once<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value;
  };
}

function unmeasured(what: string): { measured: MeasuredPart; inline: number } {
  return { measured: { kind: "unmeasured", what }, inline: 0 };
}

/** A part's URL: `{url}` or the string itself (`image_url`, `video_url`, the Responses API's `input_image`). */
function urlOf(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (isObj(v) && typeof v.url === "string") return v.url;
  if (isObj(v) && typeof v.image_url === "string") return v.image_url;
  return null;
}

/**
 * The tokens a carrier with these rates may bill for the prompt's media, at its published rates; null when
 * one part cannot be measured there (then only the context bounds the prompt). Never below what such a
 * carrier bills for a part of that size: an image at the most one image is billed as (its tiles, where the
 * carrier tiles without a most), a PDF page, a second of audio or video each at their whole rate.
 */
export function mediaTokens(media: PromptMedia, rates: MediaRates): number | null {
  let total = 0;
  for (const p of media.parts) {
    const tokens = partTokens(p, rates);
    if (tokens === null) return null;
    total += tokens;
  }
  return total;
}

function partTokens(p: MeasuredPart, rates: MediaRates): number | null {
  switch (p.kind) {
    case "image":
      if (!rates.imageTiles) return rates.imageTokens;
      // A tiling carrier has no most: an inline image by its tiles; one it fetches (a URL) at the model's allowance.
      if (!p.inline) return rates.imageTokens;
      return tiles(p.pixels(), rates.imageTiles);
    case "pdf":
      return rates.filePageTokens === null ? null : p.pages * rates.filePageTokens;
    case "text":
      return p.bytes;
    case "audio":
      return rates.audioTokensPerSecond === null ? null : Math.ceil(p.seconds) * rates.audioTokensPerSecond;
    case "video":
      return rates.videoTokensPerSecond === null ? null : Math.ceil(p.seconds) * rates.videoTokensPerSecond;
    case "unmeasured":
      return null;
  }
}

function tiles(px: ImageSize | null, t: NonNullable<MediaRates["imageTiles"]>): number | null {
  if (px === null) return null; // a format whose size the router does not read
  if (t.smallPx !== null && px.width <= t.smallPx && px.height <= t.smallPx) return t.tokensPerTile;
  return Math.ceil(px.width / t.tilePx) * Math.ceil(px.height / t.tilePx) * t.tokensPerTile;
}
