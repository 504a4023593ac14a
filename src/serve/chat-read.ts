import type { ChatRequest } from "../request/chat-request";
import { ApiError } from "../request/errors";
import { namedUnknown } from "../request/unknown-fields";
import type { CallerProtocol } from "../protocols/inbound";
import { thinkingLeftOut } from "../protocols/outbound/thinking-rules";
import { requestNeed } from "../routing/request-fit";
import { requestParameters } from "../routing/request-parameters";
import { routeHeaders } from "../routing/route-query";
import type { RequestFacts } from "./request-facts";
import type { Read } from "./stages";
import { withPreset } from "../presets/resolve-preset";
import { isPresetModel } from "../presets/preset-config";

/** A chat-family request as read: the canonical request, and what its answer repeats and names. */
export type ChatRead = Read & {
  body: ChatRequest;
  /** The body's size, which the hold prices. */
  bytes: number;
  /** What the caller's answer repeats of its request (CallerProtocol.read). */
  echo: Record<string, unknown>;
  /** The tools the request declared that no carrier here runs, left out: named in the answer's header and metadata. */
  droppedTools: string[];
  /** The request's fields the router does not know, passed on as sent: named in the answer's header and metadata. */
  unknownFields: string[];
};

/** The caller's request in its protocol as the canonical request, with the route query it makes; anything but a refusal of its own is a 400. */
export async function readChat(facts: RequestFacts, protocol: CallerProtocol, req: Request): Promise<ChatRead> {
  let read: Awaited<ReturnType<CallerProtocol["read"]>>;
  try {
    read = await protocol.read(req, facts.sealer);
  } catch (err) {
    throw err instanceof ApiError ? err : new ApiError(400, "The request body could not be read.");
  }
  const { bytes, echo, dropped, unknown } = read;
  // `model: "@preset/<slug>"`: the preset's version fills what the request leaves unset, before routing.
  const { body, preset } = isPresetModel(read.body.model)
    ? await withPreset(facts.env.DB, facts.caller.accountId, read.body, facts.settings.PRESET_CACHE_MS)
    : { body: read.body, preset: null };
  return {
    body,
    bytes,
    echo: echo ?? {},
    droppedTools: dropped ?? [],
    unknownFields: namedUnknown(unknown ?? [], facts.settings.UNKNOWN_PARAMETERS_NAMED),
    externalUser: body.user ?? null,
    preset,
    stream: body.stream === true,
    query: {
      model: body.model,
      models: body.models,
      provider: body.provider,
      ...routeHeaders(body.session_id, facts.headers),
      output: "text",
      need: (partTokens) => requestNeed(body, partTokens),
      parameters: requestParameters(body),
      adapted: (e) => thinkingLeftOut(body, e),
      capField: protocol.capField(body),
    },
  };
}
