import type { PricedEndpoint } from "../catalog/catalog";
import type { CarrierCall } from "../carriers/carrier-call";
import { CarrierTimeout } from "../carriers/carrier-call";
import type { ChatRequest } from "../request/chat-request";
import type { Outcome } from "../request/outcome";
import { returnedChoices } from "../request/billed-fields";
import { SseParser, type SseEvent } from "../http/sse-parser";
import { drainBody } from "../http/drain-body";
import type { StreamRenderer } from "../protocols/inbound/caller-protocol";
import type { RelayLimits } from "./relay-limits";
import { textPieces } from "./text-pieces";
import { Watchdog } from "./watchdog";
import { renderChunk, StreamAccount } from "./stream-account";
import { readFailure, RelayLimitExceeded, streamFailure, streamOutcome, UsageWaitOver, type Caller, type Ending } from "./stream-ending";

const encoder = new TextEncoder();
const READ_BUFFER_BYTES = 64 * 1024;
/** Largest single write to the caller, in UTF-16 units: bounds the bytes held per write. */
const WRITE_PIECE = 1024 * 1024;

export type StreamSetup = {
  body: ChatRequest;
  endpoint: PricedEndpoint;
  /** Renders the canonical chunks in the caller's protocol (the relay keeps the stream's accounting: ./stream-account.ts). */
  renderer: StreamRenderer;
  /** Turns the carrier's events into canonical chunks; null when they already are. */
  decoder: ((event: SseEvent) => SseEvent[]) | null;
  limits: RelayLimits;
  /** The longest silence of the carrier, and the longest a write to the caller may wait (CARRIER_TIMEOUT_MS). */
  idleMs: number;
  /** When the request arrived (RELAY_MAX_STREAM_MS counts from then). */
  startedAt: number;
  /** Sees every canonical chunk before it is rendered (the answer cache keeps them: src/serve/answer-cache-stage.ts); absent when none does. */
  tap?: (data: string) => void;
};

/**
 * Relays a carrier's SSE stream to the caller as it arrives, through the caller protocol's renderer, keeps
 * its accounting (a StreamAccount reads every chunk first) and resolves `outcome` once the carrier is done
 * with, from how the stream ended (an explicit `Ending`, ./stream-ending.ts). A carrier failure after the
 * first byte, or a stream past a relay limit, ends the stream with an error event, never a clean end —
 * unless every choice had finished: the caller has the whole answer, so its stream ends normally and the
 * outcome keeps the late error. The carrier's `[DONE]` ends the caller's stream at once; the carrier's body
 * may then end within RELAY_AFTER_DONE_MS (its connection is reused), else it is cut off. When the caller
 * goes away the upstream request is aborted — unless every choice had finished: then the carrier is read
 * on, for its usage only, for at most RELAY_USAGE_WAIT_MS.
 */
