/**
 * A `data:` URL's media type and bytes, null when the string is not one (an http URL, a file id) or its
 * base64 does not decode. A data URL without `;base64` carries its text percent-encoded.
 */
export function dataUrl(url: string): { mime: string; bytes: Uint8Array } | null {
  if (!url.startsWith("data:")) return null;
  const comma = url.indexOf(",");
  if (comma < 0) return null;
  const head = url.slice(5, comma);
  const mime = (head.split(";")[0] ?? "").trim().toLowerCase();
  const payload = url.slice(comma + 1);
  if (/;base64$/i.test(head)) {
    const bytes = base64Bytes(payload);
    return bytes ? { mime, bytes } : null;
  }
  try {
    return { mime, bytes: new TextEncoder().encode(decodeURIComponent(payload)) };
  } catch {
    return null;
  }
}

/** Bytes of standard base64 (whitespace ignored), null when it is not base64. */
export function base64Bytes(text: string): Uint8Array | null {
  let binary: string;
  try {
    binary = atob(text.replace(/\s+/g, ""));
  } catch {
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
