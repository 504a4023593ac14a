import type { PricedEndpoint } from "../../src/catalog/catalog";
import type { SseEvent } from "../../src/http/sse-parser";
import type { ChunkFailure, StreamRenderer } from "../../src/protocols/inbound/caller-protocol";
import { renderChunk, StreamAccount } from "../../src/relay/stream-account";

/**
 * A renderer with the account the relay gives it (src/relay/stream-account.ts), fed as the relay feeds
 * them: each chunk read by the account, then rendered; the end rendered from what the account knows.
 */
export function accounted(renderer: StreamRenderer, endpoint: PricedEndpoint, provider = "Simulated") {
  const account = new StreamAccount(endpoint, provider, renderer.choices);
  return {
    account,
    rewrite: (event: SseEvent): string | ChunkFailure => renderChunk(account, renderer, event),
    keepalive: (): string => renderer.keepalive!(),
    end: (failure: ChunkFailure | null): string => renderer.end(failure, account),
    asyncStep: renderer.asyncStep,
  };
}
