import { Hono } from "hono";
import type { AppEnv } from "../keys/caller";
import { ApiError } from "../request/errors";
import { db } from "../db/client";
import { accounts, apiKeys, members } from "../db/schema";
import { asc, eq } from "drizzle-orm";
import { createKey, findAccount, setKeyDisabled, setKeyLimit } from "../keys/key-store";
import { ledgerFor } from "../ledger/ledger";
import { nanoToUsd, usdToNano } from "../catalog/money";
import { randomId } from "../keys/api-key";
import { isUniqueViolation } from "../members/member-store";
import {
  accountOr404,
  createAccountBody,
  createKeyBody,
  grantBody,
  hashParam,
  json,
  keyLimitBody,
  page,
  pageOf,
  presentKey,
  presentTotals,
} from "./admin-input";

/** The operator's accounts, keys and credits (`npm run admin`: docs/admin.md). */
export const adminAccountRoutes = new Hono<AppEnv>();

adminAccountRoutes.post("/accounts", async (c) => {
  const body = await json(c.req.raw, createAccountBody);
  if (await findAccount(c.env.DB, body.email)) throw new ApiError(409, `An account with email ${body.email} exists.`);
  const account = { id: randomId("acct_", 12), email: body.email, createdAt: Date.now() };
  const d = db(c.env.DB);
  // Its first member, the owner, has the account's email and no password yet (a sign-in link lets it choose one).
  const owner = { id: randomId("mem_", 12), accountId: account.id, email: account.email, role: "owner" as const, createdAt: account.createdAt };
  try {
    await d.batch([d.insert(accounts).values(account), d.insert(members).values(owner)]);
  } catch (err) {
    // The email signs in a member of another account (members' emails are unique across the deployment).
    if (isUniqueViolation(err)) throw new ApiError(409, `The email ${body.email} belongs to a member of another account.`);
    throw err;
  }
  const ledger = ledgerFor(c.env, account.id);
  // Zero starting credits make no grant (a grant is positive); the account starts at 0.
  const totals = body.credits
    ? (await ledger.grant({ grantId: `account-created:${account.id}`, amountNano: usdToNano(body.credits), source: "admin" })).totals
    : await ledger.totals();
  return c.json({ id: account.id, email: account.email, ...presentTotals(totals) }, 201);
});

/** The accounts, oldest first, a page at a time (their balances: `show-account`, one ledger call each). */
adminAccountRoutes.get("/accounts", async (c) => {
  const { offset, limit } = pageOf(c);
  const rows = await db(c.env.DB)
    .select()
    .from(accounts)
    .orderBy(asc(accounts.createdAt), asc(accounts.id))
    .limit(limit + 1)
    .offset(offset);
  return c.json(
    page(
      rows.map((a) => ({ id: a.id, email: a.email, created_at: new Date(a.createdAt).toISOString() })),
      offset,
      limit,
    ),
  );
});

/** An account's keys, oldest first, a page at a time: hashes and labels only, never a key. */
adminAccountRoutes.get("/accounts/:ref/keys", async (c) => {
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  const { offset, limit } = pageOf(c);
  const rows = await db(c.env.DB)
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.accountId, account.id))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.hash))
    .limit(limit + 1)
    .offset(offset);
  return c.json(page(rows.map(presentKey), offset, limit));
});

adminAccountRoutes.get("/accounts/:ref", async (c) => {
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  return c.json({ id: account.id, email: account.email, ...presentTotals(await ledgerFor(c.env, account.id).totals()) });
});

/**
 * Grants credits. With `idempotency_key` K the grant's id is `admin:K`: a retried command (say, after a
 * lost reply) applies once and answers `applied: false`; K reused with another amount is refused (409).
 */
adminAccountRoutes.post("/accounts/:ref/credits", async (c) => {
  const body = await json(c.req.raw, grantBody);
  const account = await accountOr404(c.env.DB, c.req.param("ref"));
  const ledger = ledgerFor(c.env, account.id);
  const grantId = `admin:${body.idempotency_key ?? randomId("", 16)}`;
  const amountNano = usdToNano(body.usd);
  const granted = await ledger.grant({ grantId, amountNano, source: "admin" });
  if (!granted.applied) {
    const earlier = await ledger.findGrant(grantId);
    if (earlier && earlier.amountNano !== amountNano)
      throw new ApiError(
        409,
        `Idempotency key ${body.idempotency_key} was already used for a grant of ${nanoToUsd(earlier.amountNano)} USD; nothing was granted.`,
      );
  }
  return c.json({ id: account.id, email: account.email, grant_id: grantId, applied: granted.applied, ...presentTotals(granted.totals) });
});

adminAccountRoutes.post("/keys", async (c) => {
  const body = await json(c.req.raw, createKeyBody);
  const account = await accountOr404(c.env.DB, body.account);
  const { key, record } = await createKey(c.env.DB, account.id, body.label ?? (body.management ? "management" : "default"), {
    limitNano: body.limit === undefined ? null : usdToNano(body.limit),
    isManagement: body.management ?? false,
  });
  return c.json({ key, ...presentKey(record) }, 201);
});

for (const [action, disabled] of [
  ["disable", true],
  ["enable", false],
] as const) {
  adminAccountRoutes.post(`/keys/:hash/${action}`, async (c) => {
    const hash = hashParam.safeParse(c.req.param("hash"));
    const key = hash.success ? await setKeyDisabled(c.env.DB, hash.data, disabled) : undefined;
    if (!key) throw new ApiError(404, "No key with that hash.");
    return c.json(presentKey(key));
  });
}

/** Sets (a USD amount) or removes (null) a key's credit limit; this isolate applies it to the key's next request. */
adminAccountRoutes.post("/keys/:hash/limit", async (c) => {
  const hash = hashParam.safeParse(c.req.param("hash"));
  if (!hash.success) throw new ApiError(404, "No key with that hash.");
  const body = await json(c.req.raw, keyLimitBody);
  const key = await setKeyLimit(c.env.DB, hash.data, body.limit === null ? null : usdToNano(body.limit));
  if (!key) throw new ApiError(404, "No key with that hash.");
  return c.json(presentKey(key));
});
