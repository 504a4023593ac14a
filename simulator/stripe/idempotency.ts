// Stripe's idempotency layer for POSTs: the first answer under a key is kept and replayed for the
// same endpoint and parameters; other parameters or another endpoint under that key are refused.
import { ApiError } from "./errors";

const MAX_KEY_CHARS = 255;
const KEEP_MS = 24 * 60 * 60 * 1000;

type Saved = { endpoint: string; params: string; status: number; body: string; requestId: string; at: number };

export type Replay = { status: number; body: string; originalRequest: string };

export class IdempotencyKeys {
  private readonly saved = new Map<string, Saved>();

  /** The saved answer to replay, undefined for a new key; throws `idempotency_error` on a mismatch. */
  check(key: string, endpoint: string, params: string): Replay | undefined {
    if (key.length > MAX_KEY_CHARS) {
      throw new ApiError(400, { type: "invalid_request_error", message: `Idempotency-Key must be at most ${MAX_KEY_CHARS} characters long.` });
    }
    const saved = this.saved.get(key);
    if (!saved || Date.now() - saved.at > KEEP_MS) return undefined;
    if (saved.endpoint !== endpoint) {
      throw new ApiError(400, {
        type: "idempotency_error",
        message: `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${saved.endpoint}' vs '${endpoint}'). Try using a key other than '${key}' if you meant to execute a different request.`,
      });
    }
    if (saved.params !== params) {
      throw new ApiError(400, {
        type: "idempotency_error",
        message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
      });
    }
    return { status: saved.status, body: saved.body, originalRequest: saved.requestId };
  }

  /**
   * Keeps an answer once the endpoint ran. As with Stripe, requests refused before that (bad
   * parameters, missing objects: 400/404) keep nothing, so a corrected retry may reuse the key.
   */
  save(key: string, endpoint: string, params: string, answer: { status: number; body: string; requestId: string }): void {
    if (answer.status === 400 || answer.status === 404) return;
    this.saved.set(key, { endpoint, params, ...answer, at: Date.now() });
  }

  clear(): void {
    this.saved.clear();
  }
}
