import type { PricedEndpoint } from "../catalog/catalog";
import type { CarrierCall } from "../carriers/carrier-call";
import { CarrierTimeout } from "../carriers/carrier-call";
import { OversizedBody, readTextLimited } from "../carriers/attempts";
import { UnusableAnswer } from "../carriers/dispatch";
import type { RequestContext } from "../serve/request-context";
import type { Outcome } from "../serve/settle";
import { nanoToUsd } from "../catalog/money";
import { readUsage } from "../request/usage";
import { estimatePromptTokens, OutputMeter } from "../request/token-estimate";
import { charge } from "../request/charge";
import type { ChatRequest } from "../request/chat-request";
import { answerMetadata } from "../serve/answer-metadata";

/** Largest non-stream carrier answer accepted, in bytes. */
export const MAX_COMPLETION_BYTES = 8 * 1024 * 1024;

type CarrierCompletion = { id?: unknown; choices?: unknown; usage?: unknown } & Record<string, unknown>;

/** Reads a carrier's non-stream answer (within the call's timeout); unusable answers let dispatch fall back. */
export async function readCompletion(call: CarrierCall): Promise<CarrierCompletion> {
  let text: string;
  try {
    text = await readTextLimited(call.response, MAX_COMPLETION_BYTES);
  } catch (err) {
    if (err instanceof OversizedBody) throw new UnusableAnswer(`the carrier's answer exceeded ${MAX_COMPLETION_BYTES} bytes`);
    if (call.signal.reason instanceof CarrierTimeout) throw call.signal.reason;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UnusableAnswer("the carrier answered with malformed JSON");
  }
  if (typeof json !== "object" || json === null || !Array.isArray((json as CarrierCompletion).choices))
    throw new UnusableAnswer("the carrier's answer is not a chat completion");
  return json as CarrierCompletion;
}

/** The caller's completion (generation id, requested model, carrier name, usage with cost) and its outcome. */
export function finishCompletion(rc: RequestContext, body: ChatRequest, endpoint: PricedEndpoint, upstream: CarrierCompletion, servedAt: number) {
  const reported = readUsage(upstream.usage);
  const choices = upstream.choices as unknown[];
  const first = choices[0];
  const finishReason = isObject(first) && typeof first.finish_reason === "string" ? first.finish_reason : null;
  const usage = reported ?? estimateUsage(body, endpoint, choices);
  const { costNano: cost, insured } = charge(usage, endpoint, finishReason, false);
  const provider = endpoint.providerEntry.name;
  const completion = {
    ...upstream,
    id: rc.genId,
    object: "chat.completion",
    created: typeof upstream.created === "number" ? upstream.created : Math.floor(rc.startedAt / 1000),
    model: rc.model,
    provider,
    // The contract requires the field (null allowed): the carrier's when it gives one.
    system_fingerprint: typeof upstream.system_fingerprint === "string" ? upstream.system_fingerprint : null,
    usage: {
      ...(typeof upstream.usage === "object" && upstream.usage !== null ? upstream.usage : {}),
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.promptTokens + usage.completionTokens,
      cost: nanoToUsd(cost),
    },
    ...answerMetadata(rc, endpoint),
  };
  const outcome: Outcome = {
    provider,
    status: 200,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    reasoningTokens: usage.reasoningTokens,
    costNano: cost,
    finishReason,
    errorMessage: null,
    firstTokenAt: servedAt,
    upstreamId: typeof upstream.id === "string" ? upstream.id : null,
    cancelled: false,
    usageSource: reported ? "carrier" : "estimate",
    insured,
  };
  return { completion, outcome };
}

/** The token estimate (token-estimate.ts) of an answer whose carrier reported no usage. */
function estimateUsage(body: ChatRequest, endpoint: PricedEndpoint, choices: unknown[]) {
  const output = new OutputMeter();
  for (const choice of choices) if (isObject(choice) && isObject(choice.message)) output.addParsed(choice.message);
  return {
    promptTokens: estimatePromptTokens(body, endpoint.partTokens),
    completionTokens: output.completionTokens(endpoint.partTokens.image),
    reasoningTokens: output.reasoningTokens(endpoint.partTokens.image),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
