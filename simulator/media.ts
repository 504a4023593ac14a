// What the simulated carriers bill for media parts, as real ones do: a PDF by its pages, WAV audio by its
// seconds, at the catalog model's published rates — fetching a file given by URL, as a carrier does. Written
// apart from the router's own measuring (src/media/), so that it is an independent check of the hold.
import { inflateSync } from "node:zlib";

/** A model's rates (its catalog entry): tokens per PDF page and per second of audio; null where it names none. */
export type MediaRates = { filePageTokens: number | null; audioTokensPerSecond: number | null };

/** Most bytes fetched for one part given by URL (a carrier has such a limit: Anthropic's is 32 MB a request). */
export const FETCH_MAX_BYTES = 32 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

/** A part the carrier could not fetch: it refuses the request (400), as Anthropic and Gemini do. */
export class UnfetchableMedia extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The tokens of each media part whose size the carrier bills by (a PDF's pages, a WAV's seconds), by part;
 * other parts are billed at the model's allowance (tokens.ts).
 */
export async function billedMedia(messages: readonly unknown[], rates: MediaRates, signal: AbortSignal): Promise<WeakMap<object, number>> {
  const billed = new WeakMap<object, number>();
  for (const m of messages) {
    const content = isObj(m) ? m.content : undefined;
    if (!Array.isArray(content)) continue;
    for (const part of content as unknown[]) {
      if (!isObj(part)) continue;
      const tokens = await partTokens(part, rates, signal);
      if (tokens !== null) billed.set(part, tokens);
    }
  }
  return billed;
}

async function partTokens(part: Obj, rates: MediaRates, signal: AbortSignal): Promise<number | null> {
  if (part.type === "file" && rates.filePageTokens !== null) {
    const source = isObj(part.file) && typeof part.file.file_data === "string" ? part.file.file_data : null;
    if (source === null) return null;
    const bytes = source.startsWith("data:") ? fromDataUrl(source) : await fetchBytes(source, signal);
    const pages = bytes ? countPages(bytes) : 0;
    return pages > 0 ? pages * rates.filePageTokens : null;
  }
  if (part.type === "input_audio" && rates.audioTokensPerSecond !== null && isObj(part.input_audio)) {
    const data = typeof part.input_audio.data === "string" ? Buffer.from(part.input_audio.data, "base64") : null;
    const seconds = data ? wavSeconds(data) : null;
    return seconds === null ? null : Math.ceil(seconds) * rates.audioTokensPerSecond;
  }
  return null;
}

function fromDataUrl(url: string): Buffer | null {
  const comma = url.indexOf(",");
  return comma > 0 && /;base64$/i.test(url.slice(0, comma)) ? Buffer.from(url.slice(comma + 1), "base64") : null;
}

/** A file a request points at, fetched as the carrier would (bounded in bytes and time). */
async function fetchBytes(url: string, signal: AbortSignal): Promise<Buffer> {
  if (!/^https?:\/\//.test(url)) throw new UnfetchableMedia(`Unable to download the file at ${url.slice(0, 100)}: not an http(s) URL.`);
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]) });
  } catch {
    throw new UnfetchableMedia(`Unable to download the file at ${url.slice(0, 100)}.`);
  }
  if (!res.ok) throw new UnfetchableMedia(`Unable to download the file at ${url.slice(0, 100)}: HTTP ${res.status}.`);
  const body = Buffer.from(await res.arrayBuffer());
  if (body.length > FETCH_MAX_BYTES) throw new UnfetchableMedia(`The file at ${url.slice(0, 100)} is larger than ${FETCH_MAX_BYTES} bytes.`);
  return body;
}

/** Pages of a PDF: its `/Type /Page` leaf objects, in plain objects and in Flate object streams. */
export function countPages(pdf: Buffer): number {
  const text = pdf.toString("latin1");
  let pages = (text.match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;
  for (const m of text.matchAll(/\/Type\s*\/ObjStm[^]*?stream\r?\n/g)) {
    const start = m.index + m[0].length;
    const end = text.indexOf("endstream", start);
    try {
      pages += (
        inflateSync(pdf.subarray(start, end), { finishFlush: 2 })
          .toString("latin1")
          .match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []
      ).length;
    } catch {
      // not a stream we read: its pages are not counted
    }
  }
  return pages;
}

/** Seconds of a PCM WAV: its data chunk's size over its byte rate; null when not a WAV. */
function wavSeconds(b: Buffer): number | null {
  if (b.length < 44 || b.toString("latin1", 0, 4) !== "RIFF" || b.toString("latin1", 8, 12) !== "WAVE") return null;
  let byteRate = 0;
  for (let i = 12; i + 8 <= b.length;) {
    const id = b.toString("latin1", i, i + 4);
    const size = b.readUInt32LE(i + 4);
    if (id === "fmt ") byteRate = b.readUInt32LE(i + 16);
    if (id === "data") return byteRate > 0 ? Math.min(size, b.length - i - 8) / byteRate : null;
    i += 8 + size + (size % 2);
  }
  return null;
}

/** A PDF of `pages` blank pages (PDF 1.4, objects written plainly). */
export function pdfOfPages(pages: number): Buffer {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(" ");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    ...Array.from({ length: pages }, () => "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"),
  ];
  const body = objects.map((o, i) => `${i + 1} 0 obj\n${o}\nendobj\n`).join("");
  return Buffer.from(`%PDF-1.4\n${body}trailer\n<< /Root 1 0 R >>\n%%EOF\n`, "latin1");
}
