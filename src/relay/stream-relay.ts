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

/** Why the relay aborted the carrier: a limit of its own, named in the caller's error chunk. */
class RelayLimitExceeded extends Error {}
/** The caller left after the answer was whole, and the carrier's usage did not come within RELAY_USAGE_WAIT_MS. */
class UsageWaitOver extends Error {}

/**
 * Why a stream ended before the carrier finished it. `ours`: the relay ended it by a limit of its own
 * (duration, size, an event too large, the carrier's silence) — what was delivered is charged, as for a
 * caller who leaves; otherwise the carrier failed, and zero-completion insurance applies.
 */
type Failure = ChunkFailure & { ours: boolean };

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
 * goes away the upstream request is aborted — unless every choice had finished: then the carrier is
 * read on, for its usage only, for at most RELAY_USAGE_WAIT_MS.
 */
export function relayStream(call: CarrierCall, s: StreamSetup, clientSignal: AbortSignal): { readable: ReadableStream<Uint8Array>; outcome: Promise<Outcome> } {
  // workerd's native byte pipe: each write crosses into the runtime once, no JS stream machinery per chunk.
  const { readable, writable } = new IdentityTransformStream();
  const writer = writable.getWriter();
  const provider = s.endpoint.providerEntry.name;
  const { limits, renderer: chunks } = s;
  let cancelled = false;
  let sawDone = false;
  /** After the caller left once the answer was whole: reading on for the usage (bounded by `usageWait`), then whether that wait ran out. */
  let readOn: "reading" | "waited out" | null = null;
  let usageWait: ReturnType<typeof setTimeout> | undefined;
  // The caller going away must end the relay however it shows: the request signal, the writable side
  // erroring, or a write that the caller never drains. The relay, not the carrier call, decides what
  // that does to the carrier.
  call.detach();
  const callerGone = () => {
    if (cancelled) return;
    cancelled = true;
    writer.abort(new Error("caller gone")).catch(() => {}); // rejects a write still pending
    // Every choice finished: what the carrier bills is known only from its usage, which follows.
    if (chunks.finished >= returnedChoices(s.body) && chunks.usage === undefined && !sawDone) {
      readOn = "reading";
      usageWait = setTimeout(() => {
        readOn = "waited out";
        call.abort(new UsageWaitOver());
      }, limits.usageWaitMs);
    } else call.abort();
  };
  clientSignal.addEventListener("abort", callerGone, { once: true });
  if (clientSignal.aborted) callerGone();
  writer.closed.catch(callerGone);
  // A keep-alive goes out only between whole writes (the watchdog checks no write is under way).
  const keepalive = chunks.keepalive
    ? { pingMs: limits.pingMs, quiet: () => void (cancelled ? undefined : write(encoder.encode(chunks.keepalive!())).catch(callerGone)) }
    : null;
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
    let failure: Failure | null = null;
    /** A failure after every choice finished: the caller has the whole answer, so its stream ends normally. */
    let late: Failure | null = null;
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
        failure = { ...rewritten, ours: false };
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
    // Usually one write per read (stamped with the read's time); a huge event in bounded pieces. Once
    // the caller is gone nothing is written; a write that fails means it is.
    const send = (out: string): Promise<void> => {
      if (cancelled || !out) return Promise.resolve();
      return (out.length <= WRITE_PIECE ? write(encoder.encode(out), watchdog.lastReadAt) : writePieces(out)).catch(callerGone);
    };
    const writePieces = async (out: string): Promise<void> => {
      for (const piece of textPieces(out, WRITE_PIECE)) await write(encoder.encode(piece));
    };
    try {
      for (;;) {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read(new Uint8Array(buffer));
        } catch {
          if (!cancelled) failure = readFailure(call.signal.reason, provider);
          break;
        }
        watchdog.lastReadAt = Date.now();
        if (next.done) {
          await send(rewriteAll(parser.end()));
          if (!failure && !sawDone && chunks.finishReason === null)
            failure = { status: 502, message: `Carrier ${provider} ended the stream before finishing.`, ours: false };
          break;
        }
        received += next.value.byteLength;
        if (received > limits.maxStreamBytes) {
          failure = { status: 502, message: `Carrier ${provider}'s stream exceeded RELAY_MAX_STREAM_BYTES (${limits.maxStreamBytes} bytes).`, ours: true };
          break;
        }
        await send(rewriteAll(parser.push(next.value)));
        if (failure || sawDone) break;
        // Gone: nothing more to relay; read on only for the usage of a whole answer, until it comes.
        if (cancelled && (readOn === null || chunks.usage !== undefined)) break;
        if (parser.overflow) {
          failure = {
            status: 502,
            message: `Carrier ${provider} sent a stream event larger than RELAY_MAX_EVENT_BYTES (${limits.maxEventBytes} bytes).`,
            ours: true,
          };
          break;
        }
        buffer = next.value.buffer as ArrayBuffer; // the read transferred it: take it back
      }
      if (failure && chunks.finished >= returnedChoices(s.body)) {
        late = failure;
        failure = null;
      }
      if (carrierDone()) finishing = finishCarrier();
      else stopCarrier();
      if (!cancelled) {
        await write(encoder.encode(chunks.end(failure))); // a fresh buffer: written buffers may be transferred
        await writer.close();
        closed = true;
      }
    } catch {
      callerGone(); // the last write failed or never drained: the caller is gone
    } finally {
      watchdog.stop();
      clearTimeout(deadline);
      clearTimeout(usageWait);
      clientSignal.removeEventListener("abort", callerGone);
      if (!carrierDone()) stopCarrier();
      if (!closed) writer.abort().catch(() => {});
    }
    /** Nothing more is wanted from a carrier that did not fail: it sent [DONE], or the usage a departed caller's answer waited for. */
    function carrierDone(): boolean {
      return !failure && !late && (sawDone || (cancelled && chunks.usage !== undefined));
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
    return streamOutcome(s, { failure: failure as Failure | null, late: late as Failure | null, cancelled, readOn });
  };

  return { readable, outcome: run() };
}

