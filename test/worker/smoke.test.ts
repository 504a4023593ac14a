import { describe, it, expect } from "vitest";
import { chat, newAccount, settled, generation, user } from "./helpers";

describe("smoke", () => {
  it("completes a non-stream request and charges it", async () => {
    const a = await newAccount(10);
    const res = await chat(a.key, { model: "openai/gpt-oss-20b", ...user("hello there") });
    const body = (await res.json()) as Record<string, any>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.id).toMatch(/^gen-/);
    const t = await settled(a.accountId);
    expect(t.total_usage).toBeCloseTo(body.usage.cost, 12);
    const g = await generation(a.key, body.id);
    expect(g.total_cost).toBe(body.usage.cost);
  });
});
