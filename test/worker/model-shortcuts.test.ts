import { describe, it, expect } from "vitest";
import { chat, generation, newAccount, user } from "./helpers";
import { readSse } from "./sse";

const LLAMA = "meta-llama/llama-3.1-8b-instruct";

describe("model shortcuts over HTTP", () => {
  it(":floor serves the cheapest carrier, bills its prices, and the answer, every chunk and the record name the id as sent", async () => {
    const a = await newAccount(1);
    const res = await chat(a.key, { model: `${LLAMA}:floor`, ...user("hi [sim tokens=3]") });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: string;
      model: string;
      provider: string;
      usage: { prompt_tokens: number; completion_tokens: number; cost: number };
    };
    expect(body).toMatchObject({ model: `${LLAMA}:floor`, provider: "DeepInfra" }); // $0.03 / $0.05 per 1M: the cheapest
    const { prompt_tokens, completion_tokens, cost } = body.usage;
    expect(Math.round(cost * 1e9)).toBe(prompt_tokens * 30 + completion_tokens * 50);
    expect(await generation(a.key, body.id)).toMatchObject({ model: `${LLAMA}:floor`, provider_name: "DeepInfra" });

    const stream = await chat(a.key, { model: `${LLAMA}:nitro`, stream: true, ...user("hi [sim tokens=3]") });
    expect(stream.status).toBe(200);
    const chunks = (await readSse(stream)).filter((d) => d !== "[DONE]");
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.model === `${LLAMA}:nitro`)).toBe(true);
  });

  it("a shortcut on a model the catalog does not have is 400, like any unknown model", async () => {
    const a = await newAccount(1);
    const res = await chat(a.key, { model: "nobody/nothing:floor", ...user("hi") });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/nobody\/nothing:floor is not in the catalog/);
  });
});