export function relayStream(call: CarrierCall, s: StreamSetup, clientSignal: AbortSignal): { readable: ReadableStream<Uint8Array>; outcome: Promise<Outcome> } {
  // workerd's native byte pipe: each write crosses into the runtime once, no JS stream machinery per chunk.
  const { readable, writable } = new IdentityTransformStream();
  const writer = writable.getWriter();
  const provider = s.endpoint.providerEntry.name;
  const { limits, renderer } = s;
  const account = new StreamAccount(s.endpoint, provider, renderer.choices);
  /** The renderer's state: its functions are pure, each call gives the next one back (set only where a call renders). */
  let rendering = renderer.initial;
  let ending: Ending = { kind: "streaming" };
  let caller: Caller = "here";
  let usageWait: ReturnType<typeof setTimeout> | undefined;
  // The caller going away must end the relay however it shows: the request signal, the writable side
  // erroring, or a write that the caller never drains. The relay, not the carrier call, decides what
  // that does to the carrier.
  call.detach();
  const callerGone = () => {
    if (caller !== "here") return;
    caller = "gone";
    writer.abort(new Error("caller gone")).catch(() => {}); // rejects a write still pending
    // Every choice finished: what the carrier bills is known only from its usage, which follows.
    if (account.finished >= returnedChoices(s.body) && account.usage === undefined && ending.kind !== "done") {
      caller = "reading on";
      usageWait = setTimeout(() => {
        caller = "waited out";
        call.abort(new UsageWaitOver());
      }, limits.usageWaitMs);
    } else call.abort();
  };
  clientSignal.addEventListener("abort", callerGone, { once: true });
  if (clientSignal.aborted) callerGone();
  writer.closed.catch(callerGone);
  // A keep-alive goes out only between whole writes (the watchdog checks no write is under way).
  const ping = renderer.keepalive;
  const keepalive = ping
    ? {
        pingMs: limits.pingMs,
        quiet: () => {
          if (caller !== "here") return;
          const { state, text } = ping(rendering);
          rendering = state;
          write(encoder.encode(text)).catch(callerGone);
        },
      }
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
  /** One carrier limit the relay ended the stream by. */
  const cut = (message: string): Ending => ({ kind: "cut", failure: { status: 502, message }, whole: false });

  const run = async (): Promise<Outcome> => {
    // A BYOB read takes everything the carrier has sent so far, however many chunks: fewer, larger reads.
    const reader = call.response.body!.getReader({ mode: "byob" });
    let buffer = new ArrayBuffer(READ_BUFFER_BYTES);
    const parser = new SseParser(limits.maxEventBytes);
    let closed = false;
    let received = 0;
    let finishing: Promise<void> | null = null;
    /** One canonical event as the caller's text; null once the stream ends at it (the carrier's [DONE] or failure). */
    const rewriteOne = (event: SseEvent): string | null => {
      if (event.data === "[DONE]") {
        ending = { kind: "done" };
        return null;
      }
      s.tap?.(event.data);
      const rendered = renderChunk(account, renderer, rendering, event);
      if ("status" in rendered) {
        ending = { kind: "failed", failure: rendered, whole: false };
        return null;
      }
      rendering = rendered.state;
      return rendered.text;
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
      if (caller !== "here" || !out) return Promise.resolve();
      return (out.length <= WRITE_PIECE ? write(encoder.encode(out), watchdog.lastReadAt) : writePieces(out)).catch(callerGone);
    };
    const writePieces = async (out: string): Promise<void> => {
      for (const piece of textPieces(out, WRITE_PIECE)) await write(encoder.encode(piece));
    };
    try {
      while (ending.kind === "streaming") {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read(new Uint8Array(buffer));
        } catch {
          ending = caller !== "here" ? { kind: "caller-gone" } : readFailure(call.signal.reason, provider);
          break;
        }
        watchdog.lastReadAt = Date.now();
        if (next.done) {
          await send(rewriteAll(parser.end()));
          if (ending.kind === "streaming")
            ending =
              account.finishReason === null
                ? { kind: "failed", failure: { status: 502, message: `Carrier ${provider} ended the stream before finishing.` }, whole: false }
                : { kind: "ended" };
          break;
        }
        received += next.value.byteLength;
        if (received > limits.maxStreamBytes) {
          ending = cut(`Carrier ${provider}'s stream exceeded RELAY_MAX_STREAM_BYTES (${limits.maxStreamBytes} bytes).`);
          break;
        }
        await send(rewriteAll(parser.push(next.value)));
        if (ending.kind !== "streaming") break;
        // Gone: nothing more to relay; read on only for the usage of a whole answer, until it comes.
        if (caller === "gone" || (caller !== "here" && account.usage !== undefined)) {
          ending = { kind: "caller-gone" };
          break;
        }
        if (parser.overflow) {
          ending = cut(`Carrier ${provider} sent a stream event larger than RELAY_MAX_EVENT_BYTES (${limits.maxEventBytes} bytes).`);
          break;
        }
        buffer = next.value.buffer as ArrayBuffer; // the read transferred it: take it back
      }
      if ((ending.kind === "failed" || ending.kind === "cut") && account.finished >= returnedChoices(s.body)) ending = { ...ending, whole: true };
      if (carrierDone()) finishing = finishCarrier();
      else stopCarrier();
      if (caller === "here") {
        await write(encoder.encode(renderer.end(rendering, streamFailure(ending), account))); // a fresh buffer: written buffers may be transferred
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
      if (ending.kind === "done") return true;
      return ending.kind !== "failed" && ending.kind !== "cut" && caller !== "here" && account.usage !== undefined;
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
    return streamOutcome(ending, caller, account, { body: s.body, endpoint: s.endpoint, usageWaitMs: limits.usageWaitMs });
  };

  return { readable, outcome: run() };
}
