import { describe, it, expect } from "vitest";
import { imageSize } from "../../src/media/image-size";
import { audioSeconds } from "../../src/media/audio-duration";
import { videoSeconds } from "../../src/media/video-duration";
import { pdfPages } from "../../src/media/pdf-pages";
import { dataUrl } from "../../src/media/data-url";
import { concat, gif, jpeg, mp3, MP3_FRAME_SECONDS, mp4, pdf, pdfWithObjectStream, png, wav } from "./media-fixtures";

// What a media part holds, read from its own bytes (src/media/): the sizes the hold prices at the carriers' rates.
const text = (s: string) => new TextEncoder().encode(s);

describe("image sizes from their headers", () => {
  it.each([
    ["PNG", png(1920, 1080), { width: 1920, height: 1080 }],
    ["JPEG after an APP0 segment", jpeg(4000, 3000), { width: 4000, height: 3000 }],
    ["GIF", gif(320, 200), { width: 320, height: 200 }],
  ] as const)("%s", (_name, bytes, size) => {
    expect(imageSize(bytes)).toEqual(size);
  });

  it.each([
    ["another format", text("BM not an image we read")],
    ["a truncated PNG", png(10, 10).subarray(0, 20)],
    ["a JPEG without a frame header", jpeg(10, 10).subarray(0, 22)],
    ["nothing", new Uint8Array()],
  ])("%s: not measured", (_name, bytes) => {
    expect(imageSize(bytes)).toBeNull();
  });
});

describe("seconds of audio", () => {
  it.each([
    ["a 2.5 s WAV", wav(2.5), "wav", 2.5],
    ["a streamed WAV (no data size): to the end of the file", wav(3, 8000, true), "wav", 3],
    ["an MP3 of 100 frames after an ID3v2 tag, an ID3v1 tag at the end", mp3(100), "mp3", 100 * MP3_FRAME_SECONDS],
    ["an MP3 without a tag", mp3(40, false), "mp3", 40 * MP3_FRAME_SECONDS],
  ] as const)("%s", (_name, bytes, format, seconds) => {
    expect(audioSeconds(bytes, format)).toBeCloseTo(seconds, 9);
  });

  it.each([
    ["an MP3 broken mid-file", concat(mp3(50, false).subarray(0, 417 * 20), new Uint8Array(10_000), mp3(20, false))],
    ["FLAC", concat(text("fLaC"), new Uint8Array(100))],
    ["a WAV without a data chunk", wav(1).subarray(0, 36)],
  ])("%s: not measured", (_name, bytes) => {
    expect(audioSeconds(bytes, "mp3")).toBeNull();
  });
});

describe("seconds of video", () => {
  it.each([
    ["an MP4, version 0 movie header", mp4(95), 95],
    ["version 1 (64-bit times)", mp4(12, 1), 12],
  ] as const)("%s", (_name, bytes, seconds) => {
    expect(videoSeconds(bytes)).toBe(seconds);
  });

  it("WebM or a truncated file: not measured", () => {
    expect(videoSeconds(concat(Uint8Array.of(0x1a, 0x45, 0xdf, 0xa3), new Uint8Array(64)))).toBeNull();
    expect(videoSeconds(mp4(10).subarray(0, 40))).toBeNull();
  });
});

describe("pages of a PDF", () => {
  it("plain objects: the page tree's count", async () => {
    expect(await pdfPages(pdf(1))).toBe(1);
    expect(await pdfPages(pdf(120))).toBe(120);
  });

  it("a page tree inside a compressed object stream (PDF 1.5)", async () => {
    expect(await pdfPages(await pdfWithObjectStream(37))).toBe(37);
  });

  it("a count that understates the leaves: the leaves", async () => {
    const lying = new TextDecoder().decode(pdf(5)).replace("/Count 5", "/Count 2");
    expect(await pdfPages(text(lying))).toBe(5);
  });

  it("not a PDF, or no page tree: not measured", async () => {
    expect(await pdfPages(text("hello"))).toBeNull();
    expect(await pdfPages(text("%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"))).toBeNull();
  });
});

describe("data URLs", () => {
  it("base64 and percent-encoded text; anything else is not one", () => {
    expect(dataUrl("data:application/pdf;base64,JVBERi0=")).toEqual({ mime: "application/pdf", bytes: text("%PDF-") });
    expect(dataUrl("data:text/plain,a%20b")).toEqual({ mime: "text/plain", bytes: text("a b") });
    expect(dataUrl("https://example.test/a.pdf")).toBeNull();
    expect(dataUrl("data:image/png;base64,***")).toBeNull();
  });
});
