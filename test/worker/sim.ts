import { env } from "cloudflare:test";

export type SimRecord = { tag: string | null; carrier: string; body: Record<string, unknown>; outcome: string; chunks_sent: number };

/** What the carrier simulator received for requests tagged `[sim tag=T]`. */
export async function simRequests(tag: string): Promise<SimRecord[]> {
  const res = await fetch(`${env.CARRIER_BASE_URL_OVERRIDE}/__sim/requests?tag=${encodeURIComponent(tag)}`);
  return ((await res.json()) as { requests: SimRecord[] }).requests;
}

export const uniqueTag = () => `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
