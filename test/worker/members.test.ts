import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { ConsoleClient, PASSWORD, createKeyViaConsole, csrfOf, signUp, textOf, uniqueEmail } from "./console-helpers";
import { accept, accountState, invite, managementKeyOf, memberIdOf, setRole, team } from "./member-helpers";
import { call, chat, user } from "./helpers";
import { changeRole, removeMember } from "../../src/members/member-store";

const roleOf = async (memberId: string) => (await env.DB.prepare("SELECT role FROM members WHERE id = ?").bind(memberId).first<{ role: string }>())?.role;
const api = (key: string, method: string, path: string, body?: unknown) =>
  call(`/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const signIn = async (email: string, password = PASSWORD) => {
  const client = new ConsoleClient();
  const res = await client.post("/sign-in", { email, password }, { from: "/sign-in" });
  return { client, res };
};

describe("invitations", () => {
  it("an owner invites by a link shown once; the invitee chooses a password, is signed in to the account with the role, and signs in later with their email", async () => {
    const owner = await signUp();
    const email = uniqueEmail();
    const { token, res, html } = await invite(owner.client, email, "admin");
    expect(res.status).toBe(200);
    expect(textOf(html)).toContain(`Invitation for ${email}`);
    // Only the token's hash is stored, and the list never shows the link again.
    const row = await env.DB.prepare("SELECT token_hash, role, expires_at - created_at AS ttl FROM member_invites WHERE email = ?")
      .bind(email)
      .first<Record<string, unknown>>();
    expect(row).toMatchObject({ role: "admin", ttl: 72 * 3_600_000 });
    expect(row!.token_hash).not.toContain(token);
    const list = (await owner.client.page("/settings/members")).html;
    expect(list).toContain(email);
    expect(list).not.toContain(token);

    const joined = await accept(token);
    expect(joined.res.status).toBe(303);
    expect(joined.res.headers.get("location")).toBe("/settings/keys");
    const members = textOf((await joined.client.page("/settings/members")).html);
    expect(members).toContain(`${email} (you) Admin`);
    expect(await env.DB.prepare("SELECT account_id FROM members WHERE email = ?").bind(email).first()).toEqual({ account_id: owner.accountId });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM member_invites WHERE email = ?").bind(email).first()).toEqual({ n: 0 });

    const again = await signIn(email);
    expect(again.res.status).toBe(303);
    expect((await again.client.page("/settings/members")).status).toBe(200);
  });

  it("a link works once; an expired or revoked one never; a second try says so and makes no member", async () => {
    const owner = await signUp();
    const first = await invite(owner.client, uniqueEmail(), "member");
    expect((await accept(first.token)).res.status).toBe(303);
    const reused = await accept(first.token);
    expect(reused.res.status).toBe(400);
    expect(textOf(await reused.res.text())).toContain("This invitation has been used, revoked or has expired");

    const expiring = await invite(owner.client, uniqueEmail(), "member");
    await env.DB.prepare("UPDATE member_invites SET expires_at = ? WHERE account_id = ?")
      .bind(Date.now() - 1, owner.accountId)
      .run();
    expect((await accept(expiring.token)).res.status).toBe(400);

    const email = uniqueEmail();
    const revoked = await invite(owner.client, email, "member");
    const id = (await env.DB.prepare("SELECT id FROM member_invites WHERE email = ?").bind(email).first<{ id: string }>())!.id;
    expect((await owner.client.post("/settings/members/invite/revoke", { invite: id }, { from: "/settings/members" })).status).toBe(303);
    expect((await accept(revoked.token)).res.status).toBe(400);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM members WHERE account_id = ?").bind(owner.accountId).first()).toEqual({ n: 2 });
  });

  it("a too-short password keeps the invitation for another try; an email that is already a member elsewhere cannot join", async () => {
    const owner = await signUp();
    const { token } = await invite(owner.client, uniqueEmail(), "billing");
    const short = await accept(token, "short");
    expect(short.res.status).toBe(400);
    const page = await short.res.text();
    expect(page).toContain(`value="${token}"`); // the form comes back with it
    expect((await accept(token)).res.status).toBe(303);

    const other = await signUp();
    const taken = await invite(owner.client, other.email, "member");
    const res = (await accept(taken.token)).res;
    expect(res.status).toBe(400);
    expect(textOf(await res.text())).toContain("already belongs to a member of an account");
    expect(await memberIdOf(other.email)).toBeTruthy();
    expect(await env.DB.prepare("SELECT account_id FROM members WHERE email = ?").bind(other.email).first()).toEqual({ account_id: other.accountId });
  });

  it("an admin invites admins, members and billing, never an owner (403, no invitation); a member of the account is not invited twice", async () => {
    const t = await team();
    const before = await accountState(t.accountId);
    const res = (await invite(t.admin.client, uniqueEmail(), "owner")).res;
    expect(res.status).toBe(403);
    expect(await accountState(t.accountId)).toBe(before);
    expect((await invite(t.admin.client, uniqueEmail(), "admin")).res.status).toBe(200);
    const twice = await invite(t.owner.client, t.member.email, "admin");
    expect(twice.res.status).toBe(400);
    expect(textOf(twice.html)).toContain("is a member of this account already");
  });
});

describe("an account always has an owner", () => {
  it("the last owner cannot be demoted or removed (409 saying why); with a second owner, one can go", async () => {
    const t = await team();
    for (const [path, fields] of [
      ["/settings/members/role", { member: t.owner.memberId, role: "admin" }],
      ["/settings/members/remove", { member: t.owner.memberId }],
    ] as const) {
      const res = await t.owner.client.post(path, fields, { from: "/settings/members" });
      expect(res.status).toBe(409);
      expect(textOf(await res.text())).toContain("An account always has at least one owner");
    }
    expect(await roleOf(t.owner.memberId)).toBe("owner");
    expect((await t.owner.client.post("/settings/members/role", { member: t.admin.memberId, role: "owner" }, { from: "/settings/members" })).status).toBe(303);
    expect((await t.owner.client.post("/settings/members/role", { member: t.owner.memberId, role: "member" }, { from: "/settings/members" })).status).toBe(303);
    expect(await roleOf(t.owner.memberId)).toBe("member");
  });

  it("two owners demoting each other at once: exactly one wins, the account keeps one owner", async () => {
    const t = await team();
    await setRole(t.admin.memberId, "owner");
    const [a, b] = [t.owner, t.admin];
    const csrfA = csrfOf((await a.client.page("/settings/members")).html);
    const csrfB = csrfOf((await b.client.page("/settings/members")).html);
    const results = await Promise.all([
      a.client.post("/settings/members/role", { member: b.memberId, role: "member" }, { csrf: csrfA }),
      b.client.post("/settings/members/role", { member: a.memberId, role: "member" }, { csrf: csrfB }),
    ]);
    // The loser is refused by the guard (409), or, when the winner's change landed before its request was gated, by its own new role (403).
    expect(results.map((r) => r.status).sort()).toEqual([303, expect.toBeOneOf([403, 409])]);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM members WHERE account_id = ? AND role = 'owner'").bind(t.accountId).first()).toEqual({ n: 1 });
  });

  it("the guard itself: two demotions (or removals) of the last two owners at once, past any gate — exactly one succeeds", async () => {
    for (const change of [(id: string, acct: string) => changeRole(env.DB, acct, id, "admin"), (id: string, acct: string) => removeMember(env.DB, acct, id)]) {
      const t = await team();
      await setRole(t.admin.memberId, "owner");
      const results = await Promise.all([change(t.owner.memberId, t.accountId), change(t.admin.memberId, t.accountId)]);
      expect(results.map((r) => (r.ok ? "ok" : r.reason)).sort()).toEqual(["last-owner", "ok"]);
      expect(await env.DB.prepare("SELECT count(*) AS n FROM members WHERE account_id = ? AND role = 'owner'").bind(t.accountId).first()).toEqual({ n: 1 });
    }
  });
});

describe("removing a member", () => {
  it("ends their sessions, takes their password, and their keys get 401 (API and management)", async () => {
    const t = await team();
    const { key } = await createKeyViaConsole(t.admin.client, "admin's key");
    const mgmt = await managementKeyOf(t.admin.client);
    expect((await chat(key, { model: "openai/gpt-oss-20b", ...user("hi") })).status).not.toBe(401);
    expect((await api(mgmt, "GET", "/keys")).status).toBe(200);
    expect((await t.owner.client.post("/settings/members/remove", { member: t.admin.memberId }, { from: "/settings/members" })).status).toBe(303);
    expect((await t.admin.client.get("/settings/keys")).status).toBe(303); // to sign in
    expect((await signIn(t.admin.email)).res.status).toBe(401);
    expect((await chat(key, { model: "openai/gpt-oss-20b", ...user("hi") })).status).toBe(401);
    expect((await api(mgmt, "GET", "/keys")).status).toBe(401);
    const keys = await env.DB.prepare("SELECT disabled FROM api_keys WHERE member_id = ?").bind(t.admin.memberId).all();
    expect(keys.results).toEqual([{ disabled: 1 }, { disabled: 1 }]); // shown as disabled to the owners
    // Re-enabled by an owner, a removed member's key still does not work.
    const hash = (await env.DB.prepare("SELECT hash FROM api_keys WHERE member_id = ? AND is_management = 0").bind(t.admin.memberId).first<{ hash: string }>())!
      .hash;
    expect((await t.owner.client.post("/settings/keys/enable", { key: hash }, { from: "/settings/keys" })).status).toBe(303);
    expect((await chat(key, { model: "openai/gpt-oss-20b", ...user("hi") })).status).toBe(401);
  });
});

describe("keys and roles", () => {
  it("a member sees and changes only their own keys, on the console and through their management key", async () => {
    const t = await team();
    await createKeyViaConsole(t.owner.client, "owner key");
    await createKeyViaConsole(t.member.client, "member key");
    const ownerHash = (await env.DB.prepare("SELECT hash FROM api_keys WHERE name = 'owner key' AND account_id = ?")
      .bind(t.accountId)
      .first<{ hash: string }>())!.hash;
    const page = textOf((await t.member.client.page("/settings/keys")).html);
    expect(page).toContain("member key");
    expect(page).not.toContain("owner key");
    expect(page).not.toContain("Management keys");
    const before = await accountState(t.accountId);
    expect((await t.member.client.get(`/settings/keys/edit?key=${ownerHash}`)).status).toBe(404);
    expect((await t.member.client.post("/settings/keys/delete", { key: ownerHash }, { from: "/settings/keys" })).status).toBe(404);
    expect(await accountState(t.accountId)).toBe(before);

    await setRole(t.member.memberId, "admin");
    const mgmt = await managementKeyOf(t.member.client);
    await setRole(t.member.memberId, "member"); // the key acts with the member's role as it is now
    const listed = (await (await api(mgmt, "GET", "/keys")).json()) as { data: { name: string }[] };
    expect(listed.data.map((k) => k.name)).toEqual(["member key"]);
    expect((await api(mgmt, "DELETE", `/keys/${ownerHash}`)).status).toBe(404);
    expect((await api(mgmt, "GET", "/guardrails")).status).toBe(403);
    const made = (await (await api(mgmt, "POST", "/keys", { name: "via api" })).json()) as { data: { hash: string } };
    expect(await env.DB.prepare("SELECT member_id FROM api_keys WHERE hash = ?").bind(made.data.hash).first()).toEqual({ member_id: t.member.memberId });
  });

  it("a key made by an admin's management key belongs to that admin; owners and admins see every key", async () => {
    const t = await team();
    const mgmt = await managementKeyOf(t.admin.client);
    const made = (await (await api(mgmt, "POST", "/keys", { name: "admin via api" })).json()) as { data: { hash: string } };
    expect(await env.DB.prepare("SELECT member_id FROM api_keys WHERE hash = ?").bind(made.data.hash).first()).toEqual({ member_id: t.admin.memberId });
    expect(textOf((await t.owner.client.page("/settings/keys")).html)).toContain("admin via api");
  });

  it("a billing member lands on the credits and sees no keys", async () => {
    const t = await team();
    const res = (await signIn(t.billing.email)).res;
    expect(res.headers.get("location")).toBe("/settings/credits");
    const nav = (await t.billing.client.page("/settings/credits")).html;
    expect(nav).not.toContain('href="/settings/keys"');
    expect(nav).toContain('href="/activity"');
  });
});

describe("the audit log", () => {
  it("records administrative actions with who, how and on what; owners and admins read it on the console and through GET /audit", async () => {
    const t = await team();
    await createKeyViaConsole(t.admin.client, "audited");
    const mgmt = await managementKeyOf(t.owner.client);
    const g = (await (await api(mgmt, "POST", "/guardrails", { name: "audited rail" })).json()) as { data: { id: string } };
    await t.owner.client.post("/settings/members/role", { member: t.member.memberId, role: "billing" }, { from: "/settings/members" });
    const page = textOf((await t.admin.client.page("/settings/audit")).html);
    expect(page).toContain(`${t.owner.email} session POST /settings/members/role member=${t.member.memberId} role=billing`);
    expect(page).toContain(`${t.admin.email} session POST /settings/keys`);
    expect(page).toMatch(new RegExp(`${t.owner.email} key:sk-sy-v1-\\S+ POST /guardrails`));
    expect(page).toContain(`${t.billing.email} session member.join ${t.billing.email}`);
    expect(page).toContain(`${t.owner.email} session POST /settings/members/invite email=${t.billing.email} role=billing`);
    const listed = (await (await api(mgmt, "GET", "/audit")).json()) as {
      data: { action: string; target: string | null; actor_email: string }[];
      total_count: number;
    };
    expect(listed.data[0]).toMatchObject({ action: "POST /settings/members/role", actor_email: t.owner.email });
    expect(listed.data[1]).toMatchObject({ action: "POST /guardrails", target: null });
    expect(g.data.id).toBeTruthy();
    expect((await t.member.client.get("/settings/audit")).status).toBe(403);
  });

  it("the Cron Trigger deletes entries older than AUDIT_LOG_KEEP_DAYS", async () => {
    const { pruneAudit } = await import("../../src/members/audit-store");
    const accountId = `acct_prune_${crypto.randomUUID()}`;
    const now = Date.now();
    for (const days of [400, 364])
      await env.DB.prepare("INSERT INTO audit_events (account_id, at, via, action) VALUES (?, ?, 'session', 'x')")
        .bind(accountId, now - days * 86_400_000)
        .run();
    await pruneAudit(env.DB, 365, now);
    const left = await env.DB.prepare("SELECT at FROM audit_events WHERE account_id = ?").bind(accountId).all<{ at: number }>();
    expect(left.results).toEqual([{ at: now - 364 * 86_400_000 }]);
  });
});

describe("activity and roles", () => {
  const seed = (accountId: string, id: string, keyHash: string) =>
    env.DB.prepare(
      "INSERT INTO generations (id, account_id, key_hash, model, provider_name, app, streamed, created_at, latency_ms, generation_time_ms, tokens_prompt, tokens_completion, tokens_reasoning, cost_nano, finish_reason, status) VALUES (?, ?, ?, 'openai/gpt-oss-20b', 'Groq', 'seed', 0, ?, 10, 20, 1, 2, 0, 1000, 'stop', 200)",
    )
      .bind(id, accountId, keyHash, Date.now() - 60_000)
      .run();
  const idsOf = (html: string) => [...html.matchAll(/<tr id="(gen-[^"]+)">/g)].map((m) => m[1]).sort();

  it("a member sees the requests of their own keys only (page and CSV); owners and billing see every key's", async () => {
    const t = await team();
    await createKeyViaConsole(t.owner.client, "owner key");
    await createKeyViaConsole(t.member.client, "member key");
    const hashOf = async (name: string) =>
      (await env.DB.prepare("SELECT hash FROM api_keys WHERE name = ? AND account_id = ?").bind(name, t.accountId).first<{ hash: string }>())!.hash;
    const tag = t.accountId.slice(5, 13);
    await seed(t.accountId, `gen-own${tag}`, await hashOf("member key"));
    await seed(t.accountId, `gen-not${tag}`, await hashOf("owner key"));
    expect(idsOf((await t.member.client.page("/activity")).html)).toEqual([`gen-own${tag}`]);
    const csv = await (await t.member.client.get("/activity.csv")).text();
    expect(csv).toContain(`gen-own${tag}`);
    expect(csv).not.toContain(`gen-not${tag}`);
    // Asking for another member's key by its hash shows nothing of it.
    expect(idsOf((await t.member.client.page(`/activity?key=${await hashOf("owner key")}`)).html)).toEqual([]);
    for (const who of [t.owner, t.billing]) expect(idsOf((await who.client.page("/activity")).html)).toEqual([`gen-not${tag}`, `gen-own${tag}`]);
  });

  it("records read from the archive are narrowed the same way", async () => {
    const { matchesFilter } = await import("../../src/db/record-filter");
    const g = { createdAt: 0, keyHash: "a", model: "m" } as Parameters<typeof matchesFilter>[0];
    expect(matchesFilter(g, { member: { memberId: "mem_x", hashes: new Set(["a"]) } })).toBe(true);
    expect(matchesFilter(g, { member: { memberId: "mem_x", hashes: new Set(["b"]) } })).toBe(false);
  });
});

describe("pages show each role what it may do", () => {
  it("a member reads presets without their forms; an admin sees credits without the form that adds them", async () => {
    const t = await team();
    const presets = textOf((await t.member.client.page("/settings/presets")).html);
    expect(presets).toContain("Owners and admins of this account create and change presets.");
    expect(presets).not.toContain("Create preset");
    const credits = (await t.admin.client.page("/settings/credits")).html;
    expect(textOf(credits)).toContain("Owners and billing members of this account add credits.");
    expect(credits).not.toContain("Review payment");
    expect((await t.billing.client.page("/settings/credits")).html).toContain("Review payment");
  });

  it("the operator cannot make an account with the email of another account's member (409, nothing made)", async () => {
    const t = await team();
    const res = await call("/admin/accounts", {
      method: "POST",
      headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" },
      body: JSON.stringify({ email: t.member.email }),
    });
    expect(res.status).toBe(409);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM accounts WHERE email = ?").bind(t.member.email).first()).toEqual({ n: 0 });
  });
});
