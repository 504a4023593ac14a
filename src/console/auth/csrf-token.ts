import { sha256Hex } from "../http/encoding";

/**
 * The CSRF token a form carries: derived from a secret only the browser's HttpOnly cookie holds (the
 * session token, or the pre-session token for sign-in and sign-up). Pages render it; `requireCsrf`
 * checks it. Kept apart from the middleware so pages can render it without importing the checker.
 */
export const CSRF_FIELD = "_csrf";

export function csrfToken(seed: string): Promise<string> {
  return sha256Hex(`switchyard-csrf:${seed}`);
}
