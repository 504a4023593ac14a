// Media files built byte by byte for the tests: the smallest files of each format whose structure states
// a known size (pages, seconds, pixels), written from the formats' specifications, not by the code under test.

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const u16le = (n: number) => Uint8Array.of(n & 0xff, (n >> 8) & 0xff);
const u32le = (n: number) => Uint8Array.of(n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff);
const u16be = (n: number) => Uint8Array.of((n >> 8) & 0xff, n & 0xff);
const u32be = (n: number) => Uint8Array.of((n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export const dataUrlOf = (mime: string, bytes: Uint8Array) => `data:${mime};base64,${base64(bytes)}`;

/** A PCM WAV of `seconds` (16-bit mono at `rate` Hz), silence; a streamed one states no data size. */
export function wav(seconds: number, rate = 8000, streamed = false): Uint8Array {
  const data = new Uint8Array(Math.round(seconds * rate * 2));
  const fmt = concat(ascii("fmt "), u32le(16), u16le(1), u16le(1), u32le(rate), u32le(rate * 2), u16le(2), u16le(16));
  const body = concat(ascii("WAVE"), fmt, ascii("data"), u32le(streamed ? 0xffffffff : data.length), data);
  return concat(ascii("RIFF"), u32le(body.length), body);
}

/** An MPEG-1 Layer III file of `frames` frames at 128 kbit/s, 44.1 kHz (1152 samples a frame), after an ID3v2 tag. */
export function mp3(frames: number, withTag = true): Uint8Array {
  const frameBytes = Math.floor((144 * 128_000) / 44_100); // 417, no padding
  const frame = new Uint8Array(frameBytes);
  frame.set([0xff, 0xfb, 0x90, 0x00]); // sync, MPEG-1, Layer III, no CRC; 128 kbit/s, 44.1 kHz, no padding
  const tag = concat(ascii("ID3"), Uint8Array.of(4, 0, 0, 0, 0, 0, 10), new Uint8Array(10));
  return concat(...(withTag ? [tag] : []), ...Array.from({ length: frames }, () => frame), ascii("TAG"), new Uint8Array(125));
}
export const MP3_FRAME_SECONDS = 1152 / 44_100;

/** An MP4 whose movie header says `seconds` (timescale 1000; version 0, or 1 with 64-bit times). */
export function mp4(seconds: number, version: 0 | 1 = 0): Uint8Array {
  const box = (type: string, ...content: Uint8Array[]) => {
    const body = concat(...content);
    return concat(u32be(8 + body.length), ascii(type), body);
  };
  const times =
    version === 0 ? concat(u32be(0), u32be(0), u32be(1000), u32be(seconds * 1000)) : concat(new Uint8Array(16), u32be(1000), u32be(0), u32be(seconds * 1000));
  const mvhd = box("mvhd", Uint8Array.of(version, 0, 0, 0), times, new Uint8Array(80));
  return concat(box("ftyp", ascii("isom"), u32be(512), ascii("isomiso2")), box("moov", mvhd), box("mdat", new Uint8Array(64)));
}

/** The first bytes of a PNG of the given size (signature and IHDR). */
export function png(width: number, height: number): Uint8Array {
  return concat(
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    u32be(13),
    ascii("IHDR"),
    u32be(width),
    u32be(height),
    Uint8Array.of(8, 2, 0, 0, 0),
    u32be(0),
  );
}

/** A JPEG's start: SOI, an APP0 segment, then a baseline frame header (SOF0) of the given size. */
export function jpeg(width: number, height: number): Uint8Array {
  const app0 = concat(Uint8Array.of(0xff, 0xe0), u16be(16), ascii("JFIF\0"), new Uint8Array(9));
  const sof = concat(Uint8Array.of(0xff, 0xc0), u16be(17), Uint8Array.of(8), u16be(height), u16be(width), Uint8Array.of(3), new Uint8Array(9));
  return concat(Uint8Array.of(0xff, 0xd8), app0, sof);
}

/** A GIF's start of the given size. */
export function gif(width: number, height: number): Uint8Array {
  return concat(ascii("GIF89a"), u16le(width), u16le(height), new Uint8Array(3));
}

/** A PDF of `pages` pages with its objects written plainly (PDF 1.4). */
export function pdf(pages: number): Uint8Array {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(" ")}] /Count ${pages} >>`,
    ...Array.from({ length: pages }, () => "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"),
  ];
  let text = "%PDF-1.4\n";
  objects.forEach((o, i) => (text += `${i + 1} 0 obj\n${o}\nendobj\n`));
  return ascii(`${text}trailer\n<< /Root 1 0 R >>\n%%EOF\n`);
}

/** A PDF 1.5 whose page tree sits in one Flate-compressed object stream (as most writers put it now). */
export async function pdfWithObjectStream(pages: number): Promise<Uint8Array> {
  const inner = [
    `<< /Type /Pages /Kids [${Array.from({ length: pages }, (_, i) => `${i + 4} 0 R`).join(" ")}] /Count ${pages} >>`,
    ...Array.from({ length: pages }, () => "<< /Type /Page /Parent 2 0 R /Resources << /Font << >> >> >>"),
  ];
  const offsets: string[] = [];
  let content = "";
  inner.forEach((o, i) => {
    offsets.push(`${i === 0 ? 2 : i + 3} ${content.length}`);
    content += o + "\n";
  });
  const header = offsets.join(" ") + "\n";
  const packed = new Uint8Array(await new Response(new Blob([ascii(header + content)]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
  const dict = `<< /Type /ObjStm /N ${inner.length} /First ${header.length} /Filter /FlateDecode /Length ${packed.length} >>`;
  return concat(
    ascii(`%PDF-1.5\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n3 0 obj\n${dict}\nstream\n`),
    packed,
    ascii("\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"),
  );
}
