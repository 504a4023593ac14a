import type { PricedEndpoint } from "../catalog/catalog";
import type { CarrierCall } from "../carriers/carrier-call";
import { CarrierTimeout } from "../carriers/carrier-call";
import type { ChatRequest } from "../request/chat-request";
import { servedOutcome, type Outcome } from "../request/outcome";
import { estimatedUsage } from "../request/token-estimate";
import { returnedChoices } from "../request/billed-fields";
import { charge } from "../request/charge";
import { SseParser, type SseEvent } from "../http/sse-parser";
import { drainBody } from "../http/drain-body";
import type { ChunkFailure, StreamRenderer } from "../protocols/inbound/caller-protocol";
import type { RelayLimits } from "./relay-limits";
import { textPieces } from "./text-pieces";
import { Watchdog } from "./watchdog";

const encoder = new TextEncoder();
const READ_BUFFER_BYTES = 64 * 1024;
/** Largest single write to the caller, in UTF-16 units: bounds the bytes held per write. */
const WRITE_PIECE = 1024 * 1024;

/** Why the relay aborted the carrier: a configured limit, named in the caller's error chunk. */
class RelayLimitExceeded extends Error {}

export type StreamSetup = {
  body: ChatRequest;
  endpoint: PricedEndpoint;
  /** Renders the canonical chunks in the caller's protocol, and keeps the stream's accounting. */
  renderer: StreamRenderer;
  /** Turns the carrier's events into canonical chunks; null when they already are. */
  decoder: ((event: SseEvent) => SseEvent[]) | null;
  limits: RelayLimits;
  /** The longest silence of the carrier, and the longest a write to the caller may wait (CARRIER_TIMEOUT_MS). */
  idleMs: number;
  /** When the request arrived (RELAY_MAX_STREAM_MS counts from then). */
  startedAt: number;
};

/**
 * Relays a carrier's SSE stream to the caller as it arrives, through the caller protocol's renderer,
 * and resolves `outcome` once the carrier is done with. A carrier failure after the first byte, or a
 * stream past a relay limit, ends the stream with an error event, never a clean end — unless every
 * choice had finished: the caller has the whole answer, so its stream ends normally and the outcome
 * keeps the late error. The carrier's `[DONE]` ends the caller's stream at once; the carrier's body may
 * then end within RELAY_AFTER_DONE_MS (its connection is reused), else it is cut off. When the caller
 * goes away the upstream request is aborted.
 */
