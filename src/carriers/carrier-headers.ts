import type { PricedEndpoint } from "../catalog/catalog";
import { carrierProtocol } from "../protocols/outbound";

/** The carrier's request headers: its protocol's, and its key the way the carrier takes it (the catalog's `auth`, else the protocol's). */
export function carrierHeaders(endpoint: PricedEndpoint, key: string): Record<string, string> {
  const protocol = carrierProtocol(endpoint);
  const auth = endpoint.providerEntry.auth ?? protocol.defaultAuth;
  return { ...protocol.headers, ...(auth === "bearer" ? { authorization: `Bearer ${key}` } : { [auth]: key }) };
}
