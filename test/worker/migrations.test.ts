import { describe, it, expect } from "vitest";
import { applyD1Migrations, env } from "cloudflare:test";
import { findCredential, linkMemberOf } from "../../src/console/auth/accounts-store";
import { findSession } from "../../src/console/auth/session-store";
import { findKeyByHash } from "../../src/keys/key-store";
import { sha256Hex } from "../../src/console/http/encoding";

// Migration 0019_members on a database holding rows of before it: every account gets one owner with its email,
// and its password, sessions and keys become the owner's — a person signed in before stays signed in.
describe("0019_members", () => {
  it("keeps every existing account's sign-in, sessions and keys, as its owner's", async () => {
    const db = env.MIGRATION_DB;
    await applyD1Migrations(
      db,
      env.TEST_MIGRATIONS.filter((m) => m.name < "0019"),
    );
    const token = "t".repeat(43);
    const rows = [
      ["acct_a", "a@example.test"],
      ["acct_b", "b@example.test"], // made by the operator: no password, no session
    ];
    for (const [id, email] of rows) await db.prepare("INSERT INTO accounts (id, email, created_at) VALUES (?, ?, 1000)").bind(id, email).run();
    await db
      .prepare(
        "INSERT INTO credentials (account_id, algorithm, iterations, salt, password_hash, updated_at) VALUES ('acct_a', 'pbkdf2-sha256', 100000, 'c2FsdA==', 'aGFzaA==', 1)",
      )
      .run();
    await db
      .prepare("INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES (?, 'acct_a', 1, ?)")
      .bind(await sha256Hex(token), Date.now() + 3_600_000)
      .run();
    for (const [hash, account] of [
      ["a".repeat(64), "acct_a"],
      ["b".repeat(64), "acct_b"],
    ])
      await db
        .prepare("INSERT INTO api_keys (hash, account_id, name, label, created_at, is_management) VALUES (?, ?, 'k', 'sk-sy-v1-x...y', 1, 0)")
        .bind(hash, account)
        .run();

    await applyD1Migrations(db, env.TEST_MIGRATIONS);

    const members = await db.prepare("SELECT id, account_id, email, role, created_at FROM members ORDER BY account_id").all<Record<string, unknown>>();
    expect(members.results.map(({ id: _id, ...m }) => m)).toEqual([
      { account_id: "acct_a", email: "a@example.test", role: "owner", created_at: 1000 },
      { account_id: "acct_b", email: "b@example.test", role: "owner", created_at: 1000 },
    ]);
    const [a, b] = members.results.map((m) => m.id as string);
    expect(a).toMatch(/^mem_[0-9a-f]{24}$/);
    expect(await findCredential(db, "a@example.test")).toEqual({
      memberId: a,
      accountId: "acct_a",
      role: "owner",
      hash: { algorithm: "pbkdf2-sha256", iterations: 100000, salt: "c2FsdA==", passwordHash: "aGFzaA==" },
    });
    expect(await findCredential(db, "b@example.test")).toBeUndefined();
    expect(await findSession(db, token)).toEqual({ accountId: "acct_a", memberId: a, email: "a@example.test", role: "owner" });
    expect((await findKeyByHash(db, "a".repeat(64)))?.memberId).toBe(a);
    expect((await findKeyByHash(db, "b".repeat(64)))?.memberId).toBe(b);
    expect(await linkMemberOf(db, "acct_b")).toBe(b);
  });
});
