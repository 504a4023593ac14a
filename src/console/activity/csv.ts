import { nanoToUsdString } from "../../catalog/money";
import type { Generation } from "../../db/schema";
import { exportPage, encodeCursor, decodeCursor, accountKeys } from "./queries";
import type { ActivityFilter } from "./filter";

/** Rows read from D1 per step of the export: the stream never holds more. */
const EXPORT_PAGE = 500;

export const CSV_HEADER = ["time", "generation_id", "model", "api", "provider", "key", "app", "tokens_in", "tokens_out", "cached_tokens", "cost_usd", "status"];

/**
 * The filtered requests of one account as CSV, oldest first, streamed a page at a time (never built in
 * memory). Text a spreadsheet would run as a formula is prefixed with `'`.
 */
export function activityCsv(d1: D1Database, accountId: string, filter: ActivityFilter): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let after: string | null = null;
  let names: Map<string, string> | null = null;
  let done = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (done) return controller.close();
      if (names === null) {
        names = new Map((await accountKeys(d1, accountId)).map((k) => [k.hash, k.name]));
        controller.enqueue(encoder.encode(line(CSV_HEADER)));
      }
      const rows = await exportPage(d1, accountId, filter, after === null ? null : decodeCursor(after)!, EXPORT_PAGE);
      if (rows.length > 0) {
        after = encodeCursor(rows.at(-1)!);
        controller.enqueue(encoder.encode(rows.map((g) => line(csvRow(g, names!))).join("")));
      }
      if (rows.length < EXPORT_PAGE) done = true;
    },
  });
}

export function csvRow(g: Generation, keyNames: Map<string, string>): string[] {
  return [
    new Date(g.createdAt).toISOString(),
    g.id,
    g.model,
    g.inboundApi,
    g.providerName ?? "",
    keyNames.get(g.keyHash) ?? `deleted key ${g.keyHash.slice(0, 8)}`,
    g.app ?? "",
    String(g.tokensPrompt),
    String(g.tokensCompletion),
    String(g.tokensCached),
    nanoToUsdString(g.costNano),
    String(g.status),
  ];
}

function line(fields: string[]): string {
  return fields.map(cell).join(",") + "\r\n";
}

function cell(v: string): string {
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
