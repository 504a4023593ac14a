import { toHex } from "../keys/api-key";

/**
 * Generation ids carry their creation time: `gen-` + 12 hex digits of the Unix ms (fixed width, so ids
 * sort by time) + 20 random hex digits (80 bits). The time tells a lookup which archived day to read
 * (docs/storage.md, the records archive). Ids made before this form are `gen-` + 24 random hex digits:
 * they carry no time and stay valid everywhere.
 */
const TIMED = /^gen-([0-9a-f]{12})[0-9a-f]{20}$/;

export function newGenerationId(createdAt: number): string {
  return `gen-${Math.max(0, Math.floor(createdAt)).toString(16).padStart(12, "0").slice(-12)}${toHex(crypto.getRandomValues(new Uint8Array(10)))}`;
}

/** The Unix ms a generation id was made at, or undefined for an id of the older, random-only form. */
export function generationIdTime(id: string): number | undefined {
  const m = TIMED.exec(id);
  return m ? parseInt(m[1]!, 16) : undefined;
}
