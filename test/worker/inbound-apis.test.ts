import { describe, it, expect } from "vitest";
import { call, newAccount, generation } from "./helpers";
import { simRequests, uniqueTag } from "./sim";

// The inbound APIs share one request path: the same question through chat, messages and responses is
// billed and recorded alike (only the inbound API differs). Anthropic's stream gets its keep-alive pings;
// its beta flags reach Anthropic carriers that take them and nobody else.
function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  return call(`/api/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

describe("one request path for every inbound API", () => {
  it.each(["meta-llama/llama-3.1-8b-instruct", "anthropic/claude-haiku-4.5", "google/gemini-2.5-flash"])(
    "%s: chat, messages and responses bill and record the same question alike",
    async (model) => {
      const { key } = await newAccount(5);
      const text = "Name three rivers [sim tokens=7]";
      const system = "Answer briefly.";
      const answers = await Promise.all([
        post("/chat/completions", key, {
          model,
          max_tokens: 100,
          messages: [
            { role: "system", content: system },
            { role: "user", content: text },
          ],
        }),
        post("/messages", key, { model, max_tokens: 100, system, messages: [{ role: "user", content: text }] }),
        post("/responses", key, { model, max_output_tokens: 100, instructions: system, input: [{ role: "user", content: text }] }),
      ]);
      for (const a of answers) expect(a.status).toBe(200);
      const records = await Promise.all(answers.map((a) => generation(key, a.headers.get("x-generation-id")!)));
      expect(records.map((r) => r.inbound_api)).toEqual(["chat", "messages", "responses"]);
      const billed = records.map((r) => ({ p: r.tokens_prompt, c: r.tokens_completion, cost: r.total_cost, provider: r.provider_name }));
      expect(billed[1]).toEqual(billed[0]);
      expect(billed[2]).toEqual(billed[0]);
      expect(billed[0]!.cost).toBeGreaterThan(0);
    },
  );

  it("a refused request is recorded under its inbound API, at cost 0", async () => {
    const { key } = await newAccount(5);
    const res = await post("/responses", key, { model: "meta-llama/llama-3.1-8b-instruct", input: "x", store: true });
    expect(res.status).toBe(400);
    const record = await generation(key, res.headers.get("x-generation-id")!);
    expect(record).toMatchObject({ inbound_api: "responses", status: 400, total_cost: 0 });
  });
});

describe("Anthropic's stream while the carrier is slow", () => {
  it("gets ping events between whole events (RELAY_PING_MS, 100 ms here)", async () => {
    const { key } = await newAccount(5);
    const res = await post("/messages", key, {
      model: "meta-llama/llama-3.1-8b-instruct",
      max_tokens: 50,
      stream: true,
      messages: [{ role: "user", content: "slowly [sim tokens=3 tps=3]" }],
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const events = text
      .split("\n\n")
      .filter(Boolean)
      .map((e) => e.split("\n")[0]!.replace("event: ", ""));
    // One ping follows message_start; the carrier's 333 ms pauses bring more, never inside another event.
    expect(events.filter((e) => e === "ping").length).toBeGreaterThanOrEqual(2);
    expect(events[0]).toBe("message_start");
    expect(events.at(-1)).toBe("message_stop");
    for (const e of text.split("\n\n").filter(Boolean)) expect(e).toMatch(/^event: [a-z_]+\ndata: \{.*\}$/s);
  });
});

describe("anthropic-beta", () => {
  it("reaches an Anthropic carrier with only the flags it takes; an unknown flag fails nothing", async () => {
    const { key } = await newAccount(5);
    const tag = uniqueTag();
    const res = await post(
      "/messages",
      key,
      { model: "anthropic/claude-haiku-4.5", max_tokens: 50, messages: [{ role: "user", content: `hi [sim tag=${tag} tokens=2]` }] },
      { "anthropic-beta": "interleaved-thinking-2025-05-14, made-up-flag-2099-01-01", "anthropic-version": "2099-01-01" },
    );
    expect(res.status).toBe(200);
    const [seen] = await simRequests(tag);
    expect(seen!.headers.anthropic_beta).toBe("interleaved-thinking-2025-05-14");
  });

  it("goes nowhere else: an OpenAI-compatible carrier sees neither the header nor the field", async () => {
    const { key } = await newAccount(5);
    const tag = uniqueTag();
    const res = await post(
      "/messages",
      key,
      { model: "meta-llama/llama-3.1-8b-instruct", max_tokens: 50, messages: [{ role: "user", content: `hi [sim tag=${tag} tokens=2]` }] },
      { "anthropic-beta": "interleaved-thinking-2025-05-14" },
    );
    expect(res.status).toBe(200);
    const [seen] = await simRequests(tag);
    expect(seen!.headers.anthropic_beta).toBeNull();
    expect(seen!.body).not.toHaveProperty("anthropic_beta");
  });
});
