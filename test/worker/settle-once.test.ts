import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { newRequestContext } from "../../src/serve/request-context";
import { settle, SettledTwice } from "../../src/serve/settle";
import { failedOutcome } from "../../src/request/outcome";
import { newAccount, generation } from "./helpers";
import type { ApiKey } from "../../src/db/schema";

// A request is settled in one place (src/serve/serve-request.ts); a second settle of one generation is impossible.
describe("settle", () => {
  it("settles a request once; a second settle throws before it reaches the ledger", async () => {
    const a = await newAccount(1);
    const pending: Promise<unknown>[] = [];
    const key = { hash: a.hash, accountId: a.accountId, isManagement: false, limitNano: null, limitReset: null } as unknown as ApiKey;
    const rc = newRequestContext(env, { waitUntil: (p) => void pending.push(p) }, { key, accountId: a.accountId }, new Headers(), () => {});
    rc.model = "meta-llama/llama-3.1-8b-instruct";
    await settle(rc, failedOutcome(400, "first"));
    expect(() => settle(rc, failedOutcome(500, "second"))).toThrow(SettledTwice);
    await Promise.all(pending);
    expect(await generation(a.key, rc.genId)).toMatchObject({ status: 400, error_message: "first", total_cost: 0 });
  });
});
