import { Hono } from "hono";
import type { AppEnv } from "../keys/caller";
import { ApiError } from "../request/errors";
import { findAccount } from "../keys/key-store";
import { createLink, LINK_PATH, type LinkKind } from "../console/auth/one-time-links";
import { credentialOf, linkMemberOf } from "../console/auth/accounts-store";

/**
 * The operator's one-time console links (docs/admin.md): a sign-in link for an account (the way into an
 * account made without a password: `cloudflare:setup`'s first account, `npm start`'s demo account), and
 * an invitation to sign up while `SIGN_UP` is invite-only. Each answer holds the link's only copy.
 */
export const adminLinkRoutes = new Hono<AppEnv>();

/** The link's URL at the origin the operator called (the deployment's, custom domain or workers.dev). */
const linkUrl = (requestUrl: string, kind: LinkKind, token: string) => `${new URL(requestUrl).origin}${LINK_PATH[kind]}#${token}`;

adminLinkRoutes.post("/accounts/:ref/sign-in-link", async (c) => {
  const ref = c.req.param("ref");
  const account = await findAccount(c.env.DB, ref);
  if (!account) throw new ApiError(404, `No account ${ref}.`);
  const memberId = await linkMemberOf(c.env.DB, account.id);
  if (!memberId) throw new ApiError(409, `Account ${ref} has no owner to sign in.`);
  const { token, expiresAt } = await createLink(c.env.DB, "sign-in", account.id, c.var.settings.SIGN_IN_LINK_TTL_MINUTES * 60_000);
  return c.json(
    {
      id: account.id,
      email: account.email,
      url: linkUrl(c.req.url, "sign-in", token),
      expires_at: new Date(expiresAt).toISOString(),
      has_password: (await credentialOf(c.env.DB, memberId)) !== undefined,
    },
    201,
  );
});

adminLinkRoutes.post("/invitations", async (c) => {
  const policy = c.var.settings.SIGN_UP;
  if (policy === "closed")
    throw new ApiError(409, "Sign-up is closed (SIGN_UP=closed): an invitation could not be used. Make the account (create-account), then a sign-in link.");
  const { token, expiresAt } = await createLink(c.env.DB, "invite", null, c.var.settings.INVITE_TTL_HOURS * 3_600_000);
  return c.json({ url: linkUrl(c.req.url, "invite", token), expires_at: new Date(expiresAt).toISOString(), sign_up: policy }, 201);
});
