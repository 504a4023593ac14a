import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { requestFacts } from "../../src/serve/request-facts";
import { settings } from "../../src/settings";
import { RequestTrail, settle, SettledTwice } from "../../src/serve/settle";
import type { Stages } from "../../src/serve/stages";
import { failedOutcome } from "../../src/request/outcome";
import { newAccount, generation } from "./helpers";
import type { ApiKey } from "../../src/db/schema";

// A request is settled in one place (src/serve/serve-request.ts); a second settle of one generation is impossible.
describe("settle", () => {
  it("settles a request once; a second settle throws before it reaches the ledger", async () => {
    const a = await newAccount(1);
    const pending: Promise<unknown>[] = [];
    const key = { hash: a.hash, accountId: a.accountId, isManagement: false, limitNano: null, limitReset: null } as unknown as ApiKey;
    const waitUntil = (p: Promise<unknown>) => void pending.push(p);
    const facts = requestFacts(
      env,
      settings(env),
      waitUntil,
      { key, accountId: a.accountId, guardrails: [], byok: [] },
      new Request("http://localhost/api/v1/chat/completions"),
      "chat",
    );
    const trail = new RequestTrail(waitUntil, () => {});
    const model = "meta-llama/llama-3.1-8b-instruct";
    const stages: Stages = { names: { requestedModel: model, model, strategy: null, sessionId: null } };
    await settle(facts, trail, stages, failedOutcome(400, "first"));
    expect(() => settle(facts, trail, stages, failedOutcome(500, "second"))).toThrow(SettledTwice);
    await Promise.all(pending);
    expect(await generation(a.key, facts.genId)).toMatchObject({ status: 400, error_message: "first", total_cost: 0 });
  });
});
