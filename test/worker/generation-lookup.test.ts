import { describe, it, expect } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext, runInDurableObject } from "cloudflare:test";
import { app } from "../../src/app";
import { findAcrossStages } from "../../src/generations/find-record";
import { storeBatch } from "../../src/generations/store-batches";
import { storeDeps } from "../../src/generations/records-queue";
import { newGenerationId } from "../../src/generations/generation-id";
import type { NewGeneration } from "../../src/db/schema";
import type { LedgerObject } from "../../src/ledger/ledger-object";
import { newAccount } from "./helpers";
import { settleRecords } from "./ledger-db";

describe("finding a record that moves through stages (isolate batch → ledger outbox → D1)", () => {
  /**
   * Every way a record can move forward while it is being looked for: it starts in some stage and
   * moves one stage on after any of the reads. Stages are read in pipeline order, the final store
   * first as a shortcut; the record must always be found.
   */
  it("finds a record in flight whenever it moves, for every starting stage and every pair of moves", async () => {
    const stages = 3;
    for (let start = 0; start < stages; start++)
      for (let firstMove = 0; firstMove <= stages + 1; firstMove++)
        for (let secondMove = firstMove; secondMove <= stages + 1; secondMove++) {
          let at = start;
          let reads = 0;
          const source = (stage: number) => async () => {
            const found = at === stage ? "record" : undefined;
            // After this read, the flush (or batch send) moves the record on.
            if (reads === firstMove || reads === secondMove) at = Math.min(at + 1, stages - 1);
            reads++;
            return found;
          };
          const found = await findAcrossStages([source(0), source(1), source(2)]);
          expect(found, `start ${start}, moves after reads ${firstMove} and ${secondMove}`).toBe("record");
        }
  });

  it("answers undefined for a record in no stage, asking the final store twice and each other stage once", async () => {
    const asked: string[] = [];
    const source = (name: string) => async () => void asked.push(name);
    expect(await findAcrossStages([source("batch"), source("outbox"), source("d1")])).toBeUndefined();
    expect(asked).toEqual(["d1", "batch", "outbox", "d1"]);
  });

  it("reads only the final store for a record already there", async () => {
    const asked: string[] = [];
    expect(await findAcrossStages([async () => void asked.push("outbox"), async () => (asked.push("d1"), "r")])).toBe("r");
    expect(asked).toEqual(["d1"]);
  });
});

describe("GET /generation while the records store takes the record", () => {
  it("finds a record that leaves the outbox for R2 just before the route reads the outbox (no spurious 404)", async () => {
    const a = await newAccount(1);
    const createdAt = Date.now();
    const id = newGenerationId(createdAt);
    const record: NewGeneration = {
      id,
      accountId: a.accountId,
      keyHash: a.hash,
      model: "openai/gpt-oss-20b",
      providerName: "Groq",
      app: null,
      streamed: false,
      createdAt,
      tokensPrompt: 1,
      tokensCompletion: 2,
      tokensReasoning: 0,
      costNano: 5,
      status: 200,
    };
    const ledger = env.LEDGER.get(env.LEDGER.idFromName(a.accountId));
    // In the outbox, given a batch, with no alarm: the test decides when it is stored.
    const batch = await runInDurableObject(ledger, (instance: LedgerObject, state) => {
      settleRecords(instance["db"], [record]);
      instance["outbox"].assign(1);
      return instance["outbox"].due(Date.now())[0]!.batch;
    });
    // The ledger as the route sees it: right before its first read of the outbox, the store takes the batch
    // (R2 written, index committed, the outbox row dropped), so that read misses.
    let moved = false;
    const moveOnce = async () => {
      if (moved) return;
      moved = true;
      await storeBatch(storeDeps(env), { v: 1, accountId: a.accountId, batch, items: [{ record: JSON.stringify(record) }] });
    };
    const ledgers = {
      idFromName: (name: string) => env.LEDGER.idFromName(name),
      get: (ledgerId: DurableObjectId) => {
        const stub = env.LEDGER.get(ledgerId);
        return new Proxy(stub, {
          get(target, prop) {
            if (prop === "pendingGeneration")
              return async (genId: string) => {
                await moveOnce();
                return target.pendingGeneration(genId);
              };
            return Reflect.get(target, prop);
          },
        });
      },
    };
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request(`https://switchyard.test/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${a.key}` } }),
      { ...env, LEDGER: ledgers as unknown as typeof env.LEDGER },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(moved).toBe(true);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { id: string; total_cost: number } }).data).toMatchObject({ id, total_cost: 5e-9 });
  });
});
