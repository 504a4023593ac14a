type Obj = Record<string, unknown>;

/** Our `encrypted_content`: a version tag, then the canonical reasoning details as base64 JSON. */
const TAG = "swy1.";

/**
 * A reasoning item's `encrypted_content` carrying the canonical `reasoning_details` of an answer (signed
 * thinking, redacted thinking, Gemini thought signatures) so that the next turn gives them back to the
 * carrier byte for byte: JSON keeps every string exactly, base64 keeps the JSON opaque to the caller.
 */
export function sealReasoning(details: Obj[]): string {
  const bytes = new TextEncoder().encode(JSON.stringify(details));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return TAG + btoa(binary);
}

/**
 * The reasoning details an `encrypted_content` carries: ours unsealed; anyone else's (OpenAI's own,
 * from an earlier turn elsewhere) as one opaque encrypted detail, passed on as it came.
 */
export function openReasoning(content: string): Obj[] {
  if (content.startsWith(TAG)) {
    try {
      const binary = atob(content.slice(TAG.length));
      const details: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
      if (Array.isArray(details) && details.every((d) => typeof d === "object" && d !== null && !Array.isArray(d))) return details as Obj[];
    } catch {
      // not ours after all: passed on as it came
    }
  }
  return [{ type: "reasoning.encrypted", data: content, format: "openai-responses-v1" }];
}
