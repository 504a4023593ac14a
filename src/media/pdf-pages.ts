/** Most bytes inflated from a PDF's object streams while looking for its page tree (bounds the work per file). */
export const MAX_INFLATED_BYTES = 32 * 1024 * 1024;

/**
 * The pages of a PDF, by its own page tree: the largest `/Count` of a `/Type /Pages` node (the root's
 * counts every page), or the leaf `/Type /Page` objects when more — looked for in the file's plain objects
 * and in its compressed object streams (PDF 1.5's `/ObjStm`, where most writers put the page tree now).
 * Never below the pages the file holds; more only for a file holding several revisions. Null when it is
 * not a PDF or no page tree is found (an encrypted object stream, a filter other than Flate): the router
 * then cannot measure it.
 */
export async function pdfPages(bytes: Uint8Array): Promise<number | null> {
  const text = latin1(bytes);
  if (!text.slice(0, 1024).includes("%PDF-")) return null;
  const found = { count: 0, leaves: 0 };
  const objects = /\b\d+\s+\d+\s+obj\b([\s\S]*?)\bendobj\b/g;
  let inflated = 0;
  for (let m = objects.exec(text); m !== null; m = objects.exec(text)) {
    const body = m[1]!;
    const streamAt = body.search(/\bstream\r?\n/);
    const dict = streamAt < 0 ? body : body.slice(0, streamAt);
    if (streamAt < 0) {
      countPageTree(dict, found);
      continue;
    }
    if (!/\/Type\s*\/ObjStm\b/.test(dict) || !/\/Filter\s*\/FlateDecode\b/.test(dict) || /\/DecodeParms/.test(dict)) continue;
    const bodyAt = m.index + m[0].length - "endobj".length - body.length;
    const start = bodyAt + streamAt + body.slice(streamAt).indexOf("\n") + 1;
    let end = text.lastIndexOf("endstream", m.index + m[0].length);
    // The stream's own length where it states one; else up to the end-of-line before `endstream`.
    const length = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict);
    if (length && start + Number(length[1]) <= end) end = start + Number(length[1]);
    else while (end > start && (text[end - 1] === "\n" || text[end - 1] === "\r")) end--;
    if (end <= start || inflated >= MAX_INFLATED_BYTES) continue;
    const content = await inflate(bytes.subarray(start, end), MAX_INFLATED_BYTES - inflated);
    if (content === null) continue;
    inflated += content.length;
    for (const d of topLevelDicts(latin1(content))) countPageTree(d, found);
  }
  const pages = Math.max(found.count, found.leaves);
  return pages > 0 ? pages : null;
}

/** A page tree node's count (the largest seen) and leaf pages, from one object's dictionary text. */
function countPageTree(dict: string, found: { count: number; leaves: number }): void {
  if (/\/Type\s*\/Pages\b/.test(dict)) {
    const count = /\/Count\s+(\d+)/.exec(dict);
    if (count) found.count = Math.max(found.count, Number(count[1]));
  } else if (/\/Type\s*\/Page\b/.test(dict)) found.leaves++;
}

/** The top-level `<< … >>` dictionaries of an object stream's objects, nested ones inside them. */
function topLevelDicts(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (text[i] === "<" && text[i + 1] === "<") {
      if (depth++ === 0) start = i;
      i++;
    } else if (text[i] === ">" && text[i + 1] === ">" && depth > 0) {
      if (--depth === 0) out.push(text.slice(start, i + 2));
      i++;
    }
  }
  return out;
}

/** zlib-inflated bytes, at most `limit` of them; null when they do not inflate. */
async function inflate(data: Uint8Array, limit: number): Promise<Uint8Array | null> {
  const reader = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("deflate")).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.length;
      if (total >= limit) {
        await reader.cancel();
        break;
      }
    }
  } catch {
    // A stream that ends badly (trailing bytes after the zlib data are common) keeps what inflated.
    if (total === 0) return null;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return s;
}
