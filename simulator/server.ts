// The carrier simulator: one HTTP server that plays every upstream carrier, so tests,
// `npm start` and benchmarks run offline. Node-only; never part of the Worker bundle.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { setTimeout as sleepTimer } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { errorJson, isRecord, listen, readBody, sendJson, type Json } from "./http";
import { listOutages, listProfiles, resetProfile, setOutage, setProfile } from "./controls";
import { lastUserText, parseDirectives, type Directives } from "./directives";
import { Outages } from "./outages";
import { Profiles, type ProfileMode } from "./profiles";
import { countRequestTokens, planCompletion, type PartAllowances } from "./tokens";
import { PromptCache } from "./prompt-cache";
import { plannedCall } from "./tool-calls";
import type { Exchange, Normalized, ProtocolName, Refusal, Wire } from "./wire";
import { openAiWire } from "./openai-wire";
import { openAiResponsesWire } from "./openai-responses-wire";
import { anthropicWire, readCountTokens } from "./anthropic-wire";
import { geminiWire } from "./gemini-wire";
import { billedMedia, pdfOfPages, UnfetchableMedia, type MediaRates } from "./media";
import { rulesFromEndpoint, rulesOf, type ModelRules } from "./model-rules";
import { credentialFingerprint, refusedCredential } from "./credentials";
import { geminiEmbeddingsAnswer, openAiEmbeddingsAnswer, readGeminiEmbeddings, readOpenAiEmbeddings } from "./embeddings";

export interface SimulatorOptions {
  /** 0 (the default) picks an ephemeral port. */
  port?: number;
  host?: string;
  /** Default stream pace in tokens per second for every carrier (replaces the profiles' pace). */
  tps?: number;
  /** "default" (the default): each carrier slug has its own small first-byte delay and pace. "off": none. */
  profiles?: ProfileMode;
  /** Where to find which upstream models reason and what an image costs; defaults to the repo's catalog.json. */
  catalogPath?: string;
}

export interface Simulator {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** "pending" while the response is in flight; "hang" while a `[sim hang]` holds the socket. */
export type Outcome = "pending" | "hang" | "completed" | "aborted" | "reset" | "error";

export interface RequestRecord {
  tag: string | null;
  carrier: string;
  /** The protocol the request came in, and its path (never its query). */
  protocol: ProtocolName;
  path: string;
  body: unknown;
  /** Only whether each credential header was present (the simulator never keeps credentials); `anthropic-beta`'s value (not a secret). */
  headers: { authorization: boolean; x_api_key: boolean; x_goog_api_key: boolean; anthropic_version: boolean; anthropic_beta: string | null };
  /** The first 16 hex digits of the SHA-256 of the credential presented (simulator/credentials.ts), null when none: which key came, not the key. */
  credential_sha256: string | null;
  outcome: Outcome;
  /** Body writes: SSE events (including [DONE]) for streams, 1 for any other body. */
  chunks_sent: number;
  /** The TCP connection it came on, numbered from 1 in the order accepted: equal numbers = a reused connection. */
  connection: number;
  /**
   * When the request had arrived (its body read), and when the first byte of its answer (stream or whole) was handed to the socket
   * (null before that, and for error answers): ms on the machine's monotonic clock (`process.hrtime`), so a
   * client's own `process.hrtime` times compare with them (the bench splits time to first byte with these).
   */
  received_mono_ms: number;
  first_write_mono_ms: number | null;
}

/** The machine's monotonic clock in ms: the same clock in every process, unlike `performance.now()`. */
function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

const MAX_RECORDS = 10_000;
const MAX_WAIT_MS = 30_000;
const DEFAULT_CATALOG = fileURLToPath(new URL("../catalog.json", import.meta.url));

/** Received requests, newest last, with a way to wait until their outcomes are final. */
class RequestLog {
  private readonly records: RequestRecord[] = [];
  private readonly listeners = new Set<() => void>();

  add(record: RequestRecord): RequestRecord {
    this.records.push(record);
    if (this.records.length > MAX_RECORDS) this.records.shift();
    this.changed();
    return record;
  }

  /** Moves a record to a new outcome unless it already has a final one. */
  settle(record: RequestRecord, outcome: Outcome): void {
    if (record.outcome !== "pending" && record.outcome !== "hang") return;
    record.outcome = outcome;
    this.changed();
  }