/**
 * How a relayed stream ended, for the ledger and the record. The cost a usage event showed the caller is
 * the charge, whatever came after it. Otherwise: with the carrier's usage we charge what it reports;
 * without it (failure, disconnect, no usage) our estimate of what was delivered. Zero-completion
 * insurance: a carrier's error before the answer was whole, or no completion and no finish reason,
 * costs nothing; a stream the relay itself ended by a limit is charged for what it delivered, as a
 * caller's disconnect is.
 */
function streamOutcome(
  s: StreamSetup,
  end: { failure: Failure | null; late: Failure | null; cancelled: boolean; readOn: "reading" | "waited out" | null },
): Outcome {
  const { endpoint, renderer: chunks } = s;
  const { failure, late, cancelled } = end;
  const tokens = chunks.usage ?? estimatedUsage(s.body, endpoint.partTokens, chunks.output);
  return servedOutcome({
    provider: endpoint.providerEntry.name,
    status: failure ? failure.status : cancelled ? 499 : 200,
    tokens,
    charged: chunks.shown ?? charge(tokens, endpoint, chunks.finishReason, failure !== null && !failure.ours),
    usageSource: chunks.usage ? "carrier" : "estimate",
    finishReason: failure ? "error" : chunks.finishReason,
    errorMessage: failure
      ? failure.ours
        ? `${failure.message} What was delivered is charged.`
        : failure.message
      : late
        ? `${late.message} This was after the answer was complete: the caller's stream ended normally.`
        : cancelled
          ? leftMessage(end.readOn, chunks.usage !== undefined, s.limits.usageWaitMs)
          : null,
    firstTokenAt: chunks.firstTokenAt,
    upstreamId: chunks.upstreamId,
    cancelled,
  });
}

/** What the record says of a caller who left: mid-stream, or once the answer was whole (and whether the carrier's usage came after). */
function leftMessage(readOn: "reading" | "waited out" | null, usage: boolean, waitMs: number): string {
  if (readOn === null) return "The caller disconnected mid-stream.";
  const left = "The caller disconnected after the answer was complete;";
  if (usage) return `${left} the carrier's usage was read after it left.`;
  if (readOn === "waited out")
    return `${left} the carrier's usage did not come within RELAY_USAGE_WAIT_MS (${waitMs} ms): the estimate of what was delivered is charged.`;
  return `${left} the carrier's stream ended without its usage: the estimate of what was delivered is charged.`;
}

/** Why a carrier read failed: a relay limit or the carrier's silence (ours), or the connection (the carrier's). */
function readFailure(reason: unknown, provider: string): Failure {
  if (reason instanceof RelayLimitExceeded) return { status: 502, message: reason.message, ours: true };
  if (reason instanceof CarrierTimeout) return { status: 502, message: `Carrier ${provider} stopped sending (timeout).`, ours: true };
  return { status: 502, message: `The connection to carrier ${provider} was lost mid-stream.`, ours: false };
}
