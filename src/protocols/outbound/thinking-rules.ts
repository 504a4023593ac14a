import type { PricedEndpoint } from "../../catalog/catalog";
import type { ChatRequest } from "../../request/chat-request";
import { reasoningAsk } from "../../request/reasoning";

type Obj = Record<string, unknown>;

/*
 * What newer reasoning models changed on the wire, as the catalog declares it per endpoint
 * (src/catalog/schema.ts: `thinking_always_on`, `refuses_forced_tool_choice`), read the same way by every
 * carrier adapter; each adapter writes the result in its own protocol.
 */

/** Whether this endpoint thinks on this request: always (`thinking_always_on`), or because the caller asked. */
export function thinksOn(body: ChatRequest, endpoint: PricedEndpoint): boolean {
  return endpoint.thinking_always_on === true || reasoningAsk(body)?.on === true;
}

/** Whether the caller turned reasoning off on an endpoint that cannot: it goes at the carrier's lowest effort. */
export function reasoningOffRefused(body: ChatRequest, endpoint: PricedEndpoint): boolean {
  return endpoint.thinking_always_on === true && reasoningAsk(body)?.on === false;
}

/** A tool choice that forces a tool: `required`, or a named function. */
export function forcesTool(choice: unknown): boolean {
  return choice === "required" || (typeof choice === "object" && choice !== null && typeof ((choice as Obj).function as Obj | undefined)?.name === "string");
}

/**
 * Whether a forced tool choice goes as `auto`: the endpoint refuses forcing a tool while it thinks
 * (`refuses_forced_tool_choice`: the carrier's 400). The model still has the tools and is told nothing
 * else; the change is named in the answer's metadata, and `provider.require_parameters` routes around it.
 */
export function relaxesToolChoice(body: ChatRequest, endpoint: PricedEndpoint): boolean {
  return endpoint.refuses_forced_tool_choice === true && forcesTool(body.tool_choice) && thinksOn(body, endpoint);
}

/**
 * What this endpoint takes otherwise than asked, for the answer's metadata (`dropped_parameters`):
 * reasoning turned off on a model that always thinks; a forced tool choice it refuses while thinking.
 */
export function thinkingLeftOut(body: ChatRequest, endpoint: PricedEndpoint): string[] {
  const out: string[] = [];
  if (reasoningOffRefused(body, endpoint)) out.push("reasoning");
  if (relaxesToolChoice(body, endpoint)) out.push("tool_choice");
  return out;
}
