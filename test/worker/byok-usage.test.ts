import { describe, it, expect } from "vitest";
import { admin, chat, debited, generation, get, uncachedCost } from "./helpers";
import { accountWithManagementKey, guardrailsApi as api } from "./guardrail-helpers";
import { uniqueTag } from "./sim";
import { createKeyViaConsole, signUp, textOf } from "./console-helpers";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { byokFeeNano } from "../../src/request/charge";

// A key's BYOK usage (docs/byok.md, Money): what the carrier charged the account's own key for the key's
// requests, shown beside the usage the key was debited (the fee), and counted in the key's limit when the
// key says include_byok_in_limit.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MODEL = "meta-llama/llama-3.1-8b-instruct";
const CARRIER = "deepinfra";
const endpoint = Catalog.parse(catalogJson)
  .endpoints(MODEL)
  .find((e) => e.provider === CARRIER)!;
const FEE_MILLI = 5000; // BYOK_FEE_PERCENT's default, 5 %
const nano = (usd: number) => Math.round(usd * 1e9);

/** An account whose own key serves the carrier (mode `only`: the platform's key never does). */
async function byokAccount(carrierKey: string) {
  const a = await accountWithManagementKey(5);
  const res = await api(a.mgmt, "POST", "/byok", { provider: CARRIER, key: carrierKey, mode: "only" });
  expect(res.status, await res.clone().text()).toBe(201);
  return a;
}

/** A new API key of the account made through /keys with these fields. */
async function newKey(mgmt: string, fields: Json): Promise<{ key: string; hash: string }> {
  const res = await api(mgmt, "POST", "/keys", { name: "byok usage", ...fields });
  expect(res.status, await res.clone().text()).toBe(201);
  const body = (await res.json()) as Json;
  return { key: body.key, hash: body.data.hash };
}

function ask(key: string, extra: Json = {}) {
  return chat(key, { model: MODEL, provider: { only: [CARRIER] }, messages: [{ role: "user", content: `hi [sim tokens=9 tag=${uniqueTag()}]` }], ...extra });
}

/** A served request's upstream cost (what the carrier charged) and the fee debited for it. */
async function served(res: Response): Promise<{ id: string; upstream: number; fee: number }> {
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as Json;
  const upstream = uncachedCost(body.usage.prompt_tokens, body.usage.completion_tokens, endpoint);
  return { id: body.id, upstream, fee: byokFeeNano(upstream, FEE_MILLI) };
}

const keyObject = async (key: string) => ((await (await get("/key", key)).json()) as Json).data;

