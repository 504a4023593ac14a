import { and, asc, count, desc, eq, inArray } from "drizzle-orm";
import { db } from "../db/client";
import { guardrailMembers, guardrails, members, type Guardrail, type GuardrailMember } from "../db/schema";
import { forgetMembersKeys } from "./key-cache";

/**
 * Guardrails assigned to members (docs/teams.md): every key of the member carries them, beside its own.
 * Every statement is scoped to the account; a change forgets the members' cached keys in this isolate, so it
 * applies here at once (other isolates within the key cache's staleness).
 */

/** D1 binds at most 100 parameters per statement: member ids go in chunks that leave room for the others. */
const IDS_PER_STATEMENT = 90;
/** An assignment row binds 6 parameters. */
const ROWS_PER_INSERT = 15;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Of `ids`, those that are not members of the account (unknown, or another account's). */
export async function notMembers(d1: D1Database, accountId: string, ids: string[]): Promise<string[]> {
  const q = db(d1);
  const found = await Promise.all(
    chunks(ids, IDS_PER_STATEMENT).map((part) =>
      q
        .select({ id: members.id })
        .from(members)
        .where(and(eq(members.accountId, accountId), inArray(members.id, part)))
        .all(),
    ),
  );
  const known = new Set(found.flat().map((r) => r.id));
  return ids.filter((id) => !known.has(id));
}

/** Assigns the guardrail to members (all of them the account's: `notMembers` first); how many did not carry it before. */
export async function assignMembers(d1: D1Database, accountId: string, guardrailId: string, memberIds: string[], assignedBy: string | null): Promise<number> {
  if (memberIds.length === 0) return 0;
  const now = Date.now();
  const rows = memberIds.map((memberId) => ({ id: crypto.randomUUID(), accountId, guardrailId, memberId, assignedBy, createdAt: now }));
  const q = db(d1);
  const [first, ...rest] = chunks(rows, ROWS_PER_INSERT).map((part) =>
    q.insert(guardrailMembers).values(part).onConflictDoNothing().returning({ id: guardrailMembers.id }),
  );
  const inserted = await q.batch([first!, ...rest]); // one transaction: all chunks or none
  forgetMembersKeys(memberIds); // after the write (see setKeyLimit)
  return inserted.reduce((n, r) => n + r.length, 0);
}

/** Takes the guardrail off members; how many carried it. */
export async function unassignMembers(d1: D1Database, accountId: string, guardrailId: string, memberIds: string[]): Promise<number> {
  if (memberIds.length === 0) return 0;
  const q = db(d1);
  const [first, ...rest] = chunks(memberIds, IDS_PER_STATEMENT).map((part) =>
    q
      .delete(guardrailMembers)
      .where(and(eq(guardrailMembers.accountId, accountId), eq(guardrailMembers.guardrailId, guardrailId), inArray(guardrailMembers.memberId, part)))
      .returning({ id: guardrailMembers.id }),
  );
  const removed = await q.batch([first!, ...rest]);
  forgetMembersKeys(memberIds);
  return removed.reduce((n, r) => n + r.length, 0);
}

/** One page of the account's member assignments (of one guardrail, or all), newest first, and how many there are. */
export async function listMemberAssignments(d1: D1Database, accountId: string, guardrailId: string | null, page: { offset: number; limit: number }) {
  const where = and(eq(guardrailMembers.accountId, accountId), guardrailId === null ? undefined : eq(guardrailMembers.guardrailId, guardrailId));
  const [rows, total] = await Promise.all([
    db(d1)
      .select()
      .from(guardrailMembers)
      .where(where)
      .orderBy(desc(guardrailMembers.createdAt), desc(guardrailMembers.id))
      .limit(page.limit)
      .offset(page.offset)
      .all(),
    db(d1).select({ n: count() }).from(guardrailMembers).where(where).get(),
  ]);
  return { rows: rows as GuardrailMember[], total: total?.n ?? 0 };
}

/** The guardrails one of the account's members carries, oldest first (a key's console page: what the key carries through its member). */
export async function guardrailsOfMember(d1: D1Database, accountId: string, memberId: string): Promise<Guardrail[]> {
  return (
    await db(d1)
      .select({ g: guardrails })
      .from(guardrailMembers)
      .innerJoin(guardrails, eq(guardrails.id, guardrailMembers.guardrailId))
      .where(and(eq(guardrailMembers.accountId, accountId), eq(guardrailMembers.memberId, memberId)))
      .orderBy(asc(guardrails.createdAt))
      .all()
  ).map((r) => r.g);
}

/** Every member assignment of the account with its guardrail, oldest guardrail first (the console's Members page; an account has few). */
export async function memberGuardrails(d1: D1Database, accountId: string): Promise<{ memberId: string; guardrail: Guardrail }[]> {
  return db(d1)
    .select({ memberId: guardrailMembers.memberId, guardrail: guardrails })
    .from(guardrailMembers)
    .innerJoin(guardrails, eq(guardrails.id, guardrailMembers.guardrailId))
    .where(eq(guardrailMembers.accountId, accountId))
    .orderBy(asc(guardrails.createdAt), asc(guardrailMembers.memberId))
    .all();
}