  find(tag: string | null): RequestRecord[] {
    return tag === null ? [...this.records] : this.records.filter((r) => r.tag === tag);
  }

  /** Resolves once `done()` holds or after `ms`; re-checked on every change. */
  waitFor(done: () => boolean, ms: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const check = () => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, ms);
      this.listeners.add(check);
    });
  }

  /** Releases every waiter (used on shutdown so no timer outlives the server). */
  release(): void {
    for (const l of [...this.listeners]) l();
    this.listeners.clear();
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }
}

/** What the simulator reads from the catalog, by upstream model id. */
interface CatalogFacts {
  /** Carrier slugs of the catalog's endpoints, listed by `GET /__sim/profiles`. */
  carriers: Set<string>;
  /** Upstream models with `supports_reasoning: true`. */
  reasoning: Set<string>;
  /** Endpoints (`carrier\nupstream model`) with `reasoning_beyond_cap: true`: reasoning is billed on top of the cap. */
  reasoningBeyondCap: Set<string>;
  /** Tokens one media part costs: the model's `image_tokens`, `file_tokens`, `audio_tokens`, `video_tokens`. */
  partTokens: Map<string, Partial<PartAllowances>>;
  /** What parts billed by their size cost: the model's `file_page_tokens`, `audio_tokens_per_second`. */
  mediaRates: Map<string, MediaRates>;
  /** Each endpoint's (`carrier\nupstream model`) context length: a longer prompt is refused, as carriers do. */
  contextLength: Map<string, number>;
  /** What newer reasoning models refuse, by upstream model (the catalog's `thinking_always_on`, …: simulator/model-rules.ts). */
  rules: Map<string, ModelRules>;
}

const ALLOWANCE_FIELDS = { image: "image_tokens", file: "file_tokens", audio: "audio_tokens", video: "video_tokens" } as const;

/** The catalog's facts about upstream models; none if it is unreadable. */
function loadCatalogFacts(path: string): CatalogFacts {
  const facts: CatalogFacts = {
    carriers: new Set(),
    reasoning: new Set(),
    reasoningBeyondCap: new Set(),
    partTokens: new Map(),
    mediaRates: new Map(),
    contextLength: new Map(),
    rules: new Map(),
  };
  let catalog: unknown;
  try {
    catalog = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return facts; // No catalog: only the name heuristics and defaults apply.
  }
  const models = isRecord(catalog) && Array.isArray(catalog.models) ? (catalog.models as unknown[]) : [];
  for (const m of models) {
    const endpoints = isRecord(m) && Array.isArray(m.endpoints) ? (m.endpoints as unknown[]) : [];
    const allowances: Partial<PartAllowances> = {};
    for (const [kind, field] of Object.entries(ALLOWANCE_FIELDS)) {
      const n = isRecord(m) ? nonNegativeInt(m[field]) : undefined;
      if (n !== undefined) allowances[kind as keyof PartAllowances] = n;
    }
    const rates: MediaRates = {
      filePageTokens: (isRecord(m) ? nonNegativeInt(m.file_page_tokens) : undefined) ?? null,
      audioTokensPerSecond: (isRecord(m) ? nonNegativeInt(m.audio_tokens_per_second) : undefined) ?? null,
    };
    for (const e of endpoints) {
      if (isRecord(e) && typeof e.provider === "string") facts.carriers.add(e.provider);
      if (!isRecord(e) || typeof e.upstream_model !== "string") continue;
      if (e.supports_reasoning === true) facts.reasoning.add(e.upstream_model);
      const rules = rulesFromEndpoint(e);
      if (rules) facts.rules.set(e.upstream_model, rules);
      if (e.reasoning_beyond_cap === true && typeof e.provider === "string") facts.reasoningBeyondCap.add(`${e.provider}\n${e.upstream_model}`);
      facts.partTokens.set(e.upstream_model, allowances);
      facts.mediaRates.set(e.upstream_model, rates);
      const context = nonNegativeInt(e.context_length);
      if (context !== undefined && typeof e.provider === "string") facts.contextLength.set(`${e.provider}\n${e.upstream_model}`, context);
    }
  }
  return facts;
}

