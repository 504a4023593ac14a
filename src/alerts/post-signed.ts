import { SIGNATURE_HEADER, signatureHeader } from "../webhooks/sign";
import type { AlertEvent } from "./events";

export type PostResult = { ok: boolean; status: number | null; error: string | null };

/**
 * One signed POST of an event: the JSON body, `Switchyard-Signature: t=<timestamp>,v1=<hex>` over
 * `<timestamp>.<body>`, the event's id and type as headers too. A 2xx answer delivers it; any other status
 * (redirects are not followed), no answer within `timeoutMs`, or a network error fails the attempt.
 */
export async function postSigned(
  fetcher: typeof fetch,
  url: string,
  secret: string,
  event: AlertEvent,
  timestamp: number,
  timeoutMs: number,
): Promise<PostResult> {
  const body = JSON.stringify(event);
  try {
    const res = await fetcher(url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": "Switchyard-Webhooks/1",
        [SIGNATURE_HEADER]: await signatureHeader(secret, timestamp, body),
        "Switchyard-Event-Id": event.id,
        "Switchyard-Event-Type": event.type,
      },
      body,
    });
    await res.body?.cancel(); // only the status matters
    return res.ok ? { ok: true, status: res.status, error: null } : { ok: false, status: res.status, error: `the endpoint answered ${res.status}` };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return { ok: false, status: null, error: timedOut ? `no answer within ${timeoutMs} ms` : "the endpoint could not be reached" };
  }
}
