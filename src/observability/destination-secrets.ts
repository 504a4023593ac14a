import type { Settings } from "../settings";
import type { ObservabilityDestination } from "../db/schema";
import { secretBox, type SecretBox } from "../webhooks/secret-box";

/**
 * A destination's secrets at rest (docs/observability.md, "Secrets"): its headers (a collector's credentials)
 * and a webhook's signing secret must be sent as given, so they cannot be hashes; they are sealed as budget
 * alert endpoints' secrets are (src/webhooks/secret-box.ts: AES-256-GCM under REASONING_SEAL_KEY), bound to the
 * destination's id, so a row copied to another destination does not open. What the API shows comes from
 * hints stored beside them (the masks), never from opening them.
 */

/** The headers column of a destination without headers: nothing to seal, so it needs no sealing key. */
export const NO_HEADERS = "{}";

export type DestinationSecrets = { headers: Record<string, string>; signingSecret: string | null };
/** The columns a destination's secrets are stored in. */
export type SealedSecrets = Pick<ObservabilityDestination, "headersSealed" | "signingSecretSealed" | "headerHints" | "secretHint">;

/** The box of the deployment's sealing secrets (current first, earlier ones only open); null without REASONING_SEAL_KEY. */
export function destinationBox(s: Pick<Settings, "REASONING_SEAL_KEY" | "REASONING_SEAL_KEYS_PREVIOUS">): SecretBox | null {
  return secretBox(s.REASONING_SEAL_KEY === undefined ? [] : [s.REASONING_SEAL_KEY, ...s.REASONING_SEAL_KEYS_PREVIOUS]);
}

/** A secret as shown: its first and last four characters, or stars when it is too short to show any. */
export function maskSecret(value: string): string {
  return value.length >= 12 ? `${value.slice(0, 4)}...${value.slice(-4)}` : "****";
}

/** The associated data of a destination's seals: its id, in a namespace of its own (alert endpoints' ids are `we_…`). */
const boundTo = (destinationId: string) => `observability destination ${destinationId}`;

/** Whether anything needs sealing (a webhook's secret, any header): a deployment without a sealing key refuses those. */
export const needsSealing = (s: DestinationSecrets) => s.signingSecret !== null || Object.keys(s.headers).length > 0;

/** Seals the secrets to the destination's id, with the hints shown in their place. `box` is needed only when `needsSealing`. */
export async function sealSecrets(box: SecretBox | null, destinationId: string, s: DestinationSecrets): Promise<SealedSecrets> {
  const seal = (plain: string) => {
    if (!box) throw new Error("a destination's secret cannot be sealed without REASONING_SEAL_KEY");
    return box.seal(plain, boundTo(destinationId));
  };
  const hasHeaders = Object.keys(s.headers).length > 0;
  return {
    headersSealed: hasHeaders ? await seal(JSON.stringify(s.headers)) : NO_HEADERS,
    signingSecretSealed: s.signingSecret === null ? null : await seal(s.signingSecret),
    headerHints: JSON.stringify(Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k, maskSecret(v)]))),
    secretHint: s.signingSecret === null ? null : maskSecret(s.signingSecret),
  };
}

/** The hints: header name → masked value. */
export const headerHints = (d: Pick<ObservabilityDestination, "headerHints">) => JSON.parse(d.headerHints) as Record<string, string>;

/**
 * Opens a destination's secrets; null when they do not open (no key opens them any more, or the row was
 * copied from another destination). Rows written before sealing hold them in clear (a JSON object, a
 * `whsec_` secret): read as they are, and `legacy` says so (the caller seals them).
 */
export async function openSecrets(box: SecretBox | null, d: ObservabilityDestination): Promise<(DestinationSecrets & { legacy: boolean }) | null> {
  const open = async (text: string) => (box ? box.open(text, boundTo(d.id)) : null);
  const clearHeaders = d.headersSealed.startsWith("{");
  const clearSecret = d.signingSecretSealed?.startsWith("whsec_") ?? false;
  const headersJson = clearHeaders ? d.headersSealed : await open(d.headersSealed);
  const signingSecret = d.signingSecretSealed === null || clearSecret ? d.signingSecretSealed : await open(d.signingSecretSealed);
  if (headersJson === null || (d.signingSecretSealed !== null && signingSecret === null)) return null;
  return {
    headers: JSON.parse(headersJson) as Record<string, string>,
    signingSecret,
    legacy: (clearHeaders && d.headersSealed !== NO_HEADERS) || clearSecret,
  };
}

/** A destination's config as shown (the API, the console): header values and the signing secret by their stored masks, nothing opened. */
export function shownConfig(d: ObservabilityDestination) {
  const hints = headerHints(d);
  const shownHeaders = Object.keys(hints).length ? { headers: hints } : {};
  if (d.type === "webhook") return { url: d.endpoint, method: d.method, ...shownHeaders, signing_secret: d.secretHint ?? maskSecret("") };
  return { endpoint: d.endpoint, encoding: d.encoding, ...shownHeaders };
}
