/**
 * Reads a whole body as UTF-8 text, but never more than `limit` bytes. A body whose Content-Length is
 * within the limit (HTTP framing then bounds it, unless it is compressed) is read and decoded natively
 * in one call; any other is streamed and cancelled as soon as it exceeds the limit — or, with
 * `keepUnread`, left unread (unlocked) for the caller, who may drain it (`src/http/drain-body.ts`).
 */
export async function readBodyLimited(
  message: Request | Response,
  limit: number,
  opts: { keepUnread?: boolean } = {},
): Promise<{ text: string; bytes: number } | "too_large"> {
  const body = message.body;
  if (!body) return { text: "", bytes: 0 };
  const declared = message.headers.get("content-length");
  if (declared !== null && !message.headers.has("content-encoding")) {
    const length = Number(declared);
    if (length > limit) {
      if (!opts.keepUnread) await body.cancel().catch(() => {});
      return "too_large";
    }
    if (Number.isSafeInteger(length) && length >= 0) return { text: await message.text(), bytes: length };
  }
  return readStreamLimited(body, limit, opts.keepUnread ?? false);
}

/** Decodes each read as it arrives, so the bytes are never held whole beside the text (nor copied into one buffer). */
async function readStreamLimited(body: ReadableStream<Uint8Array>, limit: number, keepUnread: boolean): Promise<{ text: string; bytes: number } | "too_large"> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      if (keepUnread) reader.releaseLock();
      else await reader.cancel().catch(() => {});
      return "too_large";
    }
    text += decoder.decode(value, { stream: true });
  }
  return { text: text + decoder.decode(), bytes: total };
}
