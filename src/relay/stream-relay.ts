import type { PricedEndpoint } from "../catalog/catalog";
import type { CarrierCall } from "../carriers/carrier-call";
import { CarrierTimeout, carrierTimeoutMs } from "../carriers/carrier-call";
import type { RequestContext } from "../generations/request-context";
import { settle, type Outcome } from "../generations/settle";
import { costNano } from "../catalog/money";
import type { ChatRequest } from "../api/chat-request";
import { SseParser } from "./sse-parser";
import { ChunkRewriter, type ChunkFailure } from "./chunk-rewriter";
import { estimateTokens, promptText } from "./token-estimate";

const encoder = new TextEncoder();
const DONE = "data: [DONE]\n\n";
const READ_BUFFER_BYTES = 64 * 1024;


/**
 * Relays a carrier's SSE stream to the caller as it arrives, rewriting every chunk's id, model and
 * provider, adding `cost` to the usage chunk, and ending with `data: [DONE]`. A carrier failure after
 * the first byte ends the stream with an error chunk (`finish_reason: "error"`), never a clean end.
 * When the caller goes away the upstream request is aborted. The outcome is settled exactly once.
 */
export function relayStream(rc: RequestContext, body: ChatRequest, endpoint: PricedEndpoint, call: CarrierCall, clientSignal: AbortSignal): ReadableStream<Uint8Array> {
  // workerd's native byte pipe: each write crosses into the runtime once, no JS stream machinery per chunk.
  const { readable, writable } = new IdentityTransformStream();
  const writer = writable.getWriter();
  const provider = endpoint.providerEntry.name;
  const created = Math.floor(rc.startedAt / 1000);
  const chunks = new ChunkRewriter(rc.genId, rc.requestedModel, provider, endpoint);
  let lastChunkAt = Date.now();
  let cancelled = false;

  // The caller going away must stop the carrier at once and end the relay, however it shows: the
  // request signal, the writable side erroring, or a write that the caller never drains (then the
  // runtime may not tell us at all, and an awaited write would hang for good).
  const callerGone = () => {
    if (cancelled) return;
    cancelled = true;
    call.abort();
    writer.abort(new Error("caller gone")).catch(() => {}); // rejects a write still pending
  };
  clientSignal.addEventListener("abort", callerGone, { once: true });
  writer.closed.catch(callerGone);
  let writeSince: number | null = null;
  const write = async (bytes: Uint8Array) => {
    writeSince = Date.now();
    await writer.write(bytes);
    writeSince = null;
  };

  // One watchdog timer, re-armed lazily: a carrier silent too long, or a caller not reading too long.
  const idleMs = carrierTimeoutMs(rc.env);
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  const arm = (ms: number) => {
    watchdog = setTimeout(() => {
      const now = Date.now();
      if (writeSince !== null && now - writeSince >= idleMs) return callerGone();
      const idle = now - Math.max(lastChunkAt, writeSince ?? 0);
      if (writeSince === null && idle >= idleMs) return call.abort(new CarrierTimeout());
      arm(Math.max(1, idleMs - idle));
    }, ms);
  };
  arm(idleMs);

  const errorChunk = (f: ChunkFailure) =>
    `data: ${JSON.stringify({
        id: rc.genId,
        object: "chat.completion.chunk",
        created,
        model: rc.requestedModel,
        provider,
        error: { code: f.status, message: f.message },
        choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
      })}\n\n`;

  const run = async (): Promise<Outcome> => {
    // A BYOB read takes everything the carrier has sent so far, however many chunks: fewer, larger reads.
    const reader = call.response.body!.getReader({ mode: "byob" });
    let buffer = new ArrayBuffer(READ_BUFFER_BYTES);
    const decoder = new TextDecoder();
    const parser = new SseParser();
    let failure: ChunkFailure | null = null;
    let sawDone = false;
    // All events of one carrier read go to the caller in one write.
    const handle = async (events: string[]): Promise<boolean> => {
      let out = "";
      for (const data of events) {
        if (data === "[DONE]") {
          sawDone = true;
          continue;
        }
        const rewritten = chunks.rewrite(data);
        if (typeof rewritten !== "string") {
          failure = rewritten;
          break;
        }
        out += rewritten;
      }
      if (out) await write(encoder.encode(out));
      return failure === null;
    };
    try {
      for (;;) {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read(new Uint8Array(buffer));
        } catch {
          if (!cancelled)
            failure = {
              status: 502,
              message: call.signal.reason instanceof CarrierTimeout ? `Carrier ${provider} stopped sending (timeout).` : `The connection to carrier ${provider} was lost mid-stream.`,
            };
          break;
        }
        lastChunkAt = Date.now();
        if (next.done) {
          if (!(await handle(parser.end()))) break;
          if (!sawDone && chunks.finishReason === null) failure = { status: 502, message: `Carrier ${provider} ended the stream before finishing.` };
          break;
        }
        if (!(await handle(parser.push(decoder.decode(next.value, { stream: true }))))) break;
        buffer = next.value.buffer as ArrayBuffer; // the read transferred it: take it back
      }
      await write(encoder.encode((failure ? errorChunk(failure) : "") + DONE)); // a fresh buffer: written buffers may be transferred
      await writer.close();
    } catch {
      callerGone(); // a write failed or never drained: the caller is gone
    } finally {
      if (watchdog !== undefined) clearTimeout(watchdog);
      clientSignal.removeEventListener("abort", callerGone);
      if (cancelled || failure) {
        call.abort();
        reader.cancel().catch(() => {});
        writer.abort().catch(() => {});
      }
    }
    const f = failure as ChunkFailure | null;
    // With the carrier's usage we charge what it reports; without it (failure, disconnect, no usage) what was delivered.
    const tokens = chunks.usage ?? { promptTokens: estimateTokens(promptText(body)), completionTokens: chunks.deliveredTokens, reasoningTokens: 0 };
    return {
      provider,
      status: f ? f.status : cancelled ? 499 : 200,
      promptTokens: tokens.promptTokens,
      completionTokens: tokens.completionTokens,
      reasoningTokens: tokens.reasoningTokens,
      costNano: costNano(tokens.promptTokens, tokens.completionTokens, endpoint),
      finishReason: f ? "error" : chunks.finishReason,
      errorMessage: f ? f.message : cancelled ? "The caller disconnected mid-stream." : null,
      firstTokenAt: chunks.firstTokenAt,
      upstreamId: chunks.upstreamId,
      cancelled,
      usageSource: chunks.usage ? "carrier" : "estimate",
      insured: false,
    };
  };

  rc.waitUntil(run().then((outcome) => settle(rc, outcome)));
  return readable;
}
