// The floor relay of `npm run bench` (issue 12): the least work any router must do on a stream, written as
// fast as workerd allows. It forwards the request to the carrier simulator like the pass-through (no
// parsing, no auth, no storage), and on an SSE answer reads every carrier event, puts our id, the
// requested model and our provider into it — `{"id":"<ours>",…,"model":"<ours>","provider":"<ours>",…`,
// the head the router writes — and writes it to the caller. No accounting, no limits, no error chunks:
// whatever a router adds beyond this is the router's own cost.
//   env.UPSTREAM       the simulator's origin, e.g. http://127.0.0.1:40123
//   env.CARRIER_PATH   where the router would send a chat completion, e.g. /groq/v1/chat/completions
//   env.MODEL          the model id written into each chunk (the router writes the requested id)
//   env.PROVIDER       the provider name written into each chunk
//
// How it relays is chosen per request by the `x-floor-variant` header: `npm run bench -- --only floor`
// measures each one, `npx tsx bench/floor-check.ts` checks that all of them answer the same bytes. Without
// the header: DEFAULT_VARIANT, the one that cost least in those runs. What each variant gave (single short
// runs on a shared 2-core machine, so a ranking rather than exact figures) is in the README, Performance →
// "Floor relay variants". The variants:
//   str-each      default reader; one TextDecoder (stream mode); events split as strings; one encode and
//                 one awaited write per event
//   str-batch     as str-each, but every complete event of one read rewritten into one string: one
//                 encode, one awaited write per read
//   bytes         default reader; events found and rewritten at the byte level (no decode or encode:
//                 search for `data: {"id":"`, the id's closing quote, `"model":"`; the pieces copied into
//                 one new Uint8Array per read); one awaited write per read
//   bytes-byob    as bytes, with a BYOB reader reading into a reused 64 KiB buffer (a read takes everything
//                 the carrier has sent so far)
//   bytes-nowait  as bytes-byob, writes not awaited one by one (only writer.ready, the backpressure signal)
//   native-its    as bytes-byob, writing into workerd's native IdentityTransformStream instead of a JS
//                 TransformStream (the router's own way)
//   native-nowait as native-its, writes not awaited one by one
//   transform     the upstream body piped through a JS TransformStream whose transform() rewrites each
//                 read's complete events at the byte level (no pump of our own)
//   pull          a JS ReadableStream whose pull() reads the upstream (BYOB) and enqueues the rewritten
//                 bytes: the runtime asks for data, no writer at all
//   pull-default  as pull, with a default reader
//   pull-bytes    as pull, the ReadableStream of type "bytes"

const DEFAULT_VARIANT = "native-its";
const READ_BUFFER_BYTES = 64 * 1024;

const encoder = new TextEncoder();
const DATA_HEAD = encoder.encode('data: {"id":"');
const MODEL_KEY = encoder.encode('"model":"');
const QUOTE = 0x22;
const LF = 0x0a;

/**
 * Byte-level rewriter of one stream: keeps the bytes of an unfinished event between reads; `push` returns
 * every complete event of the bytes so far, rewritten, as one Uint8Array (or null when none is complete).
 */
class ByteRewriter {
  /** @param {string} id @param {string} model @param {string} provider */
  constructor(id, model, provider) {
    this.id = encoder.encode(id);
    this.modelAndProvider = encoder.encode(`${model}","provider":"${provider}`);
    this.extra = this.id.length + this.modelAndProvider.length;
    /** @type {Uint8Array | null} */
    this.carry = null;
  }

