import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, call, newAccount } from "./helpers";
import { ledgerFor } from "../../src/ledger/ledger";

// /api/v1/alerts (src/api/alert-routes.ts): thresholds, endpoints (the secret once), a test event, the alerts
// fired and the delivery log — management keys only, scoped to the key's account, bad input a 400 naming it.

async function managementKey(accountId: string): Promise<string> {
  return (await admin<{ key: string }>("/keys", { account: accountId, management: true })).key;
}
const api = (key: string, method: string, path: string, body?: unknown) =>
  call(`/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe("the alerts API", () => {
  it("sets and reads thresholds; refuses bad ones with a 400 naming the field; another account's key is a 404; API keys get 403", async () => {
    const { accountId, key, hash } = await newAccount(1, 10);
    const mk = await managementKey(accountId);
    expect((await api(key, "GET", "/alerts/rules")).status).toBe(403);
    expect(await (await api(mk, "PUT", "/alerts/rules/balance", { thresholds_usd: [5, "0.5"] })).json()).toEqual({ data: { balance_below_usd: [5, 0.5] } });
    expect(await (await api(mk, "PUT", `/alerts/rules/keys/${hash}`, { percents: [100, 50, 80] })).json()).toEqual({
      data: { key_hash: hash, percents: [50, 80, 100] },
    });
    expect(await (await api(mk, "GET", "/alerts/rules")).json()).toEqual({ data: { balance_below_usd: [0.5, 5], keys: { [hash]: [50, 80, 100] } } });
    const bad = await api(mk, "PUT", `/alerts/rules/keys/${hash}`, { percents: [0] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("`percents`: Each threshold is a whole percent from 1 to 100");
    expect((await api(mk, "PUT", "/alerts/rules/balance", { thresholds_usd: [-1] })).status).toBe(400);
    expect((await api(mk, "PUT", "/alerts/rules/balance", { amounts: [1] })).status).toBe(400);
    const other = await newAccount(1);
    expect((await api(mk, "PUT", `/alerts/rules/keys/${other.hash}`, { percents: [50] })).status).toBe(404);
    expect((await ledgerFor(env, accountId).alertRules()).keyPercents).toEqual({ [hash]: [50, 80, 100] });
  });

  it("adds an endpoint (the secret once), lists it without its secret, queues a test event, deletes it; another account's is a 404", async () => {
    const { accountId } = await newAccount(1);
    const mk = await managementKey(accountId);
    expect((await api(mk, "POST", "/alerts/endpoints", { url: "http://hooks.example.test/x" })).status).toBe(400);
    const created = await api(mk, "POST", "/alerts/endpoints", { url: "https://hooks.example.test/switchyard#frag" });
    expect(created.status).toBe(201);
    const { data, secret } = (await created.json()) as { data: { id: string; url: string; secret_hint: string }; secret: string };
    expect(data).toMatchObject({ url: "https://hooks.example.test/switchyard", secret_hint: secret.slice(-4) });
    const listed = await (await api(mk, "GET", "/alerts/endpoints")).text();
    expect(listed).toContain(data.id);
    expect(listed).not.toContain(secret);
    const other = await newAccount(1);
    const otherKey = await managementKey(other.accountId);
    expect((await api(otherKey, "POST", `/alerts/endpoints/${data.id}/test`)).status).toBe(404);
    expect((await api(otherKey, "DELETE", `/alerts/endpoints/${data.id}`)).status).toBe(404);
    expect(await (await api(otherKey, "GET", "/alerts/endpoints")).json()).toEqual({ data: [] });
    const tested = await api(mk, "POST", `/alerts/endpoints/${data.id}/test`);
    expect(tested.status).toBe(202);
    expect(await tested.json()).toEqual({ data: { event_id: expect.stringMatching(/^alrt_/), queued: true } });
    expect(await (await api(mk, "DELETE", `/alerts/endpoints/${data.id}`)).json()).toEqual({ deleted: true });
    expect((await api(mk, "DELETE", `/alerts/endpoints/${data.id}`)).status).toBe(404);
    expect(await (await api(mk, "GET", "/alerts?limit=5")).json()).toEqual({ data: [] });
    expect((await api(mk, "GET", "/alerts/deliveries?limit=0")).status).toBe(400);
  });
});
