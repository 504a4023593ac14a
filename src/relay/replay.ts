import type { PricedEndpoint } from "../catalog/catalog";
import type { StreamRenderer } from "../protocols/inbound/caller-protocol";
import { renderChunk, StreamAccount } from "./stream-account";

const encoder = new TextEncoder();

/**
 * A stored stream (canonical chunks, src/answer-cache/) rendered again for a caller: every chunk through
 * the same accounting and the caller protocol's renderer as a carrier's stream (src/relay/stream-relay.ts),
 * then the renderer's end. The renderers are pure functions of their state, so a replay is the same text a
 * live stream of these chunks would have been, written at once. Null when a stored chunk cannot be read
 * (the entry is then a miss: the carrier serves).
 */
export function replayStream(events: string[], renderer: StreamRenderer, endpoint: PricedEndpoint): { bytes: Uint8Array; account: StreamAccount } | null {
  const account = new StreamAccount(endpoint, endpoint.providerEntry.name, renderer.choices);
  let state = renderer.initial;
  let out = "";
  for (const data of events) {
    const rendered = renderChunk(account, renderer, state, { data, bytes: encoder.encode(data).byteLength });
    if ("status" in rendered) return null;
    state = rendered.state;
    out += rendered.text;
  }
  out += renderer.end(state, null, account);
  return { bytes: encoder.encode(out), account };
}