function isReasoningModel(model: string, catalogIds: Set<string>): boolean {
  return catalogIds.has(model) || model.includes("reason") || model.endsWith("-thinking");
}

/** Waits `ms`; false when the client went away first (the timer is cancelled). */
async function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return !signal.aborted;
  // At least `ms` on the monotonic clock the request log uses: a timer counts from the event loop's cached
  // time, which can be up to a millisecond before this call, so it may fire that much early.
  const until = monotonicMs() + ms;
  try {
    for (let left = ms; left > 0; left = until - monotonicMs()) await sleepTimer(Math.ceil(left), undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes one chunk and waits until it is flushed to the socket: this both respects
 * backpressure and lets a reset happen exactly after the chunks the client can read.
 */
function write(res: ServerResponse, chunk: string, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted || res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
    res.write(chunk, (err) => {
      signal.removeEventListener("abort", onAbort);
      resolve(!err);
    });
  });
}

function nonNegativeInt(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

function positiveInt(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 ? v : undefined;
}

interface Context {
  log: RequestLog;
  catalog: CatalogFacts;
  profiles: Profiles;
  outages: Outages;
  /** Each accepted socket's number. */
  connections: WeakMap<Socket, number>;
  /** The carriers' prompt caches. */
  cache: PromptCache;
}

/** Where one answer is written: the response, its log record, and the client's signal. */
interface Sink {
  res: ServerResponse;
  record: RequestRecord;
  log: RequestLog;
  signal: AbortSignal;
}

async function answerJson(x: Exchange, wire: Wire, sink: Sink): Promise<void> {
  const full = wire.answerJson(x);
  // Cutting the JSON in half always loses the closing brace: guaranteed invalid.
  const text = x.directives.malformed ? full.slice(0, Math.floor(full.length / 2)) : full;
  const { resetAfter } = x.directives;
  if (resetAfter !== undefined) {
    // Promise the full length, deliver half, then drop the connection.
    sink.res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
    sink.record.first_write_mono_ms = monotonicMs();
    const written = await write(sink.res, text.slice(0, Math.floor(text.length / 2)), sink.signal);
    if (written) sink.record.chunks_sent = 1;
    sink.log.settle(sink.record, "reset");
    sink.res.socket?.destroy();
    return;
  }
  sink.record.chunks_sent = 1;
  sink.record.first_write_mono_ms = monotonicMs();
  sink.log.settle(sink.record, "completed");
  sendJson(sink.res, 200, text);
}

// Junk a tolerant SSE client must skip: a comment, a blank line, a data-less event, a stray line.
const JUNK = [": ping\n\n", "\n", "event: foo\n\n", "this line has no data field\n\n"] as const;

async function answerStream(x: Exchange, wire: Wire, sink: Sink, tps: number | undefined): Promise<void> {
  sink.res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  const interval = tps === undefined ? 0 : 1000 / tps;
  const events = wire.streamEvents(x);
  const { resetAfter, garbage } = x.directives;
  // Timers cannot wait under a millisecond: at thousands of tokens/s the owed time is slept in
  // whole-millisecond steps, several tokens per step. At ≥ 1 ms per token it is one sleep per token.
  let owedMs = 0;
  for (const [i, event] of events.entries()) {
    if (event.token && interval > 0) {
      owedMs += interval;
      if (owedMs >= 1) {
        if (!(await sleep(owedMs, sink.signal))) return;
        owedMs = 0;
      }
    }
    if (event.usage && x.directives.usageDelayMs !== undefined && !(await sleep(x.directives.usageDelayMs, sink.signal))) return;
    if (i === 0) sink.record.first_write_mono_ms = monotonicMs();
    if (garbage && i > 0 && !(await write(sink.res, JUNK[i % JUNK.length]!, sink.signal))) return;
    if (!(await write(sink.res, event.text, sink.signal))) return;
    sink.record.chunks_sent++;
    if (resetAfter !== undefined && sink.record.chunks_sent >= resetAfter) break;
  }
  if (resetAfter !== undefined) {
    // Dropping the socket before the terminating event makes the body end in an error.
    sink.log.settle(sink.record, "reset");
    sink.res.socket?.destroy();
    return;
  }
  if (x.directives.linger) return; // the stream is whole, the connection stays open: "aborted" once the client closes it
  sink.log.settle(sink.record, "completed");
  sink.res.end();
}

/** Fails a request taken by an outage: its status with the protocol's error body, or a reset for status 0. */
function failOutage(req: IncomingMessage, res: ServerResponse, record: RequestRecord, carrier: string, status: number, log: RequestLog, wire: Wire): void {
  if (status === 0) {
    log.settle(record, "reset");
    req.socket.resetAndDestroy();
    return;
  }
  record.chunks_sent = 1;
  log.settle(record, "error");
  sendJson(res, status, wire.errorBody(status, `simulated outage: ${status} from ${carrier}`));
}

/** The prompt tokens read from and written to the cache: the directives' figures, else the carrier's prompt cache. */
function cacheUse(ctx: Context, wire: Wire, carrier: string, n: Normalized, d: Directives, promptTokens: number): { read: number; write: number } {
  let read: number;
  let write: number;
  if (d.cacheRead !== undefined || d.cacheWrite !== undefined) {
    read = d.cacheRead ?? 0;
    write = wire.reportsCacheWrites ? (d.cacheWrite ?? 0) : 0;
  } else if (wire.reportsCacheWrites) ({ read, write } = ctx.cache.explicit(`${carrier}\n${n.model}`, n.breakpoints));
  else {
    read = wire.implicitStep === null ? 0 : ctx.cache.implicit(`${carrier}\n${n.model}`, n.implicitPrefixes, wire.implicitStep);
    write = 0;
  }
  read = Math.min(read, promptTokens);
  return { read, write: Math.min(write, promptTokens - read) };
}

/** The log's record of a request just read: what came in, and only whether each credential header was there. */
function newRecord(req: IncomingMessage, ctx: Context, carrier: string, wire: Wire, pathname: string): RequestRecord {
  const beta = req.headers["anthropic-beta"];
  return {
    tag: null,
    carrier,
    protocol: wire.name,
    path: pathname,
    body: null,
    headers: {
      authorization: req.headers.authorization !== undefined,
      x_api_key: req.headers["x-api-key"] !== undefined,
      x_goog_api_key: req.headers["x-goog-api-key"] !== undefined,
      anthropic_version: req.headers["anthropic-version"] !== undefined,
      anthropic_beta: typeof beta === "string" ? beta : null,
    },
    credential_sha256: credentialFingerprint(req),
    outcome: "pending",
    chunks_sent: 0,
    connection: ctx.connections.get(req.socket) ?? 0,
    received_mono_ms: monotonicMs(),
    first_write_mono_ms: null,
  };
}

/**
 * A request's body and its new log record; `body` undefined when it is not JSON. Null when the body could
 * not be read (too large: 413; the client gone): logged and answered here.
 */
async function readRequest(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: Context,
  carrier: string,
  wire: Wire,
  pathname: string,
): Promise<{ record: RequestRecord; body: unknown } | null> {
  const raw = await readBody(req);
  const record = newRecord(req, ctx, carrier, wire, pathname);
  if (typeof raw === "string") {
    ctx.log.add(record);
    ctx.log.settle(record, raw === "aborted" ? "aborted" : "error");
    if (raw === "too_large") sendJson(res, 413, wire.errorBody(413, "request body too large", true));
    return null;
  }
  try {
    return { record, body: JSON.parse(raw.text) as unknown };
  } catch {
    return { record, body: undefined };
  }
}

/** One completion request in any protocol: auth, body, directives, faults, then the planned answer in the protocol's shapes. */
async function serveCompletion(
  req: IncomingMessage,
  res: ServerResponse,
  carrier: string,
  ctx: Context,
  wire: Wire,
  path: { pathname: string; model?: string; stream?: boolean },
): Promise<void> {
  ctx.profiles.touch(carrier);
  const received = await readRequest(req, res, ctx, carrier, wire, path.pathname);
  if (!received) return;
  const { record, body } = received;
  const asked = isRecord(body) && typeof body.model === "string" ? body.model : (path.model ?? "");
  const read = wire.read(body, { model: path.model, stream: path.stream ?? false, headers: req.headers, rules: rulesOf(asked, ctx.catalog.rules) });
  const normalized = "messages" in read ? read : null;
  const userText = normalized ? lastUserText(normalized.messages) : "";
  const directives = parseDirectives(userText, carrier);
  // An outage answers whatever the request says; the message arming it is its first victim.
  if (directives.outage) ctx.outages.armOnce(carrier, userText, directives.outage.requests, directives.outage.status);
  const outageStatus = ctx.outages.take(carrier);
  record.tag = directives.tag ?? null;
  record.body = body ?? null;
  ctx.log.add(record);
  if (outageStatus !== undefined) return failOutage(req, res, record, carrier, outageStatus, ctx.log, wire);
  const call = normalized ? plannedCall(directives, normalized) : null;
  const refused = refusedCredential(req) ?? wire.auth(req) ?? (normalized ? null : (read as Refusal)) ?? (call && "status" in call ? call : null);
  if (refused) {
    record.chunks_sent = 1;
    ctx.log.settle(record, "error");
    sendJson(res, refused.status, wire.errorBody(refused.status, refused.message, true));
    return;
  }
  const n = normalized!;
  const toolCall = call && "name" in call ? call : undefined;

  // The client (the router) closing early is what tests want to observe as "aborted".
  const abort = new AbortController();
  res.on("close", () => {
    abort.abort();
    ctx.log.settle(record, "aborted");
  });

  if (directives.hang) {
    ctx.log.settle(record, "hang");
    return; // Hold the socket open until the client gives up.
  }
  const profile = ctx.profiles.resolve(carrier);
  if (!(await sleep(directives.delayMs ?? profile.first_byte_ms, abort.signal))) return;
  if (directives.resetAfter === 0) {
    ctx.log.settle(record, "reset");
    req.socket.resetAndDestroy();
    return;
  }
  if (directives.status !== undefined && directives.status >= 300) {
    record.chunks_sent = 1;
    ctx.log.settle(record, "error");
    sendJson(res, directives.status, wire.errorBody(directives.status, `simulated ${directives.status} from ${carrier}`));
    return;
  }

  const model = n.model;
  const reasoningModel = directives.reasoningContent || (n.thinks ?? isReasoningModel(model, ctx.catalog.reasoning));
  const prompt = await promptTokensOf(ctx, n, abort.signal);
  // What a carrier refuses before generating: a file it cannot fetch, a prompt longer than its context.
  const context = ctx.catalog.contextLength.get(`${carrier}\n${model}`);
  const tooLong = typeof prompt === "number" && context !== undefined && prompt > context;
  if (typeof prompt !== "number" || tooLong) {
    record.chunks_sent = 1;
    ctx.log.settle(record, "error");
    const message = typeof prompt !== "number" ? prompt.refused : `prompt is too long: ${prompt} tokens > ${context} maximum`;
    sendJson(res, 400, wire.errorBody(400, message));
    return;
  }
  const promptTokens = prompt;
  const billed = Array.from({ length: n.generated }, (_, choice) =>
    planCompletion({
      model,
      messages: n.messages,
      promptTokens,
      toolName: toolCall?.name,
      toolArguments: toolCall?.arguments,
      maxTokens: n.maxTokens(directives.capField),
      tokens: directives.tokens,
      big: directives.big,
      reasoning: reasoningModel,
      choice,
      reasoningBeyondCap: ctx.catalog.reasoningBeyondCap.has(`${carrier}\n${model}`),
      reasoningBudget: n.reasoningBudget,
    }),
  );
  const exchange: Exchange = {
    directives,
    id: `chatcmpl-${randomBytes(12).toString("hex")}`,
    created: Math.floor(Date.now() / 1000),
    model,
    reasoningModel,
    showsThinking: n.showsThinking || directives.reasoningContent,
    carrier,
    plans: billed.slice(0, n.answered),
    billed,
    cache: cacheUse(ctx, wire, carrier, n, directives, promptTokens),
    request: n,
  };
  const sink: Sink = { res, record, log: ctx.log, signal: abort.signal };
  if (n.stream) await answerStream(exchange, wire, sink, directives.tps ?? profile.tps ?? undefined);
  else {
    // A profiled carrier takes its generation time before a whole answer too (tps= paces streams only).
    const generationMs = profile.source !== "off" && profile.tps !== null ? (billed.reduce((sum, p) => sum + p.completionTokens, 0) * 1000) / profile.tps : 0;
    if (generationMs >= 1 && !(await sleep(generationMs, abort.signal))) return;
    await answerJson(exchange, wire, sink);
  }
}

/**
 * The prompt tokens a request is billed (and counted) for: its messages, tools and what else its protocol
 * counts, media by their size where the model has a rate for it (a PDF's pages, fetched when given by URL;
 * a WAV's seconds), else at the model's allowances. `refused`: a file the carrier could not fetch.
 */
async function promptTokensOf(ctx: Context, n: Normalized, signal: AbortSignal): Promise<number | { refused: string }> {
  let media: Awaited<ReturnType<typeof billedMedia>>;
  try {
    media = await billedMedia(n.messages, ctx.catalog.mediaRates.get(n.model) ?? { filePageTokens: null, audioTokensPerSecond: null }, signal);
  } catch (err) {
    if (err instanceof UnfetchableMedia) return { refused: err.message };
    throw err;
  }
  return countRequestTokens({ messages: n.messages, tools: n.tools, ...n.extraCounted }, ctx.catalog.partTokens.get(n.model) ?? {}, media);
}

/**
 * Anthropic's token count (`POST /<carrier>/v1/messages/count_tokens`): `{input_tokens}`, the prompt tokens
 * the same prompt is billed as a completion (cache reads and writes included: a count does not cache).
 * Auth and the request checked as api.anthropic.com does; logged and tagged as completions are;
 * `[sim status=N]`, `[sim delay_ms=N]` and `[sim hang]` in its last user message apply.
 */
async function serveTokenCount(req: IncomingMessage, res: ServerResponse, carrier: string, ctx: Context, pathname: string): Promise<void> {
  const received = await readRequest(req, res, ctx, carrier, anthropicWire, pathname);
  if (!received) return;
  const { record, body } = received;
  const read = readCountTokens(body, req, rulesOf(isRecord(body) && typeof body.model === "string" ? body.model : "", ctx.catalog.rules));
  const normalized = "messages" in read ? read : null;
  const directives = parseDirectives(normalized ? lastUserText(normalized.messages) : "", carrier);
  record.tag = directives.tag ?? null;
  record.body = body ?? null;
  ctx.log.add(record);
  record.chunks_sent = 1;
  const signal = await beforeAnswer(
    res,
    record,
    ctx,
    anthropicWire,
    refusedCredential(req) ?? anthropicWire.auth(req) ?? (normalized ? null : (read as Refusal)),
    directives,
    carrier,
  );
  if (!signal) return;
  const counted = await promptTokensOf(ctx, normalized!, signal);
  if (typeof counted !== "number") {
    ctx.log.settle(record, "error");
    return sendJson(res, 400, anthropicWire.errorBody(400, counted.refused));
  }
  record.first_write_mono_ms = monotonicMs();
  ctx.log.settle(record, "completed");
  sendJson(res, 200, JSON.stringify({ input_tokens: counted }));
}

/**
 * What the simulated token-count and embeddings endpoints do before answering: refuse (`refused`: auth, a
 * bad request), hold the socket (`hang`), wait (`delay_ms`), fail (`status=`). The signal that aborts when
 * the client leaves, to go on with; null when the request is answered (or never will be).
 */
async function beforeAnswer(
  res: ServerResponse,
  record: RequestRecord,
  ctx: Context,
  wire: Wire,
  refused: Refusal | null,
  directives: Directives,
  carrier: string,
): Promise<AbortSignal | null> {
  if (refused) {
    ctx.log.settle(record, "error");
    sendJson(res, refused.status, wire.errorBody(refused.status, refused.message, true));
    return null;
  }
  if (directives.hang) {
    ctx.log.settle(record, "hang");
    return null;
  }
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  if (!(await sleep(directives.delayMs ?? 0, abort.signal))) {
    ctx.log.settle(record, "aborted");
    return null;
  }
  if (directives.status !== undefined && directives.status >= 300) {
    ctx.log.settle(record, "error");
    sendJson(res, directives.status, wire.errorBody(directives.status, `simulated ${directives.status} from ${carrier}`));
    return null;
  }
  return abort.signal;
}

const OUTCOMES: readonly Outcome[] = ["pending", "hang", "completed", "aborted", "reset", "error"];

/** `GET /__sim/pdf?pages=N` (1–10,000): a PDF of N blank pages, for requests that give a file by URL (the carrier fetches it). */
function servePdf(url: URL, res: ServerResponse): void {
  const pages = Number(url.searchParams.get("pages") ?? "1");
  if (!Number.isSafeInteger(pages) || pages < 1 || pages > 10_000)
    return sendJson(res, 400, errorJson(400, "pages must be a whole number from 1 to 10000", "invalid_request_error"));
  const pdf = pdfOfPages(pages);
  res.writeHead(200, { "Content-Type": "application/pdf", "Content-Length": pdf.length });
  res.end(pdf);
}

/**
 * `?tag=T` filters by tag (all requests without it). `wait_ms=N` (at most 30 s) holds the
 * answer until some request matches and every match is final (not pending/hang), or with
 * `until=<outcome>` until every match has that outcome; it answers anyway when time runs out.
 */
async function listRequests(url: URL, res: ServerResponse, log: RequestLog): Promise<void> {
  const tag = url.searchParams.get("tag");
  const waitMs = Math.min(Number(url.searchParams.get("wait_ms") ?? 0) || 0, MAX_WAIT_MS);
  const until = OUTCOMES.find((o) => o === url.searchParams.get("until"));
  if (waitMs > 0) {
    // Lets tests wait for the simulator to observe an outcome instead of sleeping.
    const done = (r: RequestRecord) => (until === undefined ? r.outcome !== "pending" && r.outcome !== "hang" : r.outcome === until);
    await log.waitFor(() => {
      const found = log.find(tag);
      return found.length > 0 && found.every(done);
    }, waitMs);
  }
  if (!res.destroyed) sendJson(res, 200, JSON.stringify({ requests: log.find(tag) }));
}

const CHAT_PATH = /^\/([^/]+)\/v1\/chat\/completions$/;
const RESPONSES_PATH = /^\/([^/]+)\/v1\/responses$/;
const MESSAGES_PATH = /^\/([^/]+)\/v1\/messages$/;
const COUNT_TOKENS_PATH = /^\/([^/]+)\/v1\/messages\/count_tokens$/;
const GEMINI_PATH = /^\/([^/]+)\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const OPENAI_EMBEDDINGS_PATH = /^\/([^/]+)\/v1\/embeddings$/;
const GEMINI_EMBEDDINGS_PATH = /^\/([^/]+)\/v1beta\/models\/([^/:]+):(embedContent|batchEmbedContents)$/;

/**
 * One embeddings request, OpenAI's or Gemini's: logged as completions are; `[sim status=N]`,
 * `[sim delay_ms=N]` and `[sim hang]` in its text apply; otherwise deterministic vectors.
 */
async function serveEmbeddings(
  req: IncomingMessage,
  res: ServerResponse,
  carrier: string,
  ctx: Context,
  wire: Wire,
  path: { pathname: string; model?: string; batch?: boolean },
): Promise<void> {
  const received = await readRequest(req, res, ctx, carrier, wire, path.pathname);
  if (!received) return;
  const { record, body } = received;
  ctx.log.add(record);
  record.body = body ?? null;
  const ask = path.model === undefined ? readOpenAiEmbeddings(body) : readGeminiEmbeddings(body, path.model, path.batch === true);
  const directives = parseDirectives("texts" in ask ? ask.texts.join("\n") : "", carrier);
  record.tag = directives.tag ?? null;
  record.chunks_sent = 1;
  if (!(await beforeAnswer(res, record, ctx, wire, wire.auth(req) ?? ("texts" in ask ? null : ask), directives, carrier))) return;
  if (!("texts" in ask)) return;
  record.first_write_mono_ms = monotonicMs();
  sendJson(res, 200, path.model === undefined ? openAiEmbeddingsAnswer(ask) : geminiEmbeddingsAnswer(ask, path.batch === true));
  ctx.log.settle(record, "completed");
}

async function route(req: IncomingMessage, res: ServerResponse, ctx: Context): Promise<void> {
  const url = new URL(req.url ?? "/", "http://simulator.invalid");
  const { pathname } = url;
  const chat = CHAT_PATH.exec(pathname);
  if (req.method === "POST" && chat) return serveCompletion(req, res, decodeURIComponent(chat[1]!), ctx, openAiWire, { pathname });
  const responses = RESPONSES_PATH.exec(pathname);
  if (req.method === "POST" && responses) return serveCompletion(req, res, decodeURIComponent(responses[1]!), ctx, openAiResponsesWire, { pathname });
  const messages = MESSAGES_PATH.exec(pathname);
  if (req.method === "POST" && messages) return serveCompletion(req, res, decodeURIComponent(messages[1]!), ctx, anthropicWire, { pathname });
  const countTokens = COUNT_TOKENS_PATH.exec(pathname);
  if (req.method === "POST" && countTokens) return serveTokenCount(req, res, decodeURIComponent(countTokens[1]!), ctx, pathname);
  const gemini = GEMINI_PATH.exec(pathname);
  if (req.method === "POST" && gemini) {
    const stream = gemini[3] === "streamGenerateContent";
    if (stream && url.searchParams.get("alt") !== "sse") return sendJson(res, 400, geminiWire.errorBody(400, "this simulator streams with alt=sse only"));
    return serveCompletion(req, res, decodeURIComponent(gemini[1]!), ctx, geminiWire, { pathname, model: decodeURIComponent(gemini[2]!), stream });
  }
  const openAiEmbeddings = OPENAI_EMBEDDINGS_PATH.exec(pathname);
  if (req.method === "POST" && openAiEmbeddings) return serveEmbeddings(req, res, decodeURIComponent(openAiEmbeddings[1]!), ctx, openAiWire, { pathname });
  const geminiEmbeddings = GEMINI_EMBEDDINGS_PATH.exec(pathname);
  if (req.method === "POST" && geminiEmbeddings)
    return serveEmbeddings(req, res, decodeURIComponent(geminiEmbeddings[1]!), ctx, geminiWire, {
      pathname,
      model: decodeURIComponent(geminiEmbeddings[2]!),
      batch: geminiEmbeddings[3] === "batchEmbedContents",
    });
  if (req.method === "DELETE" && pathname === "/__sim/cache") return sendJson(res, 200, JSON.stringify({ cleared: ctx.cache.clear() }));
  if (req.method === "GET" && url.pathname === "/health") return sendJson(res, 200, JSON.stringify({ ok: true }));
  if (req.method === "GET" && url.pathname === "/__sim/requests") return listRequests(url, res, ctx.log);
  if (req.method === "GET" && url.pathname === "/__sim/pdf") return servePdf(url, res);
  if (req.method === "GET" && url.pathname === "/__sim/profiles") return listProfiles(url, res, ctx.profiles);
  if (req.method === "POST" && url.pathname === "/__sim/profile") return setProfile(req, res, ctx.profiles);
  if (req.method === "DELETE" && url.pathname === "/__sim/profile") return resetProfile(url, res, ctx.profiles);
  if (req.method === "GET" && url.pathname === "/__sim/outage") return listOutages(res, ctx.outages);
  if (req.method === "POST" && url.pathname === "/__sim/outage") return setOutage(req, res, ctx.outages);
  sendJson(res, 404, errorJson(404, `no route for ${req.method ?? "?"} ${url.pathname}`, "not_found"));
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? "127.0.0.1";
  const mode = opts.profiles ?? "default";
  if (mode !== "default" && mode !== "off") throw new Error(`profiles must be "default" or "off", got ${String(mode)}`);
  const catalog = loadCatalogFacts(opts.catalogPath ?? DEFAULT_CATALOG);
  const tps = opts.tps !== undefined && opts.tps > 0 ? opts.tps : undefined;
  const ctx: Context = {
    log: new RequestLog(),
    catalog,
    profiles: new Profiles(mode, tps, catalog.carriers),
    outages: new Outages(),
    connections: new WeakMap(),
    cache: new PromptCache(),
  };
  const server = createServer((req, res) => {
    route(req, res, ctx).catch((err: unknown) => {
      // A bug in the simulator must show up as a 500, not a crashed test run.
      if (!res.headersSent) sendJson(res, 500, errorJson(500, `simulator error: ${String(err)}`, "sim_internal"));
      else res.destroy();
    });
  });
  let accepted = 0;
  server.on("connection", (socket) => ctx.connections.set(socket, ++accepted));
  const { url, port } = await listen(server, opts.port ?? 0, host);
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections(); // Hung and streaming requests would otherwise keep it open.
        ctx.log.release();
      }),
  };
}
