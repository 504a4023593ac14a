/**
 * `text` cut into pieces of at most `max` UTF-16 units, never inside a surrogate pair, so each piece
 * encodes to valid UTF-8 on its own: a multi-megabyte event is written in bounded pieces.
 */
export function textPieces(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const pieces: string[] = [];
  for (let i = 0; i < text.length;) {
    let end = Math.min(text.length, i + max);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last < 0xdc00) end += end - 1 > i ? -1 : 1; // keep the pair whole
    pieces.push(text.slice(i, end));
    i = end;
  }
  return pieces;
}
