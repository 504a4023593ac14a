import { ApiError } from "../api/errors";
import { readBodyLimited } from "../http/read-limited";

/** Why one carrier attempt did not produce a completion. */
export type AttemptFailure = {
  provider: string;
  /** rate_limited: 429; unavailable: 503 or not configured; failed: any other error or no answer. */
  kind: "rate_limited" | "unavailable" | "failed";
  status: number | null;
  reason: string;
};

/**
 * The caller's error once every carrier failed: 502 with the last carrier's reason when any carrier
 * erred, else 429 when one rate-limited, else 503 (no carrier could serve; nothing is charged).
 */
export function exhaustedError(failures: AttemptFailure[], modelId: string): CarriersExhausted {
  const failed = failures.filter((f) => f.kind === "failed").at(-1);
  const metadata = { attempts: failures.map((f) => ({ provider: f.provider, status: f.status, reason: f.reason })) };
  const last = failures.at(-1)?.provider ?? null;
  if (failed) return new CarriersExhausted(502, `Carrier ${failed.provider} failed: ${failed.reason}`, metadata, failed.provider);
  if (failures.some((f) => f.kind === "rate_limited"))
    return new CarriersExhausted(429, `The carriers of ${modelId} are rate-limiting requests; retry with backoff.`, metadata, last);
  return new CarriersExhausted(503, `No carrier can serve ${modelId} right now. Nothing was charged.`, metadata, last);
}

/** Every carrier failed; `provider` is the one the record names (the one whose reason is reported). */
export class CarriersExhausted extends ApiError {
  constructor(
    status: 429 | 502 | 503,
    message: string,
    metadata: Record<string, unknown>,
    readonly provider: string | null,
  ) {
    super(status, message, metadata);
  }
}

/** Classifies a carrier's non-2xx answer; `retry` says whether the next carrier may be tried. */
export function classifyStatus(provider: string, status: number, reason: string): { failure: AttemptFailure; retry: boolean } {
  if (status === 429) return { failure: { provider, kind: "rate_limited", status, reason }, retry: true };
  if (status === 503) return { failure: { provider, kind: "unavailable", status, reason }, retry: true };
  return { failure: { provider, kind: "failed", status, reason }, retry: status >= 500 };
}

/** The carrier's own error message from its body (OpenAI shape or plain text), kept short. */
export async function carrierReason(response: Response): Promise<string> {
  const text = await readTextLimited(response, 8192).catch(() => "");
  let message: string | undefined;
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json === "object" && json !== null && "error" in json) {
      const error = (json as { error: unknown }).error;
      if (typeof error === "string") message = error;
      else if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") message = error.message;
    }
  } catch {
    message = undefined;
  }
  const reason = (message ?? text).trim().slice(0, 300);
  return reason ? `HTTP ${response.status}: ${reason}` : `HTTP ${response.status}`;
}

/** Reads a body as text up to `limit` bytes; longer bodies reject with OversizedBody. */
export async function readTextLimited(response: Response, limit: number): Promise<string> {
  const read = await readBodyLimited(response, limit);
  if (read === "too_large") throw new OversizedBody(limit);
  return read.text;
}

export class OversizedBody extends Error {
  constructor(readonly limit: number) {
    super(`the response exceeded ${limit} bytes`);
  }
}
