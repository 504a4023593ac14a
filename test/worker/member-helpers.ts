import { env } from "cloudflare:test";
import { ledgerFor } from "../../src/ledger/ledger";
import type { MemberRole } from "../../src/db/schema";
import { ConsoleClient, PASSWORD, csrfOf, signUp, uniqueEmail } from "./console-helpers";

/** Invites `email` with `role` through `by`'s Members page; returns the one-time link's token (read from the page that shows it once). */
export async function invite(by: ConsoleClient, email: string, role: MemberRole): Promise<{ token: string; res: Response; html: string }> {
  const res = await by.post("/settings/members/invite", { email, role }, { from: "/settings/members" });
  const html = await res.text();
  const m = /value="https:\/\/[^"]+\/join#([A-Za-z0-9_-]{43})"/.exec(html);
  return { token: m?.[1] ?? "", res, html };
}

/** Accepts an invitation as a new browser would: the join page, then its form with the token and a password. */
export async function accept(token: string, password = PASSWORD): Promise<{ client: ConsoleClient; res: Response }> {
  const client = new ConsoleClient();
  const csrf = csrfOf((await client.page("/join")).html);
  const res = await client.post("/join", { token, password }, { csrf });
  return { client, res };
}

export type Someone = { client: ConsoleClient; email: string; memberId: string };

export const memberIdOf = async (email: string) => (await env.DB.prepare("SELECT id FROM members WHERE email = ?").bind(email).first<{ id: string }>())!.id;

/** A new account with one signed-in member of each role (the owner signed up; the others invited and joined). */
export async function team(): Promise<{ accountId: string } & Record<MemberRole, Someone>> {
  const owner = await signUp();
  const out = { accountId: owner.accountId, owner: { client: owner.client, email: owner.email, memberId: await memberIdOf(owner.email) } } as {
    accountId: string;
  } & Record<MemberRole, Someone>;
  for (const role of ["admin", "member", "billing"] as const) {
    const email = uniqueEmail();
    const { token } = await invite(owner.client, email, role);
    const { client, res } = await accept(token);
    if (res.status !== 303) throw new Error(`accept ${role}: ${res.status}`);
    out[role] = { client, email, memberId: await memberIdOf(email) };
  }
  return out;
}

/** Makes a management key through `who`'s console (their role must allow it); returns its plaintext. */
export async function managementKeyOf(who: ConsoleClient, name = "mgmt"): Promise<string> {
  const html = (await who.page("/settings/keys/management")).html;
  const token = /name="creation_token" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const res = await who.post("/settings/keys/management", { name, creation_token: token }, { csrf: csrfOf(html) });
  const m = /value="(sk-sy-v1-[0-9a-f]{64})"/.exec(await res.text());
  if (!m) throw new Error(`management key: ${res.status}`);
  return m[1]!;
}

/** Sets a member's role directly (test set-up: a management key made while its member could, then the member's role changed). */
export const setRole = (memberId: string, role: MemberRole) => env.DB.prepare("UPDATE members SET role = ? WHERE id = ?").bind(role, memberId).run();

/** What an administrative action could change in an account, as one comparable value. */
export async function accountState(accountId: string): Promise<string> {
  const q = (sql: string) =>
    env.DB.prepare(sql)
      .bind(accountId)
      .all()
      .then((r) => r.results);
  return JSON.stringify(
    await Promise.all([
      q("SELECT hash, name, disabled, limit_nano, expires_at, updated_at FROM api_keys WHERE account_id = ? ORDER BY hash"),
      q("SELECT id, name, updated_at FROM guardrails WHERE account_id = ? ORDER BY id"),
      q("SELECT guardrail_id, key_hash FROM guardrail_keys WHERE account_id = ? ORDER BY id"),
      q("SELECT guardrail_id, member_id FROM guardrail_members WHERE account_id = ? ORDER BY id"),
      q("SELECT slug, latest_version, updated_at FROM presets WHERE account_id = ? ORDER BY slug"),
      q("SELECT id, email, role FROM members WHERE account_id = ? ORDER BY id"),
      q("SELECT id, email, role FROM member_invites WHERE account_id = ? ORDER BY id"),
      q("SELECT id, status FROM payments WHERE account_id = ? ORDER BY id"),
      q("SELECT count(*) AS n FROM sessions WHERE account_id = ?"),
      q("SELECT id, url FROM alert_endpoints WHERE account_id = ? ORDER BY id"),
      q("SELECT id, provider, last4, mode, allow_fallback, disabled, updated_at FROM byok_keys WHERE account_id = ? ORDER BY id"),
      q("SELECT id, name, enabled, endpoint, updated_at FROM observability_destinations WHERE account_id = ? ORDER BY id"),
      ledgerFor(env, accountId).alertRules(),
    ]),
  );
}
