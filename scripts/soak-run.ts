import { AdminClient } from "./admin-client.ts";
import { prng } from "../simulator/tokens.ts";

/** The mixed load of `npm run soak`: faults, disconnects, streams and not, several accounts. */
export type SoakOptions = {
  url: string;
  admin: AdminClient;
  requests: number;
  concurrency: number;
  accounts: number;
  /** Hard stop for sending, ms; whatever is unsent by then is reported as unsent. */
  timeLimitMs: number;
  seed?: number;
  /** Share of requests with a carrier fault directive, and of client disconnects. */
  faultRate?: number;
  disconnectRate?: number;
};

export type AccountAudit = {
  id: string;
  credits_nano: number;
  usage_nano: number;
  held_nano: number;
  records: number;
  records_cost_nano: number;
  records_pending: number;
  open_holds: Array<{ id: string; kind: "request" | "slice" }>;
  unsettled_admissions: number;
  expired_slices: number;
};

export type SoakReport = {
  sent: number;
  unsent: number;
  faults_injected: number;
  disconnects: number;
  by_status: Record<string, number>;
  stream_error_chunks: number;
  /** Requests per answer shape (content, reasoning, tool_call). */
  shapes: Record<string, number>;
  /** Requests per inbound API (chat, messages, responses, embeddings). */
  apis: Record<string, number>;
  unexpected: string[];
  accounts: Array<AccountAudit & { sent: number; invariant_held: boolean }>;
  invariant_held: boolean;
  seconds: number;
  requests_per_second: number;
};

// Fault directives and what the caller may see: a fallback success, or the carrier-caused error.
const FAULTS = [
  "[sim status=429]", // every carrier → 429
  "[sim status=503]", // every carrier → 503
  "[sim status=500]", // every carrier → 502
  "[sim carrier=deepinfra status=500]", // first carrier of the llama model fails → fallback
  "[sim carrier=deepinfra reset_after=0]",
  "[sim carrier=deepinfra hang]", // per-attempt timeout → fallback
  "[sim reset_after=3]", // mid-stream (or mid-body) reset
  "[sim malformed]",
  "[sim no_usage]",
  "[sim garbage]",
  "[sim carrier=deepinfra status=401]", // a carrier's revoked key: the next carrier serves
  "[sim status=400]", // every carrier rejects the request: the caller gets 400
];
/** Statuses a fault may give the caller beyond ALLOWED. */
const FAULT_STATUS: Record<string, number> = { "[sim status=400]": 400 };
const MODELS = [
  "meta-llama/llama-3.1-8b-instruct",
  "meta-llama/llama-3.1-8b-instruct",
  "openai/gpt-oss-20b",
  "openai/gpt-oss-20b:free",
  "mistralai/mistral-nemo",
  "free+paid",
  // First-party carriers in their own protocols (Anthropic Messages, Gemini, OpenAI with its reasoning-model rules).
  "anthropic/claude-haiku-4.5",
  "google/gemini-2.5-flash",
  "openai/gpt-5-mini",
];
const CACHED_MODELS = ["anthropic/claude-haiku-4.5", "google/gemini-2.5-flash", "openai/gpt-5-mini"];
/** "free+paid": a free model with a paid fallback, which must count against the free-model limits and be charged when the paid one serves. */
const MIXED = { model: "openai/gpt-oss-20b:free", models: ["meta-llama/llama-3.1-8b-instruct"] };
/**
 * What the answer is made of: plain content; reasoning streamed as `reasoning_content` (vLLM/DeepSeek)
 * before the content; or a streamed tool call (name, then argument fragments). Disconnects happen in
 * all three, so a caller who leaves before the usage chunk is charged the estimate of what it got.
 */
const SHAPES = [
  { name: "content", model: (r: () => number) => MODELS[Math.floor(r() * MODELS.length)]!, directive: "", extra: {} },
  { name: "reasoning", model: () => "deepseek/deepseek-r1-0528", directive: "[sim reasoning_content]", extra: {} },
  // Cached prompts: reads (and Anthropic's writes) billed at their own prices, in every protocol.
  {
    name: "cached",
    model: (r: () => number) => CACHED_MODELS[Math.floor(r() * CACHED_MODELS.length)]!,
    directive: "[sim cache_read=24 cache_write=8]",
    extra: {},
  },
  {
    name: "thinking",
    model: () => "anthropic/claude-haiku-4.5",
    directive: "[sim reasoning_content]",
    extra: { max_tokens: 2048, max_completion_tokens: 2048, reasoning: { effort: "low" } },
  },
  {
    name: "tool_call",
    model: () => "openai/gpt-oss-20b",
    directive: "[sim tool_call]",
    extra: {
      tools: [
        {
          type: "function",
          function: { name: "lookup", description: "Looks a word up.", parameters: { type: "object", properties: { query: { type: "string" } } } },
        },
      ],
    },
  },
] as const;
const ALLOWED = new Set([200, 402, 429, 502, 503]);

