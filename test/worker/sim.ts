import { env } from "cloudflare:test";

export type SimRecord = {
  tag: string | null;
  carrier: string;
  body: Record<string, any>;
  /** The wire protocol the request came in (openai-chat, anthropic-messages, gemini) and its path. */
  protocol: string;
  path: string;
  headers: { authorization: boolean; x_api_key: boolean; x_goog_api_key: boolean; anthropic_version: boolean; anthropic_beta: string | null };
  /** The first 16 hex digits of the SHA-256 of the credential the carrier received (simulator/credentials.ts). */
  credential_sha256: string | null;
  outcome: string;
  chunks_sent: number;
  connection: number;
  received_mono_ms: number;
  first_write_mono_ms: number | null;
};

/** What the carrier simulator received for requests tagged `[sim tag=T]`. */
export async function simRequests(tag: string, wait?: { ms: number; until?: string }): Promise<SimRecord[]> {
  const query = wait ? `&wait_ms=${wait.ms}${wait.until ? `&until=${wait.until}` : ""}` : "";
  const res = await fetch(`${env.CARRIER_BASE_URL_OVERRIDE}/__sim/requests?tag=${encodeURIComponent(tag)}${query}`);
  return ((await res.json()) as { requests: SimRecord[] }).requests;
}

export const uniqueTag = () => `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
