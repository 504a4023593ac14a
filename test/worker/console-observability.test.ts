import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, call, chat, until, user } from "./helpers";
import { ConsoleClient, createKeyViaConsole, signUp, textOf, uniqueEmail } from "./console-helpers";
import { accept, invite } from "./member-helpers";
import { hashApiKey } from "../../src/keys/api-key";
import { logDelivery } from "../../src/observability/destination-store";

// The console's trace export page (/settings/observability, docs/observability.md): an account's destinations
// created, changed and deleted through the same checks and store as `/api/v1/observability/destinations`, a
// webhook's signing secret shown once, header values masked, each destination's delivery log newest first;
// signed in, CSRF on every form, owners and admins only, scoped to the session's account.

const OTLP = env.OTLP_TEST_URL;
const PAGE = "/settings/observability";
const secretIn = (html: string) => /value="(whsec_[0-9a-f]{64})"/.exec(html)?.[1];

type Row = Record<string, unknown> & { id: string; name: string; enabled: number; sampling_rate: number; api_key_hashes: string | null; headers: string };
const rowsOf = async (accountId: string) =>
  (await env.DB.prepare("SELECT * FROM observability_destinations WHERE account_id = ? ORDER BY created_at").bind(accountId).all<Row>()).results;
const auditOf = async (accountId: string) =>
  (await env.DB.prepare("SELECT action, target FROM audit_events WHERE account_id = ? ORDER BY id").bind(accountId).all<{ action: string; target: string }>())
    .results;

const collectorForm = (over: Record<string, string> = {}) => ({
  type: "otel-collector",
  name: "Collector",
  endpoint: OTLP,
  encoding: "json",
  headers: "",
  sampling_rate: "1",
  enabled: "on",
  ...over,
});

