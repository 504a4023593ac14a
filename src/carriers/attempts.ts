import { ApiError } from "../request/errors";
import { readBodyLimited } from "../http/read-limited";
import { REJECTIONS } from "../db/carrier-attempt";

/** Why one carrier attempt did not produce a completion. */
export type AttemptFailure = {
  provider: string;
  /**
   * rate_limited: 429; unavailable: 503 or not configured; rejected: the carrier judged the request
   * invalid (400, 413, 422: the caller's to fix, unless another carrier takes it); failed: the carrier's
   * fault (any other status, no answer, an unusable answer).
   */
  kind: "rate_limited" | "unavailable" | "rejected" | "failed";
  status: number | null;
  reason: string;
};

/**
 * The caller's error once no carrier served:
 * - a carrier rejected the request as invalid (400, 413, 422): that status with the carrier's reason
 *   (the last rejection), so a client does not retry a request that cannot succeed;
 * - else 502 with the last carrier's reason when any carrier failed;
 * - else 429 when one rate-limited, else 503 (no carrier could serve).
 * Nothing is charged.
 */
export function exhaustedError(failures: AttemptFailure[], modelId: string): CarriersExhausted {
  const metadata = { attempts: failures.map((f) => ({ provider: f.provider, status: f.status, reason: f.reason })) };
  const rejected = failures.filter((f) => f.kind === "rejected").at(-1);
  if (rejected)
    return new CarriersExhausted(
      rejected.status as RejectionStatus,
      `Carrier ${rejected.provider} rejected the request: ${rejected.reason}`,
      metadata,
      rejected.provider,
    );
  const failed = failures.filter((f) => f.kind === "failed").at(-1);
  const last = failures.at(-1)?.provider ?? null;
  if (failed) return new CarriersExhausted(502, `Carrier ${failed.provider} failed: ${failed.reason}`, metadata, failed.provider);
  if (failures.some((f) => f.kind === "rate_limited"))
    return new CarriersExhausted(429, `The carriers of ${modelId} are rate-limiting requests; retry with backoff.`, metadata, last);
  return new CarriersExhausted(503, `No carrier can serve ${modelId} right now. Nothing was charged.`, metadata, last);
}

type RejectionStatus = 400 | 413 | 422;

/** Every carrier failed; `provider` is the one the record names (the one whose reason is reported). */
export class CarriersExhausted extends ApiError {
  constructor(
    status: RejectionStatus | 429 | 502 | 503,
    message: string,
    metadata: Record<string, unknown>,
    readonly provider: string | null,
  ) {
    super(status, message, metadata);
  }
}

/** Classifies a carrier's non-2xx answer. Every kind moves on to the next carrier: a rejection may be that carrier's alone. */
export function classifyStatus(provider: string, status: number, reason: string): AttemptFailure {
  if (status === 429) return { provider, kind: "rate_limited", status, reason };
  // 529: Anthropic's "overloaded", a 503 by another number.
  if (status === 503 || status === 529) return { provider, kind: "unavailable", status, reason };
  if (REJECTIONS.has(status)) return { provider, kind: "rejected", status, reason };
  return { provider, kind: "failed", status, reason };
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