  /** @param {Uint8Array} chunk @returns {Uint8Array | null} */
  push(chunk) {
    let buf = chunk;
    if (this.carry) {
      buf = new Uint8Array(this.carry.length + chunk.length);
      buf.set(this.carry, 0);
      buf.set(chunk, this.carry.length);
      this.carry = null;
    }
    // The end of the last complete event ("\n\n"), and how many events there are.
    let end = -1;
    let events = 0;
    for (let i = buf.indexOf(LF); i >= 0 && i + 1 < buf.length; i = buf.indexOf(LF, i + 1)) {
      if (buf[i + 1] === LF) {
        events++;
        end = i + 2;
        i++;
      }
    }
    if (end < 0) {
      this.carry = chunk === buf ? chunk.slice() : buf; // a BYOB buffer is reused: copy
      return null;
    }
    if (end < buf.length) this.carry = buf.slice(end);
    const out = new Uint8Array(end + events * this.extra);
    let o = 0;
    let start = 0;
    while (start < end) {
      let stop = start;
      for (;;) {
        stop = buf.indexOf(LF, stop);
        if (buf[stop + 1] === LF) break;
        stop++;
      }
      stop += 2; // the event is buf[start, stop)
      const idStart = start + DATA_HEAD.length;
      const idEnd = startsWith(buf, DATA_HEAD, start) ? buf.indexOf(QUOTE, idStart) : -1;
      const modelAt = idEnd >= 0 && idEnd < stop ? find(buf, MODEL_KEY, idEnd, stop) : -1;
      const modelEnd = modelAt >= 0 ? buf.indexOf(QUOTE, modelAt + MODEL_KEY.length) : -1;
      if (modelEnd < 0 || modelEnd >= stop) {
        out.set(buf.subarray(start, stop), o); // not a chunk ([DONE], a comment): as it came
        o += stop - start;
      } else {
        out.set(DATA_HEAD, o);
        o += DATA_HEAD.length;
        out.set(this.id, o);
        o += this.id.length;
        const mid = buf.subarray(idEnd, modelAt + MODEL_KEY.length);
        out.set(mid, o);
        o += mid.length;
        out.set(this.modelAndProvider, o);
        o += this.modelAndProvider.length;
        const rest = buf.subarray(modelEnd, stop);
        out.set(rest, o);
        o += rest.length;
      }
      start = stop;
    }
    return out.subarray(0, o);
  }
}

/** @param {Uint8Array} buf @param {Uint8Array} pat @param {number} at */
function startsWith(buf, pat, at) {
  if (at + pat.length > buf.length) return false;
  for (let i = 0; i < pat.length; i++) if (buf[at + i] !== pat[i]) return false;
  return true;
}

/** The first index of `pat` in buf[from, to), or -1. @param {Uint8Array} buf @param {Uint8Array} pat @param {number} from @param {number} to */
function find(buf, pat, from, to) {
  const first = pat[0];
  for (let i = buf.indexOf(first, from); i >= 0 && i + pat.length <= to; i = buf.indexOf(first, i + 1)) if (startsWith(buf, pat, i)) return i;
  return -1;
}

/** String rewriter: one decoder per stream (stream mode), events split on "\n\n". */
class StringRewriter {
  /** @param {string} id @param {string} model @param {string} provider */
  constructor(id, model, provider) {
    this.head = `data: {"id":"${id}`;
    this.modelAndProvider = `${model}","provider":"${provider}`;
    this.decoder = new TextDecoder();
    this.text = "";
  }

  /** @param {Uint8Array} chunk @returns {string[]} the complete events, rewritten */
  push(chunk) {
    this.text += this.decoder.decode(chunk, { stream: true });
    const end = this.text.lastIndexOf("\n\n");
    if (end < 0) return [];
    const complete = this.text.slice(0, end);
    this.text = this.text.slice(end + 2);
    return complete.split("\n\n").map((e) => this.rewrite(e));
  }

  /** @param {string} e */
  rewrite(e) {
    if (!e.startsWith('data: {"id":"')) return `${e}\n\n`;
    const idEnd = e.indexOf('"', 13);
    const modelAt = e.indexOf('"model":"', idEnd);
    const modelEnd = modelAt < 0 ? -1 : e.indexOf('"', modelAt + 9);
    if (modelEnd < 0) return `${e}\n\n`;
    return `${this.head}${e.slice(idEnd, modelAt + 9)}${this.modelAndProvider}${e.slice(modelEnd)}\n\n`;
  }
}