describe("/settings/observability", () => {
  it("needs a signed-in session and the form's CSRF token", async () => {
    const anonymous = new ConsoleClient();
    const page = await anonymous.get(PAGE);
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toMatch(/^\/sign-in/);
    expect((await anonymous.post(PAGE, collectorForm(), { csrf: "nope" })).headers.get("location")).toMatch(/^\/sign-in/);

    const { client, accountId } = await signUp();
    expect((await client.post(PAGE, collectorForm(), { csrf: null })).status).toBe(403);
    expect((await client.post(PAGE, collectorForm(), { csrf: "forged-token" })).status).toBe(403);
    expect(await rowsOf(accountId)).toEqual([]);
  });

  it("creates a webhook with its signing secret shown once; collector headers masked; edits; deletes; each change audited", async () => {
    const { client, accountId } = await signUp();
    const empty = await client.page(PAGE);
    expect(empty.status).toBe(200);
    expect(empty.html).toContain(`href="${PAGE}" aria-current="page"`);
    expect(textOf(empty.html)).toContain("No destinations yet");

    // Refused by the API's own checks, in words, nothing stored.
    const refused = await client.post(PAGE, collectorForm({ endpoint: "http://collector.example.com:4318", sampling_rate: "2" }));
    expect(refused.status).toBe(400);
    const refusedText = textOf(await refused.text());
    expect(refusedText).toContain("must be an https URL");
    expect(refusedText).toContain("0 to 1");
    expect((await client.post(PAGE, collectorForm({ headers: "no colon here" }))).status).toBe(400);
    expect(await rowsOf(accountId)).toEqual([]);

    const hook = await client.post(PAGE, {
      type: "webhook",
      name: "Hook",
      endpoint: "https://hooks.example.test/traces",
      method: "PUT",
      headers: "",
      sampling_rate: "0.25",
      enabled: "on",
      broadcast_cost: "on",
    });
    expect(hook.status).toBe(200);
    const hookHtml = await hook.text();
    const secret = secretIn(hookHtml)!;
    expect(secret).toBeDefined();
    expect(textOf(hookHtml)).toContain("this is the only time it is shown");
    const [row] = await rowsOf(accountId);
    expect(row).toMatchObject({ type: "webhook", name: "Hook", endpoint: "https://hooks.example.test/traces", method: "PUT", sampling_rate: 0.25 });
    expect(row!.broadcast_cost).toBe(1);
    expect(row!.privacy_mode).toBe(1);
    expect(JSON.stringify(row)).not.toContain(secret.slice(6, 40));
    const again = await client.page(PAGE);
    expect(secretIn(again.html)).toBeUndefined();
    expect(again.html).not.toContain(secret);
    expect(textOf(again.html)).toContain(`${secret.slice(0, 4)}...${secret.slice(-4)}`);
    expect(secretIn((await client.page(`${PAGE}/${row!.id}`)).html)).toBeUndefined();

    // A collector with a credential header: shown masked, never in full.
    const col = await client.post(PAGE, collectorForm({ headers: "authorization: Bearer console-collector-0001\nx-team: ops-team-secret" }));
    expect(col.status).toBe(303);
    const collector = (await rowsOf(accountId)).find((r) => r.type === "otel-collector")!;
    expect(col.headers.get("location")).toBe(`${PAGE}?done=created`);
    const list = await client.page(`${PAGE}?done=created`);
    expect(list.html).not.toContain("console-collector");
    expect(textOf(list.html)).toContain("Bear...0001");
    const edit = await client.page(`${PAGE}/${collector.id}`);
    expect(edit.status).toBe(200);
    expect(edit.html).not.toContain("console-collector");
    expect(edit.html).not.toContain("ops-team-secret");
    expect(collector.headers).not.toContain("console-collector");

    // Edited with the masked header sent back as shown: the stored value stays; off, sampled, one key only.
    const { key } = await createKeyViaConsole(client, "app");
    const saved = await client.post(
      `${PAGE}/${collector.id}`,
      {
        name: "Renamed",
        endpoint: OTLP,
        encoding: "protobuf",
        headers: "authorization: Bear...0001",
        sampling_rate: "0.5",
        [`key_${hashApiKey(key)}`]: "on",
      },
      { from: `${PAGE}/${collector.id}` },
    );
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`${PAGE}/${collector.id}?done=saved`);
    const changed = (await rowsOf(accountId)).find((r) => r.id === collector.id)!;
    expect(changed).toMatchObject({ name: "Renamed", enabled: 0, sampling_rate: 0.5, encoding: "protobuf", header_hints: '{"authorization":"Bear...0001"}' });
    expect(JSON.parse(changed.api_key_hashes!)).toEqual([hashApiKey(key)]);
    const api = await admin<{ key: string }>("/keys", { account: accountId, management: true });
    expect(
      (await (await call(`/api/v1/observability/destinations/${collector.id}`, { headers: { authorization: `Bearer ${api.key}` } })).json()) as object,
    ).toMatchObject({
      data: { name: "Renamed", enabled: false, config: { headers: { authorization: "Bear...0001" } } },
    });
    const badEdit = await client.post(`${PAGE}/${collector.id}`, { name: "", endpoint: "ftp://x", sampling_rate: "x" }, { from: `${PAGE}/${collector.id}` });
    expect(badEdit.status).toBe(400);
    expect((await rowsOf(accountId)).find((r) => r.id === collector.id)!.updated_at).toBe(changed.updated_at);

    expect((await client.post(`${PAGE}/${row!.id}/delete`, {}, { from: PAGE })).status).toBe(303);
    expect((await rowsOf(accountId)).map((r) => r.id)).toEqual([collector.id]);
    expect((await client.page(`${PAGE}/${row!.id}`)).status).toBe(404);

    expect(await auditOf(accountId)).toEqual(
      expect.arrayContaining([
        { action: "POST /settings/observability", target: "name=Hook" },
        { action: "POST /settings/observability", target: "name=Collector" },
        { action: "POST /settings/observability/:id", target: `${collector.id} name=Renamed` },
        { action: "POST /settings/observability/:id/delete", target: row!.id },
      ]),
    );
    expect((await auditOf(accountId)).filter((a) => a.action.includes("observability"))).toHaveLength(4);
  });

  it("never shows or changes another account's destination", async () => {
    const a = await signUp();
    const b = await signUp();
    expect((await a.client.post(PAGE, collectorForm({ name: "Mine" }))).status).toBe(303);
    const [mine] = await rowsOf(a.accountId);
    expect(textOf((await b.client.page(PAGE)).html)).not.toContain("Mine");
    expect((await b.client.page(`${PAGE}/${mine!.id}`)).status).toBe(404);
    expect((await b.client.post(`${PAGE}/${mine!.id}`, collectorForm({ name: "Theirs" }), { from: PAGE })).status).toBe(404);
    expect((await b.client.post(`${PAGE}/${mine!.id}/delete`, {}, { from: PAGE })).status).toBe(404);
    expect(await rowsOf(a.accountId)).toEqual([mine]);
  });

  it("shows a destination's delivery attempts, newest first and bounded, after spans went through the traces queue", async () => {
    const { client, accountId } = await signUp();
    await admin(`/accounts/${accountId}/credits`, { usd: 1 });
    expect((await client.post(PAGE, collectorForm({ name: "Live", headers: `authorization: Bearer live-${accountId}` }))).status).toBe(303);
    const [live] = await rowsOf(accountId);
    expect(textOf((await client.page(`${PAGE}/${live!.id}`)).html)).toContain("Nothing delivered yet");
    const { key } = await createKeyViaConsole(client, "app");
    expect((await chat(key, { model: "openai/gpt-oss-20b", ...user("hi [sim tokens=5]") })).status).toBe(200);
    const shown = await until(
      async () => textOf((await client.page(`${PAGE}/${live!.id}`)).html),
      (t) => t.includes("delivered (200)"),
      20_000, // the records queue, then the traces queue
    );
    expect(shown).toContain("delivered (200)");

    // More attempts than the page shows: the newest 50, newest first.
    expect((await client.post(PAGE, collectorForm({ name: "Busy" }))).status).toBe(303);
    const busy = (await rowsOf(accountId)).find((r) => r.name === "Busy")!;
    for (let i = 1; i <= 55; i++)
      await logDelivery(
        env.DB,
        { accountId, destinationId: busy.id, at: Date.UTC(2026, 0, 1, 0, i), spans: i, attempt: 1, status: 503, outcome: "retrying" },
        500,
      );
    const html = (await client.page(`${PAGE}/${busy.id}`)).html;
    const spans = [...html.matchAll(/data-label="Spans">(\d+)</g)].map((m) => Number(m[1]));
    expect(spans).toEqual(Array.from({ length: 50 }, (_, i) => 55 - i));
    expect(textOf(html)).toContain("retrying (503)");
  });

  it("is an owner's and an admin's: a member gets 403 and nothing changes", async () => {
    const owner = await signUp();
    const { token } = await invite(owner.client, uniqueEmail(), "member");
    const member = (await accept(token)).client;
    expect((await owner.client.post(PAGE, collectorForm({ name: "Owned" }))).status).toBe(303);
    const before = await rowsOf(owner.accountId);
    const id = before[0]!.id;
    expect((await owner.client.page("/settings/keys")).html).toContain(`href="${PAGE}"`);
    expect((await member.page("/settings/keys")).html).not.toContain(`href="${PAGE}"`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await member.page("/settings/password")).html)![1]!;
    for (const path of [PAGE, `${PAGE}/${id}`]) {
      const res = await member.page(path);
      expect(res.status).toBe(403);
      expect(res.html).not.toContain("Owned");
    }
    for (const [path, fields] of [
      [PAGE, collectorForm({ name: "Sneaky" })],
      [`${PAGE}/${id}`, collectorForm({ name: "Sneaky", enabled: "" })],
      [`${PAGE}/${id}/delete`, {}],
    ] as const) {
      const res = await member.post(path, fields, { csrf });
      expect(res.status).toBe(403);
      expect(textOf(await res.text())).toContain("Your role does not allow this");
    }
    expect(await rowsOf(owner.accountId)).toEqual(before);
  });
});
