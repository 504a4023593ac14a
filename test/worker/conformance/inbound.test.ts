import { describe, it, expect } from "vitest";
import { call, debited, generation, newAccount, settled } from "../helpers";
import { simRequests, uniqueTag } from "../sim";
import { INBOUND_APIS, type InboundApiEntry } from "../../../src/protocols/inbound";
import { DIALECTS, type StreamEvent } from "./inbound-dialects";

// The inbound conformance suite: every inbound API registered in src/protocols/inbound/index.ts runs the
// same table of behaviours through the real app against the carrier simulator — text, stream, tools, a
// carrier error, a refusal of the body and of the key — each checked for its status, its body in the API's
// shape, the usage it shows against the record and the money debited. A behaviour an API cannot express is
// declared in its dialect (./inbound-dialects.ts) and tested as the refusal it is; none is skipped.

type Json = Record<string, any>;
const nano = (usd: number) => Math.round(usd * 1e9);

function post(path: string, key: string | null, body: unknown) {
  return call(`/api/v1${path}`, {
    method: "POST",
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A whole SSE response as its events (`event:` name and `data:`). */
async function events(res: Response): Promise<StreamEvent[]> {
  return (await res.text())
    .split("\n\n")
    .filter((e) => e.includes("data: "))
    .map((e) => {
      const lines = e.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? null;
      const data = lines.find((l) => l.startsWith("data: "))!.slice(6);
      return { event, data: data === "[DONE]" ? "[DONE]" : (JSON.parse(data) as Json) };
    });
}

/** The record of an answer (bounded wait). */
const recordOf = (key: string, res: Response) => generation(key, res.headers.get("x-generation-id")!);

/** A refusal or failure: its status, its body in the API's shape (the dialect checks it), its message; recorded under the API at cost 0, nothing debited. */
async function refusedAndRecorded(api: InboundApiEntry, a: { key: string; accountId: string }, res: Response, status: number, message: RegExp) {
  expect(res.status).toBe(status);
  expect(DIALECTS[api.name]!.error((await res.json()) as Json, status)).toMatch(message);
  expect(await recordOf(a.key, res)).toMatchObject({ inbound_api: api.api, status, total_cost: 0 });
  expect((await settled(a.accountId)).total_usage).toBe(0);
}

describe("the inbound conformance suite", () => {
  it("has a dialect for every registered inbound API (a new one is proven by its line in the suite's table)", () => {
    expect(Object.keys(DIALECTS).sort()).toEqual(INBOUND_APIS.map((a) => a.name).sort());
  });
});

describe.each(INBOUND_APIS.map((api) => [api.name, api] as const))("inbound API %s", (_name, api) => {
  const d = DIALECTS[api.name]!;
  const path = api.routes[0]!.path;

  it("text: a 200 in its shape, the usage it shows is the usage recorded, and what it cost is what was debited", async () => {
    const a = await newAccount(5);
    const tag = uniqueTag();
    const res = await post(path, a.key, d.text.body(d.model, `${tag} Name three rivers [sim tokens=7 tag=${tag}]`));
    expect(res.status).toBe(200);
    const { text, shown } = d.text.read((await res.json()) as Json);
    expect(text).not.toBe("");
    const g = await recordOf(a.key, res);
    expect(g).toMatchObject({ inbound_api: api.api, status: 200, streamed: false, tokens_prompt: shown.prompt, tokens_completion: shown.completion });
    expect(g.total_cost as number).toBeGreaterThan(0);
    expect(nano((await debited(a.accountId)).total_usage)).toBe(nano(g.total_cost as number));
    expect(await simRequests(tag)).toHaveLength(1);
  });

  it("stream: streamed in its events to its end, the usage it shows recorded — or refused, when it has no stream", async () => {
    const a = await newAccount(5);
    const prompt = `${uniqueTag()} Name three rivers [sim tokens=7]`;
    if ("refused" in d.stream) {
      const r = d.stream.refused;
      return refusedAndRecorded(api, a, await post(path, a.key, r.body(d.model, prompt)), r.status, r.message);
    }
    const res = await post(path, a.key, d.stream.body(d.model, prompt));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("streamContentType" in api ? api.streamContentType : null);
    const { text, shown, ended } = d.stream.read(await events(res));
    expect(text).not.toBe("");
    expect(ended).toBe(true);
    const g = await recordOf(a.key, res);
    expect(g).toMatchObject({ inbound_api: api.api, status: 200, streamed: true, tokens_prompt: shown.prompt, tokens_completion: shown.completion });
    expect(nano((await debited(a.accountId)).total_usage)).toBe(nano(g.total_cost as number));
  });

  it("tools: the carrier's tool call comes back as a call of the caller's tool, in its shape — or refused, when it calls none", async () => {
    const a = await newAccount(5);
    const prompt = `${uniqueTag()} Weather in Paris? [sim tool_call]`;
    if ("refused" in d.tools) {
      const r = d.tools.refused;
      return refusedAndRecorded(api, a, await post(path, a.key, r.body(d.model, prompt)), r.status, r.message);
    }
    const res = await post(path, a.key, d.tools.body(d.model, prompt));
    expect(res.status).toBe(200);
    const { name, args, finished } = d.tools.read((await res.json()) as Json);
    expect([name, typeof args, finished]).toEqual(["get_weather", "object", true]);
    expect(await recordOf(a.key, res)).toMatchObject({ inbound_api: api.api, status: 200 });
  });

  it("a carrier error: every carrier failing is a 502 in its error shape, recorded, nothing charged", async () => {
    const a = await newAccount(5);
    const res = await post(path, a.key, d.text.body(d.model, `${uniqueTag()} x [sim status=500]`));
    await refusedAndRecorded(api, a, res, 502, /simulated 500/);
  });

  it("a refused body: a 400 in its error shape before any carrier, recorded, nothing charged", async () => {
    const a = await newAccount(5);
    await refusedAndRecorded(api, a, await post(path, a.key, d.badBody), 400, /./);
  });

  it("a refused key: a 401 in its error shape", async () => {
    const res = await post(path, null, d.text.body(d.model, "x"));
    expect(res.status).toBe(401);
    expect(d.error((await res.json()) as Json, 401)).toMatch(/Missing API key/);
  });
});
