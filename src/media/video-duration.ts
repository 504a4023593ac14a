import { ascii, u32be } from "./image-size";

/**
 * Seconds of video an MP4 or QuickTime file holds: its movie header (`moov` → `mvhd`: duration over
 * timescale). Null for another format, a fragmented file whose header states no duration, or one that
 * does not parse — the router then cannot measure it.
 */
export function videoSeconds(b: Uint8Array): number | null {
  const moov = box(b, 0, b.length, "moov");
  if (!moov) return null;
  const mvhd = box(b, moov.start, moov.end, "mvhd");
  if (!mvhd || mvhd.end - mvhd.start < 20) return null;
  const v1 = b[mvhd.start] === 1;
  const at = mvhd.start + (v1 ? 20 : 12);
  if (at + (v1 ? 12 : 8) > mvhd.end) return null;
  const timescale = u32be(b, at);
  const duration = v1 ? u32be(b, at + 4) * 2 ** 32 + u32be(b, at + 8) : u32be(b, at + 4);
  if (timescale === 0 || duration === 0 || duration === 0xffffffff) return null;
  return duration / timescale;
}

/** The first box of `type` among the boxes in [from, to): its content's range. */
function box(b: Uint8Array, from: number, to: number, type: string): { start: number; end: number } | null {
  for (let i = from; i + 8 <= to;) {
    let size = u32be(b, i);
    let header = 8;
    if (size === 1) {
      if (i + 16 > to) return null;
      size = u32be(b, i + 8) * 2 ** 32 + u32be(b, i + 12);
      header = 16;
    } else if (size === 0) size = to - i; // to the end
    if (size < header || i + size > to) return null;
    if (ascii(b, i + 4, i + 8) === type) return { start: i + header, end: i + size };
    i += size;
  }
  return null;
}
