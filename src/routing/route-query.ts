import type { PricedEndpoint } from "../catalog/catalog";
import type { PartTokens } from "../catalog/modalities";
import type { ProviderPreferences } from "../request/provider-preferences";
import type { Need } from "./request-fit";
import { metadataLevel } from "./routing-metadata";

/**
 * What routing takes of a request, whichever API it came in: the models asked for, the `provider`
 * preferences, the session, the output it wants, and what it needs of an endpoint. Each API builds it
 * from its own request (src/serve/chat-read.ts, src/serve/serve-embeddings.ts); routing reads nothing else.
 */
export type RouteQuery = {
  model: string | undefined;
  models: readonly string[] | undefined;
  provider: ProviderPreferences | null | undefined;
  /** The session as sent (`session_id`, else a session header); its length is checked when planned. */
  session: string | undefined;
  /** `X-OpenRouter-Metadata` as sent (an invalid value is refused when planned). */
  metadata: ReturnType<typeof metadataLevel>;
  /** The output modality the model must produce: a completion's text, or embeddings. */
  output: "text" | "embeddings";
  /** What the request needs of a model's endpoints, at that model's prices of media parts. */
  need: (partTokens: PartTokens) => Need;
  /** The parameter names it uses (`require_parameters`). */
  parameters: string[];
  /** What an endpoint would take otherwise than asked (`require_parameters` leaves it out). */
  adapted?: (endpoint: PricedEndpoint) => string[];
  /** The API's name of the completion cap, which a refusal of it names. */
  capField: string;
};

/** What a request's headers tell routing: its session (Claude Code and Codex name it in headers of their own) and the metadata level. */
export function routeHeaders(sessionId: string | undefined, headers: Headers): Pick<RouteQuery, "session" | "metadata"> {
  return {
    session: sessionId ?? headers.get("x-session-id") ?? headers.get("x-claude-code-session-id") ?? headers.get("session-id") ?? undefined,
    metadata: metadataLevel(headers),
  };
}
