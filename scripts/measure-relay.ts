// Measures relay time through the router against the simulator answering the same request directly:
// one stream with one very large event per size, and ordinary many-chunk streams. Either talks to a
// running service (`npm start`: --url, --sim, --key) or, with --start, starts one the way `npm start`
// does (on free ports, with extra Worker vars such as a larger RELAY_MAX_EVENT_BYTES) and stops it at
// the end. 127.0.0.1 only; every request is bounded by --timeout-s.
//   npx tsx scripts/measure-relay.ts --start --var RELAY_MAX_EVENT_BYTES=134217728 --sizes 1000000,20000000,104857600
//   npx tsx scripts/measure-relay.ts --start --sizes "" --chunks 2000 --repeat 20
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startLocalService, DEV_ADMIN_TOKEN, type LocalService } from "./local-service.ts";
import { AdminClient } from "./admin-client.ts";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: "http://127.0.0.1:8787" },
    sim: { type: "string", default: "http://127.0.0.1:8788" },
    key: { type: "string", default: ".dev/demo-key" },
    start: { type: "boolean", default: false },
    var: { type: "string", multiple: true, default: [] },
    sizes: { type: "string", default: "1000000,20000000,104857600" },
    chunks: { type: "string", default: "0" },
    repeat: { type: "string", default: "20" },
    "timeout-s": { type: "string", default: "300" },
    model: { type: "string", default: "meta-llama/llama-3.1-8b-instruct" },
  },
});
const timeoutMs = Number(values["timeout-s"]) * 1000;

type Result = { ms: number; bytes: number; ending: string };

/** Streams one request to its end (or the time bound), keeping only the byte count and the tail. */
async function measure(url: string, body: unknown, headers: Record<string, string>): Promise<Result> {
  const t0 = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  let bytes = 0;
  let tail = "";
  try {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body), signal });
    if (!res.ok) return { ms: performance.now() - t0, bytes: 0, ending: `HTTP ${res.status} ${(await res.text()).slice(0, 200)}` };
    const decoder = new TextDecoder();
    const reader = res.body!.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      bytes += r.value.byteLength;
      tail = (tail + decoder.decode(r.value, { stream: true })).slice(-2000);
    }
  } catch (err) {
    return { ms: performance.now() - t0, bytes, ending: signal.aborted ? `not finished within ${timeoutMs / 1000} s` : `failed: ${String(err)}` };
  }
  const error = /"error":\{"code":(\d+),"message":"([^"]*)"/.exec(tail);
  const ending = error ? `error chunk ${error[1]}: ${error[2]}` : tail.endsWith("data: [DONE]\n\n") ? "[DONE]" : "no [DONE]";
  return { ms: performance.now() - t0, bytes, ending };
}

let service: LocalService | undefined;
let state: string | undefined;
let base = { url: values.url, sim: values.sim, key: "" };
if (values.start) {
  state = mkdtempSync(join(tmpdir(), "switchyard-measure-"));
  const vars = Object.fromEntries(values.var.map((v) => v.split("=") as [string, string]));
  service = await startLocalService({ port: 0, persistTo: state, quiet: true, vars });
  const admin = new AdminClient(service.url, DEV_ADMIN_TOKEN);
  const account = await admin.request<{ id: string }>("POST", "/accounts", { email: `measure-${Date.now()}@example.test`, credits: 100 });
  const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: account.id });
  base = { url: service.url, sim: service.simulator.url, key };
} else {
  base.key = readFileSync(values.key, "utf8").trim();
}
for (const u of [base.url, base.sim]) if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(u)) throw new Error(`only 127.0.0.1 is measured, not ${u}`);

const line = (r: Result) => `${(r.ms / 1000).toFixed(3)} s, ${(r.bytes / 1048576).toFixed(2)} MiB, ${r.ending}`;
const routed = (messages: unknown) =>
  measure(`${base.url}/api/v1/chat/completions`, { model: values.model, stream: true, messages }, { authorization: `Bearer ${base.key}` });
const direct = (messages: unknown) => measure(`${base.sim}/groq/v1/chat/completions`, { model: "llama-3.1-8b-instant", stream: true, messages }, {});
try {
  for (const size of values.sizes.split(",").filter(Boolean).map(Number)) {
    const messages = [{ role: "user", content: `one big event [sim tokens=3 big=${size}]` }];
    console.log(`event of ${size} bytes\n  simulator directly: ${line(await direct(messages))}\n  through the router: ${line(await routed(messages))}`);
  }
  const chunks = Number(values.chunks);
  if (chunks > 0) {
    const times = { direct: [] as number[], routed: [] as number[] };
    for (let i = 0; i < Number(values.repeat); i++) {
      const messages = [{ role: "user", content: `stream ${i} [sim tokens=${chunks}]` }];
      const d = await direct(messages);
      const r = await routed(messages);
      if (r.ending !== "[DONE]") throw new Error(`stream ${i}: ${r.ending}`);
      times.direct.push(d.ms);
      times.routed.push(r.ms);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      `${values.repeat} streams of ${chunks} chunks, median ms: simulator directly ${median(times.direct).toFixed(1)}, through the router ${median(times.routed).toFixed(1)}`,
    );
  }
} finally {
  await service?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
}