describe("a key's BYOK usage", () => {
  it("is what the carrier charged for its BYOK requests, in every window, exact; usage is the fee — on /key, /keys/{hash} and /keys", async () => {
    const a = await byokAccount("byok-usage-shown-0001");
    const first = await served(await ask(a.key));
    const second = await served(await ask(a.key));
    await debited(a.accountId, 2);
    const upstream = first.upstream + second.upstream;
    const fee = first.fee + second.fee;
    expect(upstream).toBeGreaterThan(fee);
    const managed = ((await (await api(a.mgmt, "GET", `/keys/${a.hash}`)).json()) as Json).data;
    const listed = ((await (await api(a.mgmt, "GET", "/keys")).json()) as Json).data.find((k: Json) => k.hash === a.hash);
    for (const k of [await keyObject(a.key), managed, listed]) {
      for (const w of ["", "_daily", "_weekly", "_monthly"]) {
        expect(nano(k[`byok_usage${w}`]), `byok_usage${w}`).toBe(upstream);
        expect(nano(k[`usage${w}`]), `usage${w}`).toBe(fee);
      }
    }
  });

  it("the console's keys page shows it beside the usage", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 1 });
    const mgmt = (await admin<{ key: string }>("/keys", { account: accountId, management: true })).key;
    expect((await api(mgmt, "POST", "/byok", { provider: CARRIER, key: "byok-usage-console-0003", mode: "only" })).status).toBe(201);
    const { key } = await createKeyViaConsole(client, "byok spender");
    const s = await served(await ask(key));
    await debited(accountId);
    const row = /<th scope="row">byok spender<\/th>[\s\S]*?<\/tr>/.exec((await client.page("/settings/keys")).html)![0];
    const shown = (n: number) => `$${(n / 1e9).toFixed(9).replace(/0+$/, "")}`;
    expect(textOf(row)).toContain(`${shown(s.fee)} ${shown(s.fee)} today ${shown(s.upstream)} BYOK`);
  });

  it("include_byok_in_limit: the limit counts usage and BYOK usage; a key whose limit BYOK usage nearly spent is refused the next request (402, nothing held or debited); without it, the same request is served", async () => {
    const a = await byokAccount("byok-usage-limit-0002");
    // Room left after the first request: more than the fee's worst case of the next (held against the balance), less than
    // what the carrier may bill for it (held against a key that counts BYOK usage). max_tokens 1000 at the output price alone
    // bills outputNano × 1000; the fee's worst case is 5 % of that and of a prompt of a few hundred bytes.
    const room = (endpoint.outputNano * 1000) / 2;
    const counting = await newKey(a.mgmt, { limit: 1, include_byok_in_limit: true });
    const plain = await newKey(a.mgmt, { limit: 1 });
    const firsts = [await served(await ask(counting.key)), await served(await ask(plain.key))];
    await debited(a.accountId, 2);
    for (const [k, s, include] of [
      [counting, firsts[0]!, true],
      [plain, firsts[1]!, false],
    ] as const) {
      const limit = s.fee + s.upstream + room;
      const patched = await api(a.mgmt, "PATCH", `/keys/${k.hash}`, { limit: limit / 1e9 });
      expect(patched.status, await patched.clone().text()).toBe(200);
      const shown = (await patched.json()) as Json;
      expect(nano(shown.data.limit_remaining)).toBe(include ? room : s.upstream + room);
      expect(nano((await keyObject(k.key)).limit_remaining)).toBe(include ? room : s.upstream + room);
    }
    const next = { max_tokens: 1000 };
    const refused = await ask(counting.key, next);
    expect(refused.status, await refused.clone().text()).toBe(402);
    const error = ((await refused.json()) as Json).error;
    expect(error.metadata.limit_source).toBe("key_limit");
    expect(await generation(counting.key, refused.headers.get("x-generation-id")!)).toMatchObject({ status: 402, total_cost: 0 });
    const ok = await served(await ask(plain.key, next));
    await debited(a.accountId, 4);
    const after = await keyObject(counting.key);
    expect([nano(after.usage), nano(after.byok_usage), nano(after.limit_remaining)]).toEqual([firsts[0]!.fee, firsts[0]!.upstream, room]);
    const totals = await admin<Json>(`/accounts/${a.accountId}`);
    expect(nano(totals.total_usage)).toBe(firsts[0]!.fee + firsts[1]!.fee + ok.fee);
    expect(totals.held).toBe(0);
  });
  it("a key's budget alert counts what its limit counts: with include_byok_in_limit what the carrier charged fires 1 %; without, the fee alone does not", async () => {
    const a = await byokAccount("byok-usage-alerts-0003");
    const probe = await newKey(a.mgmt, {});
    const small = { max_tokens: 20 }; // every request here bills the same (sim tokens=9); its key hold fits the limit below
    const one = await served(await ask(probe.key, small));
    // 1 % of the limit is one request's fee and carrier charge together: the counting key reaches it, the fee alone does not.
    const limit = (one.upstream + one.fee) * 100;
    const counting = await newKey(a.mgmt, { limit: limit / 1e9, include_byok_in_limit: true });
    const plain = await newKey(a.mgmt, { limit: limit / 1e9 });
    for (const k of [counting, plain]) expect((await api(a.mgmt, "PUT", `/alerts/rules/keys/${k.hash}`, { percents: [1] })).status).toBe(200);
    await served(await ask(counting.key, small));
    await served(await ask(plain.key, small));
    await debited(a.accountId, 3);
    const fired = ((await (await api(a.mgmt, "GET", "/alerts")).json()) as Json).data as Json[];
    expect(fired.map((f) => [f.type, f.data.key_hash, f.data.threshold_percent, nano(f.data.usage_usd)])).toEqual([
      ["key.budget_threshold", counting.hash, 1, one.upstream + one.fee],
    ]);
  });
});
