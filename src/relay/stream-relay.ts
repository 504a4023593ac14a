import type { PricedEndpoint } from "../catalog/catalog";
import type { CarrierCall } from "../carriers/carrier-call";
import { CarrierTimeout, carrierTimeoutMs } from "../carriers/carrier-call";
import type { RequestContext } from "../serve/request-context";
import { settle, type Outcome } from "../serve/settle";
import type { ChatRequest } from "../request/chat-request";
import { SseParser, type SseEvent } from "./sse-parser";
import { ChunkRewriter, type ChunkFailure } from "../protocols/inbound/openai-chat/chunk-rewriter";
import { estimatePromptTokens } from "../request/token-estimate";
import { returnedChoices } from "../request/billed-fields";
import { charge } from "../request/charge";
import { relayLimits } from "./relay-limits";
import { textPieces } from "./text-pieces";
import { answerMetadata } from "../serve/answer-metadata";
import { drainBody } from "../http/drain-body";

const encoder = new TextEncoder();
const DONE = "data: [DONE]\n\n";
const READ_BUFFER_BYTES = 64 * 1024;
/** Largest single write to the caller, in UTF-16 units: bounds the bytes held per write. */
const WRITE_PIECE = 1024 * 1024;

/** Why the relay aborted the carrier: a configured limit, named in the caller's error chunk. */
class RelayLimitExceeded extends Error {}

/**
 * Relays a carrier's SSE stream to the caller as it arrives, rewriting every chunk's id, model and
 * provider, adding `cost` to the usage chunk, and ending with `data: [DONE]`. A carrier failure after
 * the first byte, or a stream past a relay limit, ends the stream with an error chunk
 * (`finish_reason: "error"`), never a clean end — unless every choice had finished: the caller has the
 * whole answer, so its stream ends normally and the record keeps the late error. The carrier's `[DONE]` ends the caller's stream at once;
 * the carrier's body may then end within RELAY_AFTER_DONE_MS (its connection is reused), else it is cut
 * off. When the caller goes away the upstream request is aborted. The outcome is settled exactly once.
 */
