import { describe, it, expect } from "vitest";
import { lineRecord, packRecords, partKey, recordInText, recordLine, unpackRecords, unpackText, utcDay } from "../../src/generations/archive-format";
import { generationIdTime, newGenerationId } from "../../src/generations/generation-id";
import type { Generation } from "../../src/db/schema";
import { syntheticRecord } from "./archive-helpers";

const record = (id: string, i: number): Generation => ({ ...syntheticRecord("acct_x", Date.UTC(2020, 4, 6, 7, 8, 9, i), i), id, rev: i % 2 }) as Generation;

describe("archive format (pure)", () => {
  it("a record survives a line and a packed object exactly, in order", async () => {
    const rs = [
      record("gen-a", 0),
      { ...record("gen-ab", 1), presetId: "0b7e1a52-4c1e-4f5e-9a7e-2f1d3c4b5a69", preset: "team-setup", presetVersion: 3 },
      { ...record("gen-abc", 2), app: 'quote " and \\n newline', externalUser: null },
    ];
    for (const r of rs) expect(lineRecord(recordLine(r))).toEqual(r);
    expect(Object.keys(JSON.parse(recordLine(rs[0]!)))[0]).toBe("id"); // D1 column names, id first
    expect(JSON.parse(recordLine(rs[0]!))).toMatchObject({ account_id: "acct_x", cost_nano: rs[0]!.costNano, streamed: true });
    expect(JSON.parse(recordLine(rs[1]!))).toMatchObject({ preset_id: rs[1]!.presetId, preset: "team-setup", preset_version: 3 });
    // A line written before the preset columns were reads them as null.
    const { preset_id: _id, preset: _slug, preset_version: _version, ...older } = JSON.parse(recordLine(rs[1]!)) as Record<string, unknown>;
    expect(lineRecord(JSON.stringify(older))).toEqual({ ...rs[1], presetId: null, preset: null, presetVersion: null });
    const bytes = await packRecords(rs);
    expect(bytes.slice(0, 2)).toEqual(new Uint8Array([0x1f, 0x8b])); // gzip
    expect(await unpackRecords(bytes)).toEqual(rs);
  });

  it("finds one record's line by its id: first, middle, last; a prefix of another id finds nothing", async () => {
    const rs = [record("gen-a", 0), record("gen-ab", 1), record("gen-abc", 2)];
    const text = await unpackText(await packRecords(rs));
    const cases: Array<[string, Generation | undefined]> = [
      ["gen-a", rs[0]],
      ["gen-ab", rs[1]],
      ["gen-abc", rs[2]],
      ["gen-abcd", undefined],
      ["gen-", undefined],
    ];
    for (const [id, want] of cases) expect(recordInText(text, id), id).toEqual(want);
  });

  it("keys, days and time-sortable ids", () => {
    expect(partKey("acct_1", "2026-11-26", 7)).toBe("records/v1/acct_1/2026-11-26/0007.ndjson.gz");
    expect(utcDay(Date.UTC(2026, 10, 26, 23, 59, 59, 999))).toBe("2026-11-26");
    const at = Date.UTC(2026, 10, 26, 12);
    const id = newGenerationId(at);
    expect(id).toMatch(/^gen-[0-9a-f]{32}$/);
    expect(generationIdTime(id)).toBe(at);
    expect(newGenerationId(at + 1) > newGenerationId(at)).toBe(true); // later sorts after
    expect(generationIdTime("gen-" + "ab".repeat(12))).toBeUndefined(); // the older, random-only form
    expect(generationIdTime("gen-seed1")).toBeUndefined();
  });
});
