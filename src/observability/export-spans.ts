import { and, eq, inArray } from "drizzle-orm";
import { db } from "../db/client";
import { apiKeys, type NewGeneration, type ObservabilityDestination } from "../db/schema";
import { generationSpan } from "./span";
import { exportRequestJson } from "./otlp-json";
import { exportRequestProto } from "./otlp-proto";
import { SIGNATURE_HEADER, signatureHeader } from "../webhooks/sign";
import type { DestinationSecrets } from "./destination-secrets";

/** What one export to a destination came to: its HTTP status (0: unreachable or timed out) and whether to try again. */
export type ExportResult = { status: number; outcome: "delivered" | "retry" | "failed" };

/** The collector's traces URL: the endpoint as given when it names `/v1/traces`, else that path under it (OTLP/HTTP's default). */
export function tracesUrl(endpoint: string): string {
  return /\/v1\/traces\/?$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/+$/, "")}/v1/traces`;
}

/** The masked labels of the records' keys (the keys themselves are never stored), read in one query scoped to the account. */
export async function keyLabels(d1: D1Database, accountId: string, records: NewGeneration[]): Promise<Map<string, string>> {
  const hashes = [...new Set(records.map((r) => r.keyHash))];
  if (hashes.length === 0) return new Map();
  // D1 binds at most 100 parameters a statement: 90 hashes a query.
  const chunks = Array.from({ length: Math.ceil(hashes.length / 90) }, (_, i) => hashes.slice(i * 90, i * 90 + 90));
  const rows = await Promise.all(
    chunks.map((chunk) =>
      db(d1)
        .select({ hash: apiKeys.hash, label: apiKeys.label })
        .from(apiKeys)
        .where(and(eq(apiKeys.accountId, accountId), inArray(apiKeys.hash, chunk))),
    ),
  );
  return new Map(rows.flat().map((r) => [r.hash, r.label]));
}

/** What an export needs beside the destination: its time limit, the clock, and the record's public shape (a webhook's body). */
export type ExportDeps = { timeoutMs: number; now: () => number; present: (r: NewGeneration) => unknown };

/** The request one export makes: OTLP/HTTP to a collector, or the records as JSON, signed, to a webhook. */
async function exportRequest(
  d: ObservabilityDestination,
  secrets: DestinationSecrets,
  records: NewGeneration[],
  labels: Map<string, string>,
  deps: ExportDeps,
) {
  const headers = secrets.headers;
  if (d.type === "webhook") {
    const body = JSON.stringify({
      type: "generations",
      data: records.map((r) => ({ ...(deps.present(r) as object), key_label: labels.get(r.keyHash) ?? null })),
    });
    // Signed as budget alerts are (src/webhooks/sign.ts): one way to verify every webhook of the project.
    const signature = await signatureHeader(secrets.signingSecret ?? "", Math.floor(deps.now() / 1000), body);
    return { url: d.endpoint, method: d.method, body, headers: { ...headers, "content-type": "application/json", [SIGNATURE_HEADER]: signature } };
  }
  const spans = records.map((r) => generationSpan(r, { keyLabel: labels.get(r.keyHash) ?? null }));
  const json = d.encoding === "json";
  return {
    url: tracesUrl(d.endpoint),
    method: "POST",
    body: json ? JSON.stringify(exportRequestJson(spans)) : exportRequestProto(spans),
    headers: { ...headers, "content-type": json ? "application/json" : "application/x-protobuf" },
  };
}

/**
 * Sends the records as one export in the destination's kind. 2xx is delivered; 429, 5xx, a timeout or no
 * answer is worth another try (OTLP's retryable answers); any other answer will not change. `secrets`: the
 * destination's, opened (its headers, a webhook's signing secret).
 */
export async function exportSpans(
  d: ObservabilityDestination,
  secrets: DestinationSecrets,
  records: NewGeneration[],
  labels: Map<string, string>,
  deps: ExportDeps,
): Promise<ExportResult> {
  const { url, ...init } = await exportRequest(d, secrets, records, labels, deps);
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(deps.timeoutMs) });
  } catch {
    return { status: 0, outcome: "retry" };
  }
  await res.body?.cancel();
  if (res.ok) return { status: res.status, outcome: "delivered" };
  return { status: res.status, outcome: res.status === 429 || res.status >= 500 ? "retry" : "failed" };
}
