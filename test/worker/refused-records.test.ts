import { describe, it, expect } from "vitest";
import { call, chat, generation, newAccount, user } from "./helpers";

// A request refused at any stage settles once, recorded at cost 0 with what its stages decided before
// the refusal: the model as asked, the strategy once the candidates are known, the session once checked.
type Json = Record<string, unknown>;
const LLAMA = "meta-llama/llama-3.1-8b-instruct";

async function recordOf(key: string, res: Response): Promise<Json> {
  await res.arrayBuffer();
  return generation(key, res.headers.get("x-generation-id")!);
}

describe("records of refused requests", () => {
  it("an unknown model: the record names it as sent, with no strategy or session", async () => {
    const a = await newAccount(1);
    const res = await chat(a.key, { model: "no-such/model", session_id: "conv-1", ...user("hi") });
    expect(res.status).toBe(400);
    expect(await recordOf(a.key, res)).toMatchObject({
      status: 400,
      total_cost: 0,
      model: "no-such/model",
      routing_strategy: null,
      session_id: null,
      streamed: false,
    });
  });

  it("an invalid X-OpenRouter-Metadata: the candidates are known (model, strategy), the session not yet", async () => {
    const a = await newAccount(1);
    const res = await chat(a.key, { model: LLAMA, stream: true, session_id: "conv-2", ...user("hi") }, { "x-openrouter-metadata": "maybe" });
    expect(res.status).toBe(400);
    expect(await recordOf(a.key, res)).toMatchObject({
      status: 400,
      total_cost: 0,
      model: LLAMA,
      routing_strategy: "direct",
      session_id: null,
      streamed: true,
    });
  });

  it("a plan the preferences empty (404): model, strategy and session are all recorded", async () => {
    const a = await newAccount(1);
    const res = await chat(a.key, { model: LLAMA, session_id: "conv-3", provider: { only: ["no-such-carrier"] }, ...user("hi") });
    expect(res.status).toBe(404);
    expect(await recordOf(a.key, res)).toMatchObject({ status: 404, total_cost: 0, model: LLAMA, routing_strategy: "direct", session_id: "conv-3" });
  });

  it("embeddings asking a completion model: recorded as an embeddings request naming the model, nothing charged", async () => {
    const a = await newAccount(1);
    const res = await call("/api/v1/embeddings", {
      method: "POST",
      headers: { authorization: `Bearer ${a.key}`, "content-type": "application/json", "x-session-id": "conv-4" },
      body: JSON.stringify({ model: LLAMA, input: "a sentence", user: "someone" }),
    });
    expect(res.status).toBe(400);
    expect(await recordOf(a.key, res)).toMatchObject({
      status: 400,
      total_cost: 0,
      model: LLAMA,
      inbound_api: "embeddings",
      routing_strategy: null,
      external_user: "someone",
    });
  });
});
