import type { PricedEndpoint } from "../../src/catalog/catalog";
import type { SseEvent } from "../../src/http/sse-parser";
import type { ChunkFailure, StreamRenderer } from "../../src/protocols/inbound/caller-protocol";
import { renderChunk, StreamAccount } from "../../src/relay/stream-account";

/**
 * A renderer with the account the relay gives it (src/relay/stream-account.ts), fed as the relay feeds
 * them: each chunk read by the account, then rendered from the renderer's state, which each call gives
 * back; the end rendered from what the account knows.
 */
export function accounted<S>(renderer: StreamRenderer<S>, endpoint: PricedEndpoint, provider = "Simulated") {
  const account = new StreamAccount(endpoint, provider, renderer.choices);
  let state = renderer.initial;
  return {
    account,
    rewrite: (event: SseEvent): string | ChunkFailure => {
      const rendered = renderChunk(account, renderer, state, event);
      if ("status" in rendered) return rendered;
      state = rendered.state;
      return rendered.text;
    },
    keepalive: (): string => {
      const rendered = renderer.keepalive!(state);
      state = rendered.state;
      return rendered.text;
    },
    end: (failure: ChunkFailure | null): string => renderer.end(state, failure, account),
    asyncStep: renderer.asyncStep,
  };
}
