import { ascii, u32le } from "./image-size";

/**
 * Seconds of audio that a WAV or MP3 file holds, by its own structure (the RIFF data size over the byte
 * rate; every MPEG audio frame's samples over its sample rate), null for another format or one that does
 * not parse — the router then cannot measure it.
 */
export function audioSeconds(b: Uint8Array, format: string): number | null {
  const f = format.toLowerCase();
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WAVE") return wavSeconds(b);
  if (f === "mp3" || f === "mpeg" || f === "audio/mpeg" || f === "audio/mp3" || ascii(b, 0, 3) === "ID3" || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0))
    return mp3Seconds(b);
  return null;
}

function wavSeconds(b: Uint8Array): number | null {
  let byteRate = 0;
  for (let i = 12; i + 8 <= b.length;) {
    const id = ascii(b, i, i + 4);
    let size = u32le(b, i + 4);
    if (id === "fmt " && i + 16 <= b.length) byteRate = u32le(b, i + 16);
    if (id === "data") {
      // A streamed WAV states 0 or 0xFFFFFFFF: the data runs to the end.
      const rest = b.length - (i + 8);
      if (size === 0 || size > rest) size = rest;
      return byteRate > 0 ? size / byteRate : null;
    }
    i += 8 + size + (size % 2); // chunks are padded to even sizes
  }
  return null;
}

// MPEG audio frame headers: kbit/s by [version group][layer][index], sample rates by version.
const BITRATES: Record<string, number[]> = {
  "1-1": [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  "1-2": [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  "1-3": [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  "2-1": [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  "2-2": [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  "2-3": [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const SAMPLE_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };
/** Trailing bytes that may follow the last frame (an ID3v1 or APE tag) without making the file unreadable. */
const TAIL_SLACK = 4096;

/** Walks every frame of an MP3 (after an ID3v2 tag) and adds up their samples; null when a frame does not parse mid-file. */
function mp3Seconds(b: Uint8Array): number | null {
  let i = 0;
  if (ascii(b, 0, 3) === "ID3" && b.length >= 10) {
    const tag = ((b[6]! & 0x7f) << 21) | ((b[7]! & 0x7f) << 14) | ((b[8]! & 0x7f) << 7) | (b[9]! & 0x7f);
    i = 10 + tag + (b[5]! & 0x10 ? 10 : 0);
  }
  let seconds = 0;
  let frames = 0;
  while (i + 4 <= b.length) {
    const frame = frameAt(b, i);
    if (!frame) {
      if (frames > 0 && b.length - i <= TAIL_SLACK) break;
      return null;
    }
    seconds += frame.seconds;
    frames++;
    i += frame.length;
  }
  return frames > 0 ? seconds : null;
}

function frameAt(b: Uint8Array, i: number): { length: number; seconds: number } | null {
  if (b[i] !== 0xff || (b[i + 1]! & 0xe0) !== 0xe0) return null;
  const version = (b[i + 1]! >> 3) & 3; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  const layerBits = (b[i + 1]! >> 1) & 3; // 3: Layer I, 2: Layer II, 1: Layer III
  if (version === 1 || layerBits === 0) return null;
  const layer = 4 - layerBits;
  const kbps = BITRATES[`${version === 3 ? 1 : 2}-${layer}`]![(b[i + 2]! >> 4) & 0xf];
  const rate = SAMPLE_RATES[version]![(b[i + 2]! >> 2) & 3];
  if (!kbps || !rate) return null; // free format, a bad index
  const padding = (b[i + 2]! >> 1) & 1;
  const samples = layer === 1 ? 384 : layer === 2 || version === 3 ? 1152 : 576;
  const length = layer === 1 ? (Math.floor((12 * kbps * 1000) / rate) + padding) * 4 : Math.floor(((samples / 8) * kbps * 1000) / rate) + padding;
  return length > 4 ? { length, seconds: samples / rate } : null;
}
