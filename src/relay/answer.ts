import type { PricedEndpoint } from "../catalog/catalog";
import type { CarrierCall } from "../carriers/carrier-call";
import { CarrierTimeout } from "../carriers/carrier-call";
import { OversizedBody, readTextLimited } from "../carriers/attempts";
import { UnusableAnswer } from "../carriers/dispatch";
import type { CarrierProtocol } from "../protocols/outbound";
import type { CanonicalAnswer } from "../request/answer";
import type { ChatRequest } from "../request/chat-request";
import type { Served } from "../request/outcome";
import { readUsage } from "../request/usage";
import { estimatedUsage, OutputMeter } from "../request/token-estimate";
import { charge } from "../request/charge";

/** Largest non-stream carrier answer accepted, in bytes. */
export const MAX_COMPLETION_BYTES = 8 * 1024 * 1024;

/** Reads a carrier's non-stream answer (within the call's timeout) as the canonical answer; an unusable one lets dispatch try the next carrier. */
export async function readAnswer(call: CarrierCall, protocol: CarrierProtocol, body: ChatRequest): Promise<CanonicalAnswer> {
  const read = protocol.answer(await readCarrierJson(call, MAX_COMPLETION_BYTES, `${MAX_COMPLETION_BYTES} bytes`), body);
  if ("unusable" in read) throw new UnusableAnswer(read.unusable);
  return read.answer;
}

/** A carrier's whole JSON answer, read within the call's timeout and `maxBytes` (`limit` names it); too large or not JSON is unusable (the next carrier is tried). */
export async function readCarrierJson(call: CarrierCall, maxBytes: number, limit: string): Promise<unknown> {
  let text: string;
  try {
    text = await readTextLimited(call.response, maxBytes);
  } catch (err) {
    if (err instanceof OversizedBody) throw new UnusableAnswer(`the carrier's answer exceeded ${limit}`);
    if (call.signal.reason instanceof CarrierTimeout) throw call.signal.reason;
    throw err;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UnusableAnswer("the carrier answered with malformed JSON");
  }
}

/**
 * What a whole answer is charged and recorded as: the carrier's usage, else our estimate of the prompt
 * and of what it answered; zero-completion insurance applies (request/charge.ts).
 */
export function accountAnswer(body: ChatRequest, endpoint: PricedEndpoint, answer: CanonicalAnswer, servedAt: number): Served {
  const reported = readUsage(answer.usage);
  const first = answer.choices[0];
  const finishReason = isObject(first) && typeof first.finish_reason === "string" ? first.finish_reason : null;
  const tokens = reported ?? estimatedUsage(body, endpoint.partTokens, deliveredOutput(answer.choices));
  return {
    provider: endpoint.providerEntry.name,
    status: 200,
    tokens,
    charged: charge(tokens, endpoint, finishReason, false),
    usageSource: reported ? "carrier" : "estimate",
    finishReason,
    firstTokenAt: servedAt,
    upstreamId: typeof answer.id === "string" ? answer.id : null,
  };
}

/** What an answer's choices delivered, for the estimate (request/token-estimate.ts) when its carrier reported no usage. */
function deliveredOutput(choices: unknown[]): OutputMeter {
  const output = new OutputMeter();
  for (const choice of choices) if (isObject(choice) && isObject(choice.message)) output.addParsed(choice.message);
  return output;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
