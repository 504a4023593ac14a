import { nanoToUsdString } from "../../catalog/money";
import type { Generation } from "../../db/schema";
import { accountKeys } from "./queries";
import type { ActivityFilter } from "./filter";
import type { Cursor } from "../../db/record-queries";
import { recordsPage, type RecordStores } from "../../generations/record-pages";
import type { PartCache } from "../../generations/archive-read";

/** Rows written per step of the export: the stream never holds more (beside the archived parts it is reading). */
const EXPORT_PAGE = 500;
/** Archived parts kept read during an export: a part spans several steps, and is fetched once. */
const PARTS_KEPT = 4;

export const CSV_HEADER = ["time", "generation_id", "model", "api", "provider", "key", "app", "tokens_in", "tokens_out", "cached_tokens", "cost_usd", "status"];

/**
 * The filtered requests of one account as CSV, oldest first, from the archive and D1 alike, streamed a
 * page at a time (never built in memory). Every text cell is quoted and neutralized (`csvText`); figures
 * (tokens, cost, status) are bare, so a spreadsheet reads them as numbers.
 */
export function activityCsv(stores: RecordStores, accountId: string, filter: ActivityFilter): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let after: Cursor | null = null;
  let names: Map<string, string> | null = null;
  let done = false;
  const parts: PartCache = new Map();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (done) return controller.close();
      if (names === null) {
        names = new Map((await accountKeys(stores.d1, accountId)).map((k) => [k.hash, k.name]));
        controller.enqueue(encoder.encode(line(CSV_HEADER.map(csvText))));
      }
      const { rows, more } = await recordsPage(stores, accountId, filter, "newer", after, EXPORT_PAGE, parts);
      for (const key of [...parts.keys()].slice(0, Math.max(0, parts.size - PARTS_KEPT))) parts.delete(key);
      const last = rows.at(-1);
      if (last) {
        after = { at: last.createdAt, id: last.id };
        controller.enqueue(encoder.encode(rows.map((g) => line(csvRow(g, names!))).join("")));
      }
      if (!more) done = true;
    },
  });
}

/** A record as CSV cells: its text quoted and neutralized (`csvText`), its figures (tokens, cost, status) bare. */
export function csvRow(g: Generation, keyNames: Map<string, string>): string[] {
  const texts = [
    new Date(g.createdAt).toISOString(),
    g.id,
    g.model,
    g.inboundApi,
    g.providerName ?? "",
    keyNames.get(g.keyHash) ?? `deleted key ${g.keyHash.slice(0, 8)}`,
    g.app ?? "",
  ];
  const figures = [String(g.tokensPrompt), String(g.tokensCompletion), String(g.tokensCached), nanoToUsdString(g.costNano), String(g.status)];
  return [...texts.map(csvText), ...figures];
}

function line(cells: string[]): string {
  return cells.join(",") + "\r\n";
}

/**
 * Where a spreadsheet cell could begin inside our text with a formula (`=`, `+`, `-`, `@` or their
 * full-width forms ＝ ＋ － ＠): at the text's start, and after anything a spreadsheet may split a line on
 * (comma, semicolon, tab, line break — a `;`-separated locale splits inside a quoted cell too), past spaces.
 */
const FORMULA_AT = /(^|[,;\t\r\n])(\p{Zs}*)(?=[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/gu;

/**
 * A text cell: each place a formula could begin gets a `'` before its first character (OWASP's advice:
 * a spreadsheet shows a `'`-led cell as text), as does a cell led by a tab or carriage return; then quoted,
 * its `"` doubled. User-controlled text (an app's `X-Title`, a key's name) then runs nothing, whatever
 * separator the spreadsheet splits on.
 */
export function csvText(v: string): string {
  let safe = v.replace(FORMULA_AT, "$1$2'");
  if (/^[\t\r]/.test(safe)) safe = `'${safe}`;
  return `"${safe.replaceAll('"', '""')}"`;
}
