/**
 * A statement bound with exactly the parameters its text uses (`?1` … `?N`, N the highest): D1 refuses
 * more. Lets one parameter list serve the several statements of a batch.
 */
export function bindUsed(d1: D1Database, q: string, params: readonly unknown[]): D1PreparedStatement {
  const used = Math.max(0, ...[...q.matchAll(/\?(\d+)/g)].map((m) => Number(m[1])));
  return d1.prepare(q).bind(...params.slice(0, used));
}
