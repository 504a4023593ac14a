/**
 * The request fields that are the router's, not a carrier's: read (or refused) here and never sent
 * upstream, so a carrier neither sees our routing choices nor rejects fields it does not know.
 */
export const ROUTER_FIELDS = [
  // From the contract's ChatRequest schema (openrouter-openapi.yaml, /chat/completions):
  "provider", // ProviderPreferences: which carriers, in which order
  "models", // ChatModelNames: fallback models
  "route", // DeprecatedRoute: alias of provider.sort.partition
  "session_id", // sticky routing key
  "plugins", // the router's plugins (web search, moderation, response healing, …)
  "trace", // TraceConfig: observability metadata for broadcast destinations
  "debug", // ChatDebugOptions: echo of the upstream body
  "stop_server_tools_when", // stop conditions of the router's server-tool loop
  // OpenRouter request fields its documentation names that this contract version no longer lists:
  "usage", // usage accounting {include}; usage is always included
  "transforms", // prompt transforms such as "middle-out"
  "preset", // a saved preset's slug
  // Ours: the caller's `anthropic-beta` flags (/messages reads the header; chat may send the field), which go to
  // Anthropic carriers as that header, only the flags the carrier takes (its catalog `betas`).
  "anthropic_beta",
] as const;

export type RouterField = (typeof ROUTER_FIELDS)[number];

/**
 * The carrier's view of a request body: a shallow copy without the router's fields, and `user`, when
 * given, replaced by its hash (src/routing/user-hash.ts); the caller's object is left as it was.
 */
export function carrierView(body: Record<string, unknown>, userHash: string | null): Record<string, unknown> {
  const view = { ...body };
  for (const field of ROUTER_FIELDS) delete view[field];
  if (userHash === null) delete view.user;
  else view.user = userHash;
  return view;
}