export function relayStream(call: CarrierCall, s: StreamSetup, clientSignal: AbortSignal): { readable: ReadableStream<Uint8Array>; outcome: Promise<Outcome> } {
  // workerd's native byte pipe: each write crosses into the runtime once, no JS stream machinery per chunk.
  const { readable, writable } = new IdentityTransformStream();
  const writer = writable.getWriter();
  const provider = s.endpoint.providerEntry.name;
  const { limits, renderer: chunks } = s;
  let cancelled = false;
  // The caller going away must stop the carrier at once and end the relay, however it shows: the
  // request signal, the writable side erroring, or a write that the caller never drains.
  const callerGone = () => {
    if (cancelled) return;
    cancelled = true;
    call.abort();
    writer.abort(new Error("caller gone")).catch(() => {}); // rejects a write still pending
  };
  clientSignal.addEventListener("abort", callerGone, { once: true });
  writer.closed.catch(callerGone);
  // A keep-alive goes out only between whole writes (the watchdog checks no write is under way).
  const keepalive = chunks.keepalive ? { pingMs: limits.pingMs, quiet: () => void write(encoder.encode(chunks.keepalive!())).catch(callerGone) } : null;
  const watchdog = new Watchdog(s.idleMs, () => call.abort(new CarrierTimeout()), callerGone, keepalive);
  // Every write to the caller goes through here, so the watchdog sees a write never drained.
  // A plain promise chain, not an async function: this runs once per carrier read.
  const wrote = () => {
    watchdog.writeSince = null;
  };
  const write = (bytes: Uint8Array, now = Date.now()): Promise<void> => {
    watchdog.writeSince = now;
    return writer.write(bytes).then(wrote);
  };
  const deadline = setTimeout(
    () => call.abort(new RelayLimitExceeded(`The stream from carrier ${provider} exceeded RELAY_MAX_STREAM_MS (${limits.maxStreamMs} ms).`)),
    Math.max(0, s.startedAt + limits.maxStreamMs - Date.now()),
  );

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
    const rewriteOne = (event: SseEvent): string | null => {
      if (event.data === "[DONE]") {
        sawDone = true;
        return null;
      }
      const rewritten = chunks.rewrite(event);
      if (typeof rewritten !== "string") {
        failure = rewritten;
        return null;
      }
      return rewritten;
    };
    // All events of one carrier read go to the caller in one write; nothing after the carrier's [DONE].
    const rewriteAll = (events: SseEvent[]): string => {
      let out = "";
      for (const event of events) {
        if (s.decoder === null) {
          const text = rewriteOne(event);
          if (text === null) break;
          out += text;
          continue;
        }
        for (const canonical of s.decoder(event)) {
          const text = rewriteOne(canonical);
          if (text === null) return out;
          out += text;
        }
      }
      return out;
    };
    // Usually one write per read (stamped with the read's time); a huge event in bounded pieces.
    const writeText = (out: string): Promise<void> => (out.length <= WRITE_PIECE ? write(encoder.encode(out), watchdog.lastReadAt) : writePieces(out));
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
        watchdog.lastReadAt = Date.now();
        if (next.done) {
          const out = rewriteAll(parser.end());
          if (out) await writeText(out);
          if (!failure && !sawDone && chunks.finishReason === null)
            failure = { status: 502, message: `Carrier ${provider} ended the stream before finishing.` };
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
      if (failure && chunks.finished >= returnedChoices(s.body)) {
        late = failure;
        failure = null;
      }
      if (failure || late) stopCarrier();
      else if (sawDone) finishing = finishCarrier();
      await write(encoder.encode(chunks.end(failure))); // a fresh buffer: written buffers may be transferred
      await writer.close();
      closed = true;
    } catch {
      callerGone(); // a write failed or never drained: the caller is gone
    } finally {
      watchdog.stop();
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
    // Done once the carrier is done with too (at once, unless it lingers): its connection is back in the pool by then.
    await finishing;
    return streamOutcome(s, { failure: failure as ChunkFailure | null, late: late as ChunkFailure | null, cancelled });
  };

  return { readable, outcome: run() };
}

/**
 * How a relayed stream ended, for the ledger and the record. The cost a usage event showed the caller is
 * the charge, whatever came after it. Otherwise: with the carrier's usage we charge what it reports;
 * without it (failure, disconnect, no usage) our estimate of what was delivered. Zero-completion
 * insurance: an error before the answer was whole, or no completion and no finish reason, costs nothing.
 */
function streamOutcome(s: StreamSetup, end: { failure: ChunkFailure | null; late: ChunkFailure | null; cancelled: boolean }): Outcome {
  const { endpoint, renderer: chunks } = s;
  const { failure, late, cancelled } = end;
  const tokens = chunks.usage ?? estimatedUsage(s.body, endpoint.partTokens, chunks.output);
  return servedOutcome({
    provider: endpoint.providerEntry.name,
    status: failure ? failure.status : cancelled ? 499 : 200,
    tokens,
    charged: chunks.shown ?? charge(tokens, endpoint, chunks.finishReason, failure !== null),
    usageSource: chunks.usage ? "carrier" : "estimate",
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
  });
}

/** Why a carrier read failed: a relay limit, the idle timeout, or the connection. */
function readFailure(reason: unknown, provider: string): string {
  if (reason instanceof RelayLimitExceeded) return reason.message;
  if (reason instanceof CarrierTimeout) return `Carrier ${provider} stopped sending (timeout).`;
  return `The connection to carrier ${provider} was lost mid-stream.`;
}
