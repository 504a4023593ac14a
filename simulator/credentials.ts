// What the simulator keeps of the credential a request presented — never the credential itself: a short
// SHA-256 fingerprint, so tests can tell which key reached the carrier (an account's own key or the
// platform's: docs/byok.md) — and the credentials it refuses on purpose.
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Refusal } from "./wire";

/** The credential in whichever header the carrier's protocol sends it (Bearer, x-api-key, x-goog-api-key). */
function credential(req: IncomingMessage): string | null {
  const bearer = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ""))?.[1];
  const other = req.headers["x-api-key"] ?? req.headers["x-goog-api-key"];
  return bearer ?? (typeof other === "string" ? other : null);
}

/** The first 16 hex digits of the credential's SHA-256; null when none came. */
export function credentialFingerprint(req: IncomingMessage): string | null {
  const c = credential(req);
  return c === null ? null : createHash("sha256").update(c).digest("hex").slice(0, 16);
}

/**
 * A credential `sim-refuse-<status>-…` (401, 403 or 429) is refused with that status, as a carrier refuses a
 * revoked or rate-limited key — quoting the key, as some carriers do (the router must not pass it on).
 */
export function refusedCredential(req: IncomingMessage): Refusal | null {
  const c = credential(req) ?? "";
  const m = /^sim-refuse-(401|403|429)-/.exec(c);
  return m ? { status: Number(m[1]), message: `Incorrect API key provided: ${c} (the simulator refuses it: HTTP ${m[1]})` } : null;
}