/** @param {ReadableStream<Uint8Array>} body @param {boolean} byob */
function reading(body, byob) {
  if (!byob) {
    const reader = body.getReader();
    return { read: () => reader.read(), cancel: (/** @type {unknown} */ r) => reader.cancel(r) };
  }
  const reader = body.getReader({ mode: "byob" });
  let buffer = new ArrayBuffer(READ_BUFFER_BYTES);
  return {
    read: async () => {
      const next = await reader.read(new Uint8Array(buffer));
      if (next.value) buffer = next.value.buffer; // the read transferred it: take it back
      return next;
    },
    cancel: (/** @type {unknown} */ r) => reader.cancel(r),
  };
}

/**
 * @param {ReadableStream<Uint8Array>} body
 * @param {string} variant
 * @param {{ id: string, model: string, provider: string }} ours
 * @param {{ waitUntil(p: Promise<unknown>): void }} ctx
 * @returns {ReadableStream<Uint8Array>}
 */
function relay(body, variant, ours, ctx) {
  if (variant === "transform") {
    const rw = new ByteRewriter(ours.id, ours.model, ours.provider);
    return body.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          const out = rw.push(chunk);
          if (out) controller.enqueue(out);
        },
      }),
    );
  }
  if (variant === "pull" || variant === "pull-default" || variant === "pull-bytes") {
    const rw = new ByteRewriter(ours.id, ours.model, ours.provider);
    const source = reading(body, variant !== "pull-default");
    return new ReadableStream({
      ...(variant === "pull-bytes" ? { type: "bytes" } : {}),
      async pull(controller) {
        for (;;) {
          const next = await source.read();
          if (next.done) return controller.close();
          const out = rw.push(next.value);
          if (out) return controller.enqueue(out);
        }
      },
      cancel: (reason) => source.cancel(reason),
    });
  }
  const native = variant === "native-its" || variant === "native-nowait";
  /** @type {{ readable: ReadableStream<Uint8Array>, writable: WritableStream<Uint8Array> }} */
  // @ts-ignore IdentityTransformStream is a workerd global
  const pair = native ? new IdentityTransformStream() : new TransformStream();
  const writer = pair.writable.getWriter();
  const source = reading(body, variant === "bytes-byob" || variant === "bytes-nowait" || native);
  const wait = variant !== "bytes-nowait" && variant !== "native-nowait";
  const pump = async () => {
    try {
      if (variant === "str-each" || variant === "str-batch") {
        const rw = new StringRewriter(ours.id, ours.model, ours.provider);
        for (;;) {
          const next = await source.read();
          if (next.done) break;
          const events = rw.push(next.value);
          if (variant === "str-each") for (const e of events) await writer.write(encoder.encode(e));
          else if (events.length > 0) await writer.write(encoder.encode(events.join("")));
        }
      } else {
        const rw = new ByteRewriter(ours.id, ours.model, ours.provider);
        for (;;) {
          const next = await source.read();
          if (next.done) break;
          const out = rw.push(next.value);
          if (!out) continue;
          if (wait) await writer.write(out);
          else {
            await writer.ready;
            writer.write(out).catch(() => {});
          }
        }
      }
      await writer.close();
    } catch (err) {
      await writer.abort(err).catch(() => {});
      await source.cancel(err).catch(() => {});
    }
  };
  ctx.waitUntil(pump());
  return pair.readable;
}

export default {
  /**
   * @param {Request} request
   * @param {{ UPSTREAM: string, CARRIER_PATH: string, MODEL: string, PROVIDER: string }} env
   * @param {{ waitUntil(p: Promise<unknown>): void }} ctx
   */
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const path = url.pathname === "/api/v1/chat/completions" ? env.CARRIER_PATH : url.pathname + url.search;
    const variant = request.headers.get("x-floor-variant") ?? DEFAULT_VARIANT;
    const upstream = await fetch(new Request(env.UPSTREAM + path, request));
    if (!upstream.body || !(upstream.headers.get("content-type") ?? "").startsWith("text/event-stream")) return upstream;
    const ours = { id: `gen-${crypto.randomUUID()}`, model: env.MODEL, provider: env.PROVIDER };
    return new Response(relay(upstream.body, variant, ours, ctx), {
      status: upstream.status,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  },
};
