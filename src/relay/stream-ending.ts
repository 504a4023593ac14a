import type { PricedEndpoint } from "../catalog/catalog";
import { CarrierTimeout } from "../carriers/carrier-call";
import type { ChatRequest } from "../request/chat-request";
import { servedOutcome, type Outcome } from "../request/outcome";
import { estimatedUsage } from "../request/token-estimate";
import { charge } from "../request/charge";
import type { ChunkFailure } from "../protocols/inbound/caller-protocol";
import type { StreamAccount } from "./stream-account";

/** Why the relay aborted the carrier: a limit of its own, named in the caller's error chunk. */
export class RelayLimitExceeded extends Error {}
/** The caller left after the answer was whole, and the carrier's usage did not come within RELAY_USAGE_WAIT_MS. */
export class UsageWaitOver extends Error {}

/**
 * How the carrier's side of a relayed stream ended. `done`: its `[DONE]`; `ended`: its body ended (after a
 * finish reason, or with the usage a departed caller's answer waited for); `caller-gone`: the relay stopped
 * reading because the caller left; `failed`: the carrier failed (an error event, a malformed chunk, the
 * connection lost, the body ended unfinished) — zero-completion insurance applies; `cut`: the relay ended it
 * by a limit of its own (RELAY_MAX_STREAM_MS, RELAY_MAX_STREAM_BYTES, RELAY_MAX_EVENT_BYTES, or the carrier's
 * silence past CARRIER_TIMEOUT_MS) — what was delivered is charged, as for a caller who leaves. A failure
 * or cut after every choice had finished is `whole`: the caller has the whole answer, its stream ends normally.
 */
export type Ending =
  { kind: "streaming" } | { kind: "done" } | { kind: "ended" } | { kind: "caller-gone" } | { kind: "failed" | "cut"; failure: ChunkFailure; whole: boolean };

/** Whether the caller is still there; once gone, whether the relay reads on for a whole answer's usage, and whether that wait ran out. */
export type Caller = "here" | "gone" | "reading on" | "waited out";

/** The failure the caller's stream ends with (its error event); null when it ends normally. */
export function streamFailure(ending: Ending): ChunkFailure | null {
  return (ending.kind === "failed" || ending.kind === "cut") && !ending.whole ? ending.failure : null;
}

/** Why a carrier read failed: a relay limit or the carrier's silence (cut), or the connection (the carrier's failure). */
export function readFailure(reason: unknown, provider: string): Ending {
  if (reason instanceof RelayLimitExceeded) return { kind: "cut", failure: { status: 502, message: reason.message }, whole: false };
  if (reason instanceof CarrierTimeout)
    return { kind: "cut", failure: { status: 502, message: `Carrier ${provider} stopped sending (timeout).` }, whole: false };
  return { kind: "failed", failure: { status: 502, message: `The connection to carrier ${provider} was lost mid-stream.` }, whole: false };
}

/**
 * How a relayed stream ended, for the ledger and the record: the one place its Outcome is built. The cost a
 * usage event showed the caller is the charge, whatever came after it. Otherwise: with the carrier's usage
 * we charge what it reports; without it (failure, disconnect, no usage) our estimate of what was delivered.
 * Zero-completion insurance: a carrier's error before the answer was whole, or no completion and no finish
 * reason, costs nothing; a stream the relay itself cut by a limit is charged for what it delivered, as a
 * caller's disconnect is.
 */
export function streamOutcome(
  ending: Ending,
  caller: Caller,
  account: StreamAccount,
  s: { body: ChatRequest; endpoint: PricedEndpoint; usageWaitMs: number },
): Outcome {
  const failure = streamFailure(ending);
  const late = (ending.kind === "failed" || ending.kind === "cut") && ending.whole ? ending.failure : null;
  const cut = ending.kind === "cut";
  const cancelled = caller !== "here";
  const tokens = account.usage ?? estimatedUsage(s.body, s.endpoint.partTokens, account.output);
  return servedOutcome({
    provider: s.endpoint.providerEntry.name,
    status: failure ? failure.status : cancelled ? 499 : 200,
    tokens,
    charged: account.shown ?? charge(tokens, s.endpoint, account.finishReason, failure !== null && !cut),
    usageSource: account.usage ? "carrier" : "estimate",
    finishReason: failure ? "error" : account.finishReason,
    errorMessage: failure
      ? cut
        ? `${failure.message} What was delivered is charged.`
        : failure.message
      : late
        ? `${late.message} This was after the answer was complete: the caller's stream ended normally.`
        : cancelled
          ? leftMessage(caller, account.usage !== undefined, s.usageWaitMs)
          : null,
    firstTokenAt: account.firstTokenAt,
    upstreamId: account.upstreamId,
    cancelled,
  });
}

/** What the record says of a caller who left: mid-stream, or once the answer was whole (and whether the carrier's usage came after). */
function leftMessage(caller: Caller, usage: boolean, waitMs: number): string {
  if (caller === "gone") return "The caller disconnected mid-stream.";
  const left = "The caller disconnected after the answer was complete;";
  if (usage) return `${left} the carrier's usage was read after it left.`;
  if (caller === "waited out")
    return `${left} the carrier's usage did not come within RELAY_USAGE_WAIT_MS (${waitMs} ms): the estimate of what was delivered is charged.`;
  return `${left} the carrier's stream ended without its usage: the estimate of what was delivered is charged.`;
}
