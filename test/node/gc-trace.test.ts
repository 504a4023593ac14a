import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { serializeConfig } from "miniflare";
import { describe, expect, it } from "vitest";
import { parseTraceLine, summarize } from "../../bench/gc-trace.ts";
import { useV8Flags } from "../../bench/v8-flags.ts";

// The GC diagnostic (bench/gc-trace.ts): V8's --trace-gc lines as workerd prints them, and the config
// patch (bench/v8-flags-patch.mjs) that gives workerd V8 flags Miniflare has no option for.

const patcher = fileURLToPath(new URL("../../bench/v8-flags-patch.mjs", import.meta.url));
const patch = (config: Buffer, flags: string[]) => spawnSync(process.execPath, [patcher, ...flags], { input: config, timeout: 30_000 });

/** Config.v8Flags of a framed Cap'n Proto message: the list of texts at the root struct's pointer 2. */
function v8FlagsOf(message: Buffer): string[] {
  const segments = message.readUInt32LE(0) + 1;
  const base = Math.ceil((4 + 4 * segments) / 8) * 8;
  const word = (i: number) => base + 8 * i;
  const root = message.readUInt32LE(word(0));
  const slot = 1 + (root >> 2) + (message.readUInt32LE(word(0) + 4) & 0xffff) + 2;
  const lo = message.readUInt32LE(word(slot));
  if (lo === 0) return [];
  const list = slot + 1 + (lo >> 2);
  const count = message.readUInt32LE(word(slot) + 4) >>> 3;
  return Array.from({ length: count }, (_, i) => {
    const p = list + i;
    const at = p + 1 + (message.readUInt32LE(word(p)) >> 2);
    const length = message.readUInt32LE(word(p) + 4) >>> 3;
    return message.subarray(word(at), word(at) + length - 1).toString("utf8");
  });
}

describe("v8-flags-patch", () => {
  const config = serializeConfig({
    services: [{ name: "main", worker: { compatibilityDate: "2026-04-01", modules: [{ name: "a.js", esModule: "export default {}" }] } }],
  });

  it("sets Config.v8Flags and leaves the rest of the message as it was", () => {
    expect(v8FlagsOf(config)).toEqual([]);
    const out = patch(config, ["--trace-gc", "--semi-space-growth-factor=4"]);
    expect(out.status, out.stderr.toString()).toBe(0);
    expect(v8FlagsOf(out.stdout)).toEqual(["--trace-gc", "--semi-space-growth-factor=4"]);
    const segment0 = config.readUInt32LE(4);
    expect(out.stdout.readUInt32LE(4)).toBeGreaterThan(segment0);
    // Everything after segment 0's original words (further segments) is carried over unchanged.
    const header = Math.ceil((4 + 4 * (config.readUInt32LE(0) + 1)) / 8) * 8;
    expect(out.stdout.subarray(out.stdout.length - (config.length - header - 8 * segment0))).toEqual(config.subarray(header + 8 * segment0));
  });

  it("refuses a config that sets V8 flags already", () => {
    const out = patch(serializeConfig({ v8Flags: ["--x"] }), ["--trace-gc"]);
    expect(out.status).not.toBe(0);
    expect(out.stderr.toString()).toContain("already sets v8Flags");
  });
});

describe("v8-flags", () => {
  it("the wrapper runs the workerd Miniflare runs (its version is Miniflare's date)", () => {
    const before = process.env.MINIFLARE_WORKERD_PATH;
    try {
      useV8Flags(["--trace-gc"], mkdtempSync(join(tmpdir(), "v8-flags-")));
      const wrapper = process.env.MINIFLARE_WORKERD_PATH ?? "";
      const out = spawnSync(wrapper, ["--version"], { input: "", timeout: 30_000 });
      // miniflare 4.YYYYMMDD.n is released with workerd YYYY-MM-DD.
      const pkg = JSON.parse(readFileSync(createRequire(import.meta.url).resolve("miniflare/package.json"), "utf8")) as { version: string };
      const date = /^\d+\.(\d{4})(\d{2})(\d{2})\./.exec(pkg.version)?.slice(1).join("-");
      expect(out.stdout.toString().trim()).toBe(`workerd ${date}`);
    } finally {
      if (before === undefined) delete process.env.MINIFLARE_WORKERD_PATH;
      else process.env.MINIFLARE_WORKERD_PATH = before;
    }
  });
});

describe("gc-trace", () => {
  const lines = [
    "[16530:0x11f1bfdd0000]     1640 ms: Scavenge 11.1 (14.9) -> 8.1 (14.9) MB, pooled: 0.0 MB, 2.07 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation failure; ",
    "[16530:0x11f1bfdd0000]     1713 ms: Scavenge 11.4 (15.2) -> 8.4 (15.4) MB, pooled: 0.0 MB, 1.05 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation failure; ",
    "[16530:0x11f1bfdd0000]     1787 ms: Scavenge 11.6 (15.4) -> 8.9 (15.4) MB, pooled: 0.0 MB, 2.41 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation failure; ",
    "[17344:0x11f1bfdd0000]     3338 ms: Mark-Compact 16.6 (27.2) -> 5.4 (27.2) MB, pooled: 0.0 MB, 21.84 / 0.00 ms (average mu = 0.993, current mu = 0.993) allocation failure; GC in old space requested",
    "[16530:0x11f1bf594000]     1641 ms: Scavenge 1.8 (2.8) -> 1.4 (3.2) MB, pooled: 0.0 MB, 0.11 / 0.00 ms (average mu = 1.000, current mu = 1.000) allocation failure; ",
    "workerd/server/server.c++:4123: info: a line of the runtime's own",
  ];

  it("reads each collection: isolate, kind, pause, heap after, what started it", () => {
    expect(lines.map(parseTraceLine)).toEqual([
      { isolate: "0x11f1bfdd0000", kind: "Scavenge", pauseMs: 2.07, heapAfterMb: 8.1, reason: "allocation failure" },
      { isolate: "0x11f1bfdd0000", kind: "Scavenge", pauseMs: 1.05, heapAfterMb: 8.4, reason: "allocation failure" },
      { isolate: "0x11f1bfdd0000", kind: "Scavenge", pauseMs: 2.41, heapAfterMb: 8.9, reason: "allocation failure" },
      { isolate: "0x11f1bfdd0000", kind: "Mark-Compact", pauseMs: 21.84, heapAfterMb: 5.4, reason: "allocation failure; GC in old space requested" },
      { isolate: "0x11f1bf594000", kind: "Scavenge", pauseMs: 0.11, heapAfterMb: 1.4, reason: "allocation failure" },
      undefined,
    ]);
  });

  it("sums per isolate, busiest first; old-generation growth only between young collections in a row", () => {
    const [main, other] = summarize(
      "router",
      lines.flatMap((l) => parseTraceLine(l) ?? []),
      2,
    );
    expect(main!.isolate).toBe("0x11f1bfdd0000");
    expect(main!.kinds["Scavenge"]!.count).toBe(3);
    expect(main!.kinds["Scavenge"]!.pause_total_ms_per_s).toBe(2.77);
    expect(main!.kinds["Mark-Compact"]).toMatchObject({ count: 1, per_s: 0.5, reasons: { "allocation failure; GC in old space requested": 1 } });
    expect(main!.heap_after_mb).toEqual({ min: 5.4, max: 8.9 });
    expect(main!.old_growth_mb_per_s).toBe(0.4); // (8.4 − 8.1) + (8.9 − 8.4), over 2 s
    expect(other!.kinds["Scavenge"]!.count).toBe(1);
  });
});