export function relayStream(rc: RequestContext, body: ChatRequest, endpoint: PricedEndpoint, call: CarrierCall, clientSignal: AbortSignal): ReadableStream<Uint8Array> {
  // workerd's native byte pipe: each write crosses into the runtime once, no JS stream machinery per chunk.
  const { readable, writable } = new IdentityTransformStream();
  const writer = writable.getWriter();
  const provider = endpoint.providerEntry.name;
  const created = Math.floor(rc.startedAt / 1000);
  const limits = relayLimits(rc.env);
  const chunks = new ChunkRewriter(rc.genId, rc.model, provider, endpoint);
  /** Choices the carrier streams (`n`): the answer is whole once each has finished. */
  const choices = returnedChoices(body);
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
  // Every write to the caller goes through here: `writeSince` lets the watchdog see a write never drained.
  // A plain promise chain, not an async function: this runs once per carrier read.
  let writeSince: number | null = null;
  const wrote = () => {
    writeSince = null;
  };
  const write = (bytes: Uint8Array, now = Date.now()): Promise<void> => {
    writeSince = now;
    return writer.write(bytes).then(wrote);
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
  const deadline = setTimeout(
    () => call.abort(new RelayLimitExceeded(`The stream from carrier ${provider} exceeded RELAY_MAX_STREAM_MS (${limits.maxStreamMs} ms).`)),
    Math.max(0, rc.startedAt + limits.maxStreamMs - Date.now()),
  );

  const errorChunk = (f: ChunkFailure) =>
    `data: ${JSON.stringify({
        id: rc.genId,
        object: "chat.completion.chunk",
        created,
        model: rc.model,
        provider,
        error: { code: f.status, message: f.message },
        choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
      })}\n\n`;
  // Asked-for routing metadata rides in a chunk of its own, the last before the end (or the error chunk).
  const metadataChunk = () => {
    const extra = answerMetadata(rc, endpoint);
    if (!extra.openrouter_metadata) return "";
    return `data: ${JSON.stringify({ id: rc.genId, object: "chat.completion.chunk", created, model: rc.model, provider, choices: [], ...extra })}\n\n`;
  };

  const run = async (): Promise<Outcome> => {
    // A BYOB read takes everything the carrier has sent so far, however many chunks: fewer, larger reads.
    const reader = call.response.body!.getReader({ mode: "byob" });
    let buffer = new ArrayBuffer(READ_BUFFER_BYTES);
    const parser = new SseParser(limits.maxEventBytes);
    let failure: ChunkFailure | null = null;
    /** A failure after every choice finished: the caller has the whole answer, so its stream ends normally. */
    let late: ChunkFailure | null = null;
    let sawDone = false;
    let closed = false;
    let received = 0;
    let finishing: Promise<void> | null = null;
    // All events of one carrier read go to the caller in one write; nothing after the carrier's [DONE].
    const rewriteAll = (events: SseEvent[]): string => {
      let out = "";
      for (const event of events) {
        if (event.data === "[DONE]") {
          sawDone = true;
          break;
        }
        const rewritten = chunks.rewrite(event);
        if (typeof rewritten !== "string") {
          failure = rewritten;
          break;
        }
        out += rewritten;
      }
      return out;
    };
    // Usually one write per read (stamped with the read's time); a huge event in bounded pieces.
    const writeText = (out: string): Promise<void> => (out.length <= WRITE_PIECE ? write(encoder.encode(out), lastChunkAt) : writePieces(out));
    const writePieces = async (out: string): Promise<void> => {
      for (const piece of textPieces(out, WRITE_PIECE)) await write(encoder.encode(piece));
    };
    try {
      for (;;) {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read(new Uint8Array(buffer));
        } catch {
          if (!cancelled) failure = { status: 502, message: readFailure(call.signal.reason, provider) };
          break;
        }
        lastChunkAt = Date.now();
        if (next.done) {
          const out = rewriteAll(parser.end());
          if (out) await writeText(out);
          if (!failure && !sawDone && chunks.finishReason === null) failure = { status: 502, message: `Carrier ${provider} ended the stream before finishing.` };
          break;
        }
        received += next.value.byteLength;
        if (received > limits.maxStreamBytes) {
          failure = { status: 502, message: `Carrier ${provider}'s stream exceeded RELAY_MAX_STREAM_BYTES (${limits.maxStreamBytes} bytes).` };
          break;
        }
        const out = rewriteAll(parser.push(next.value));
        if (out) await writeText(out);
        if (failure || sawDone) break;
        if (parser.overflow) {
          failure = { status: 502, message: `Carrier ${provider} sent a stream event larger than RELAY_MAX_EVENT_BYTES (${limits.maxEventBytes} bytes).` };
          break;
        }
        buffer = next.value.buffer as ArrayBuffer; // the read transferred it: take it back
      }
      if (failure && chunks.finished >= choices) {
        late = failure;
        failure = null;
      }
      if (failure || late) stopCarrier();
      else if (sawDone) finishing = finishCarrier();
      await write(encoder.encode(metadataChunk() + (failure ? errorChunk(failure) : "") + DONE)); // a fresh buffer: written buffers may be transferred
      await writer.close();
      closed = true;
    } catch {
      callerGone(); // a write failed or never drained: the caller is gone
    } finally {
      if (watchdog !== undefined) clearTimeout(watchdog);
      clearTimeout(deadline);
      clientSignal.removeEventListener("abort", callerGone);
      if (cancelled || failure || late) stopCarrier();
      if (!closed) writer.abort().catch(() => {});
    }
    function stopCarrier() {
      reader.cancel().catch(() => {});
      call.abort();
    }
    // After [DONE] nothing more is relayed. A carrier that then ends its body (the usual case) keeps its
    // connection for the next request; one that lingers or keeps sending is cut off (bounded in time and bytes).
    async function finishCarrier() {
      reader.releaseLock();
      if (!(await drainBody(call.response.body!, limits.maxEventBytes, limits.afterDoneMs))) call.abort();
    }
    // Settled once the carrier is done with too (at once, unless it lingers): its connection is back in the pool by then.
    await finishing;
    return streamOutcome(failure as ChunkFailure | null, late as ChunkFailure | null);
  };

  // The cost a usage chunk showed the caller is the charge, whatever came after it. Otherwise: with the
  // carrier's usage we charge what it reports; without it (failure, disconnect, no usage) our estimate of
  // what was delivered. Zero-completion insurance: an error before the answer was whole, or no completion
  // and no finish reason, costs nothing.
  const streamOutcome = (failure: ChunkFailure | null, late: ChunkFailure | null): Outcome => {
    const tokens = chunks.usage ?? {
      promptTokens: estimatePromptTokens(body, endpoint.partTokens),
      completionTokens: chunks.output.completionTokens(endpoint.partTokens.image),
      reasoningTokens: chunks.output.reasoningTokens(endpoint.partTokens.image),
    };
    const { costNano, insured } = chunks.shown ?? charge(tokens, endpoint, chunks.finishReason, failure !== null);
    return {
      provider,
      status: failure ? failure.status : cancelled ? 499 : 200,
      promptTokens: tokens.promptTokens,
      completionTokens: tokens.completionTokens,
      reasoningTokens: tokens.reasoningTokens,
      costNano,
      finishReason: failure ? "error" : chunks.finishReason,
      errorMessage: failure
        ? failure.message
        : late
          ? `${late.message} This was after the answer was complete: the caller's stream ended normally.`
          : cancelled
            ? "The caller disconnected mid-stream."
            : null,
      firstTokenAt: chunks.firstTokenAt,
      upstreamId: chunks.upstreamId,
      cancelled,
      usageSource: chunks.usage ? "carrier" : "estimate",
      insured,
    };
  };

  rc.waitUntil(run().then((outcome) => settle(rc, outcome)));
  return readable;
}

/** Why a carrier read failed: a relay limit, the idle timeout, or the connection. */
function readFailure(reason: unknown, provider: string): string {
  if (reason instanceof RelayLimitExceeded) return reason.message;
  if (reason instanceof CarrierTimeout) return `Carrier ${provider} stopped sending (timeout).`;
  return `The connection to carrier ${provider} was lost mid-stream.`;
}