/** The inbound APIs mixed in, with their weights: every one billed, limited and recorded as chat is. */
const APIS = [
  ["chat", 0.4],
  ["messages", 0.25],
  ["responses", 0.25],
  ["embeddings", 0.1],
] as const;
type Api = (typeof APIS)[number][0];
const EMBEDDING_MODELS = ["openai/text-embedding-3-small", "google/gemini-embedding-001"];

function pickApi(r: number): Api {
  let acc = 0;
  for (const [api, weight] of APIS) if (r < (acc += weight)) return api;
  return "chat";
}

type Json = Record<string, any>;
/** One soak request in an inbound API: its path, its body, and how its stream ends well or in error. */
function inApi(
  api: Api,
  chat: Json,
  text: string,
  rand: () => number,
): { path: string; body: Json; ended: (t: string) => boolean; failed: (t: string) => boolean } {
  const tools = (chat.tools as Json[] | undefined)?.map((t) => t.function as Json);
  if (api === "messages")
    return {
      path: "/messages",
      body: {
        model: chat.model,
        ...(chat.models ? { models: chat.models } : {}),
        stream: chat.stream,
        max_tokens: chat.reasoning ? 2048 : 64,
        messages: [{ role: "user", content: text }],
        ...(chat.reasoning ? { thinking: { type: "enabled", budget_tokens: 1024 } } : {}),
        ...(tools ? { tools: tools.map((f) => ({ name: f.name, description: f.description, input_schema: f.parameters })) } : {}),
      },
      ended: (t) => t.includes("event: message_stop") || t.includes("event: error"),
      failed: (t) => t.includes("event: error"),
    };
  if (api === "responses")
    return {
      path: "/responses",
      body: {
        model: chat.model,
        ...(chat.models ? { models: chat.models } : {}),
        stream: chat.stream,
        max_output_tokens: chat.reasoning ? 2048 : 64,
        input: text,
        ...(chat.reasoning ? { reasoning: { effort: "low" } } : {}),
        ...(tools ? { tools: tools.map((f) => ({ type: "function", name: f.name, description: f.description, parameters: f.parameters })) } : {}),
      },
      ended: (t) => /event: response\.(completed|incomplete|failed)\n/.test(t),
      failed: (t) => t.includes("event: response.failed"),
    };
  if (api === "embeddings")
    return {
      path: "/embeddings",
      body: { model: EMBEDDING_MODELS[Math.floor(rand() * EMBEDDING_MODELS.length)], input: [text, `${text} again`] },
      ended: () => true,
      failed: () => false,
    };
  return { path: "/chat/completions", body: chat, ended: (t) => t.endsWith("data: [DONE]\n\n"), failed: (t) => t.includes('"finish_reason":"error"') };
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const rand = prng(o.seed ?? 1);
  const faultRate = o.faultRate ?? 0.2;
  const disconnectRate = o.disconnectRate ?? 0.05;
  const stamp = Date.now();
  const accounts: Array<{ id: string; key: string; sent: number }> = [];
  for (let i = 0; i < o.accounts; i++) {
    // The last account is kept short of money so 402s are part of the mix.
    const credits = i === o.accounts - 1 && o.accounts > 1 ? 0.002 : 50;
    const acct = await o.admin.request<{ id: string }>("POST", "/accounts", { email: `soak-${stamp}-${i}@example.test`, credits });
    const { key } = await o.admin.request<{ key: string }>("POST", "/keys", { account: acct.id, label: "soak" });
    accounts.push({ id: acct.id, key, sent: 0 });
  }

  const report: SoakReport = {
    sent: 0,
    unsent: 0,
    faults_injected: 0,
    disconnects: 0,
    by_status: {},
    stream_error_chunks: 0,
    shapes: {},
    apis: {},
    unexpected: [],
    accounts: [],
    invariant_held: false,
    seconds: 0,
    requests_per_second: 0,
  };
  const started = Date.now();
  const deadline = started + o.timeLimitMs;
  let next = 0;
  const kinds = new Map<string, string>();

  // A request that never ends (its body neither arrives nor fails) is reported with what it was and how far it got, not waited on forever.
  const one = async () => {
    const track = { what: "", phase: "send" };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<"stuck">((resolve) => (timer = setTimeout(() => resolve("stuck"), 90_000)));
    const outcome = await Promise.race([attempt(track), stuck]);
    clearTimeout(timer);
    if (outcome === "stuck") report.unexpected.push(`client stuck 90 s: ${track.what} (at: ${track.phase})`);
  };

  const attempt = async (track: { what: string; phase: string }) => {
    const account = accounts[Math.floor(rand() * accounts.length)]!;
    const stream = rand() < 0.5;
    const fault = rand() < faultRate ? FAULTS[Math.floor(rand() * FAULTS.length)]! : "";
    const disconnect = rand() < disconnectRate;
    if (fault) report.faults_injected++;
    if (disconnect) report.disconnects++;
    const shape = SHAPES[Math.floor(rand() * SHAPES.length)]!;
    report.shapes[shape.name] = (report.shapes[shape.name] ?? 0) + 1;
    const pace = disconnect ? (stream ? "[sim tokens=50 tps=200]" : "[sim delay_ms=300]") : `[sim tokens=${1 + Math.floor(rand() * 30)}]`;
    // Fields that multiply or extend what a carrier bills: several choices, or two caps of which the carrier reads the larger.
    const billing = rand();
    const billed = billing < 0.1 ? { n: 2 + Math.floor(rand() * 2) } : billing < 0.2 ? { max_completion_tokens: 8 } : {};
    const capField = "max_completion_tokens" in billed ? "[sim cap_field=max_tokens]" : "";
    const model = shape.model(rand);
    const body = {
      ...(model === "free+paid" ? MIXED : { model }),
      stream,
      max_tokens: 64,
      ...billed,
      messages: [{ role: "user", content: `soak ${next} ${pace} ${capField} ${shape.directive} ${fault}` }],
      ...shape.extra,
    };
    const api = pickApi(rand());
    report.apis[api] = (report.apis[api] ?? 0) + 1;
    const text = `soak ${next} ${pace} ${capField} ${shape.directive} ${fault}`;
    // Embeddings are whole answers: a streamed pick goes as chat's would, unstreamed.
    const wire = inApi(api, api === "embeddings" ? { ...body, stream: false } : body, text, rand);
    const streamed = stream && api !== "embeddings";
    track.what = `${api} ${streamed ? "S" : "N"} ${disconnect ? "disc " : ""}${shape.name} ${model} ${JSON.stringify(billed)} ${pace} ${fault}`;
    const ac = new AbortController();
    const timeout = setTimeout(() => ac.abort(), 30_000);
    account.sent++;
    report.sent++;
    try {
      if (disconnect && !streamed) setTimeout(() => ac.abort(), 100);
      const res = await fetch(`${o.url}/api/v1${wire.path}`, {
        method: "POST",
        signal: ac.signal,
        headers: { authorization: `Bearer ${account.key}`, "content-type": "application/json" },
        body: JSON.stringify(wire.body),
      });
      track.phase = `body of ${res.status}`;
      report.by_status[res.status] = (report.by_status[res.status] ?? 0) + 1;
      const gid = res.headers.get("x-generation-id");
      if (gid) {
        kinds.set(gid, track.what);
        track.what += ` ${gid}`;
      }
      if (!ALLOWED.has(res.status) && FAULT_STATUS[fault] !== res.status) {
        report.unexpected.push(`${res.status} ${(await res.text()).slice(0, 200)}`);
        return; // its body is read
      }
      if (res.status === 200 && streamed) {
        const reader = res.body!.getReader();
        if (disconnect) {
          await reader.read();
          await reader.read();
          ac.abort();
          return;
        }
        let text = "";
        const decoder = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
        if (!wire.ended(text)) report.unexpected.push(`${api} stream without its end: ${track.what}`);
        if (wire.failed(text)) report.stream_error_chunks++;
      } else if (disconnect) {
        // A caller that leaves stops waiting for the body itself (Node's fetch does not always end a body read on abort).
        const left = new Promise<void>((resolve) => (ac.signal.aborted ? resolve() : ac.signal.addEventListener("abort", () => resolve(), { once: true })));
        await Promise.race([res.arrayBuffer(), left]);
      } else await res.arrayBuffer();
    } catch (err) {
      // What failed and where (undici puts the socket's own error in `cause`), so a transport error is diagnosable.
      const cause = err instanceof Error && err.cause instanceof Error ? ` (${(err.cause as Error & { code?: string }).code ?? ""} ${err.cause.message})` : "";
      if (!disconnect) report.unexpected.push(`client error: ${err instanceof Error ? err.message : String(err)}${cause} — ${track.what} at ${track.phase}`);
      else report.by_status.disconnected = (report.by_status.disconnected ?? 0) + 1;
    } finally {
      clearTimeout(timeout);
    }
  };

  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.requests && Date.now() < deadline) {
        next++;
        await one();
      }
    }),
  );
  report.unsent = o.requests - next;
  report.seconds = (Date.now() - started) / 1000;
  report.requests_per_second = Math.round(report.sent / report.seconds);

  // Every request settles and its record reaches D1; then usage = Σ records = credits − balance.
  for (const a of accounts) {
    const settleBy = Date.now() + 60_000;
    let audit: AccountAudit;
    for (;;) {
      audit = await o.admin.request<AccountAudit>("GET", `/accounts/${a.id}/audit`);
      if ((audit.held_nano === 0 && audit.records_pending === 0) || Date.now() > settleBy) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const held =
      audit.held_nano === 0 &&
      audit.records_pending === 0 &&
      audit.unsettled_admissions === 0 &&
      audit.usage_nano === audit.records_cost_nano &&
      audit.records <= a.sent &&
      audit.records >= a.sent - report.disconnects;
    report.accounts.push({ ...audit, sent: a.sent, invariant_held: held });
    if (process.env.SOAK_DEBUG) for (const h of audit.open_holds) console.error("OPEN", h.kind, h.id, kinds.get(h.id) ?? "?");
  }
  report.invariant_held = report.accounts.every((a) => a.invariant_held);
  return report;
}
