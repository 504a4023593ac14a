import { describe, it, expect } from "vitest";
import { chat, newAccount, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import { readSse } from "./sse";

// Chat passes fields it does not know on to the carrier as sent (as OpenRouter does), so a typo is never
// refused — and never billed silently either: the answer names them, in a header on every served answer
// and in the routing metadata when asked for.
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const HAIKU = "anthropic/claude-haiku-4.5";
type Json = Record<string, any>;
const META = { "x-openrouter-metadata": "enabled" };

describe("fields the router does not know", () => {
  it("a typo is served, named in x-switchyard-unknown-parameters and the metadata's params, and sent on as sent", async () => {
    const a = await newAccount(5);
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, temprature: 0.2, top_p: 0.5, chat_template_kwargs: { x: 1 }, ...user(`hi [sim tag=${tag}]`) }, META);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-unknown-parameters")).toBe("temprature, chat_template_kwargs");
    const json = (await res.json()) as Json;
    expect(json.openrouter_metadata.params.unknown_parameters).toEqual(["temprature", "chat_template_kwargs"]);
    const [sent] = await simRequests(tag);
    expect(sent!.body).toMatchObject({ temprature: 0.2, top_p: 0.5, chat_template_kwargs: { x: 1 } });
  });

  it("streamed: the header, and the metadata chunk names them", async () => {
    const a = await newAccount(5);
    const res = await chat(a.key, { model: HAIKU, stream: true, max_tokens: 20, temprature: 0.2, ...user("hi") }, META);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-unknown-parameters")).toBe("temprature");
    const events = await readSse(res);
    const meta = events.find((e): e is Json => e !== "[DONE]" && (e as Json).openrouter_metadata)!.openrouter_metadata;
    expect(meta.params.unknown_parameters).toEqual(["temprature"]);
  });

  it("known fields are not named: the contract's, OpenAI's, the router's own", async () => {
    const a = await newAccount(5);
    const res = await chat(
      a.key,
      { model: LLAMA, temperature: 0.2, seed: 1, user: "u1", session_id: "s", provider: { sort: "price" }, verbosity: "low", store: false, ...user("hi") },
      META,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-unknown-parameters")).toBeNull();
    expect(((await res.json()) as Json).openrouter_metadata.params?.unknown_parameters).toBeUndefined();
  });
});
