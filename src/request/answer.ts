/**
 * The canonical answer the request layer works on, whatever protocol a carrier speaks or a caller
 * reads: an OpenAI chat completion (`choices`, OpenAI's `usage`), and, streamed, OpenAI chat completion
 * chunks, one per SSE `data:` payload (`SseEvent`, src/http/sse-parser.ts), the carrier's usage in the
 * last chunk before `[DONE]`. A carrier protocol turns its own answer and events into these; a caller
 * protocol renders these as its own. For OpenAI on both sides both are the identity, so a stream's
 * chunks are relayed without being parsed (the chunk rewriter's fast path).
 */
export type CanonicalAnswer = { id?: unknown; choices: unknown[]; usage?: unknown; created?: unknown; system_fingerprint?: unknown } & Record<string, unknown>;

/** The canonical answer, or why a carrier's answer cannot be one (the next carrier is then tried). */
export type AnswerOrUnusable = { answer: CanonicalAnswer } | { unusable: string };
