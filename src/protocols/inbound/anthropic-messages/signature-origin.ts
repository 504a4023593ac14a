type Obj = Record<string, unknown>;

/**
 * A signature (or redacted thinking's data) as /messages gives it to its caller: where the canonical
 * detail names who signed it (`signed_by`: the carrier's model) or another format than Anthropic's, that
 * origin goes first, as `swyo1.<base64url JSON {by, format}>.`, then the carrier's signature unchanged.
 * The caller sends the block back as it got it (signatures are opaque to it); the next turn reads the
 * origin back off and the carrier gets its own signature byte for byte, while a carrier whose model did
 * not sign it never sees it (src/protocols/outbound/anthropic/thinking.ts). Anthropic's thinking block has
 * no other field that survives a client's round trip.
 */
const TAG = "swyo1.";
const ANTHROPIC_FORMAT = "anthropic-claude-v1";

/** The caller's signature (or data) for a canonical detail's `value`. */
export function withOrigin(value: string, d: Obj): string {
  const by = typeof d.signed_by === "string" ? d.signed_by : undefined;
  const format = typeof d.format === "string" && d.format !== ANTHROPIC_FORMAT ? d.format : undefined;
  if (by === undefined && format === undefined) return value;
  return `${TAG}${toBase64Url(JSON.stringify({ ...(by === undefined ? {} : { by }), ...(format === undefined ? {} : { format }) }))}.${value}`;
}

/** A caller's signature (or data) as the carrier's value and the detail fields of its origin (none when it names none). */
export function readOrigin(value: unknown): { value: unknown; origin: Obj } {
  if (typeof value !== "string" || !value.startsWith(TAG)) return { value, origin: { format: ANTHROPIC_FORMAT } };
  const dot = value.indexOf(".", TAG.length);
  const head = dot < 0 ? null : fromBase64Url(value.slice(TAG.length, dot));
  let origin: unknown = null;
  try {
    origin = head === null ? null : JSON.parse(head);
  } catch {
    origin = null;
  }
  // Not one of ours after all: passed on as it came, for the carrier to judge.
  if (typeof origin !== "object" || origin === null) return { value, origin: { format: ANTHROPIC_FORMAT } };
  const o = origin as Obj;
  return {
    value: value.slice(dot + 1),
    origin: { format: typeof o.format === "string" ? o.format : ANTHROPIC_FORMAT, ...(typeof o.by === "string" ? { signed_by: o.by } : {}) },
  };
}

function toBase64Url(text: string): string {
  let binary = "";
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0)),
    );
  } catch {
    return null;
  }
}
