// `npx tsx bench/floor-check.ts`: checks that every variant of the floor relay (bench/floor-relay-worker.js)
// does the whole floor job, so that timing them compares like with like: for a short and a 2,000-chunk
// stream from the simulator, every variant answers the same bytes (our id aside), every carrier chunk carries
// our id, model and provider, and nothing is lost or added. Everything on 127.0.0.1, bounded in time.
import { Miniflare } from "miniflare";
import { fileURLToPath } from "node:url";
import { startSimulator } from "../simulator/server.ts";
import { FLOOR_VARIANTS } from "./floor-variants.ts";

const MODEL = "meta-llama/llama-3.1-8b-instruct";
const sim = await startSimulator({ port: 0, host: "127.0.0.1" });
const mf = new Miniflare({
  modules: true,
  scriptPath: fileURLToPath(new URL("./floor-relay-worker.js", import.meta.url)),
  compatibilityDate: "2026-04-01",
  bindings: { UPSTREAM: sim.url, CARRIER_PATH: "/groq/v1/chat/completions", MODEL, PROVIDER: "groq" },
  host: "127.0.0.1",
  port: 0,
});
let failed = 0;
try {
  const url = new URL("/api/v1/chat/completions", await mf.ready);
  for (const tokens of [3, 2000]) {
    const body = JSON.stringify({
      model: MODEL,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: `Floor check [sim tokens=${tokens}]` }],
    });
    const direct = await (await fetch(`${sim.url}/groq/v1/chat/completions`, { method: "POST", body, signal: AbortSignal.timeout(20_000) })).text();
    const carrierEvents = direct.split("\n\n").filter(Boolean);
    let reference: string | undefined;
    for (const variant of FLOOR_VARIANTS) {
      const res = await fetch(url, { method: "POST", headers: { "x-floor-variant": variant }, body, signal: AbortSignal.timeout(20_000) });
      const text = (await res.text()).replace(/gen-[0-9a-f-]+/g, "gen-X").replace(/"created":\d+/g, '"created":0');
      const events = text.split("\n\n").filter(Boolean);
      const rewritten = events.filter((e) => e.startsWith('data: {"id":"gen-X"') && e.includes(`"model":"${MODEL}","provider":"groq",`)).length;
      reference ??= text;
      const problems = [
        res.status !== 200 && `status ${res.status}`,
        events.length !== carrierEvents.length && `${events.length} events, the carrier sent ${carrierEvents.length}`,
        rewritten !== carrierEvents.length - 1 && `${rewritten} chunks rewritten of ${carrierEvents.length - 1}`,
        text !== reference && "answer differs from the first variant's",
      ].filter(Boolean);
      if (problems.length > 0) failed++;
      console.log(`${tokens} tokens, ${variant}: ${problems.length === 0 ? "ok" : problems.join("; ")}`);
    }
  }
} finally {
  await mf.dispose();
  await sim.close();
}
process.exit(failed > 0 ? 1 : 0);
