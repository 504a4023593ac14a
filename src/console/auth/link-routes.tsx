import { Hono, type Context } from "hono";
import type { ConsoleEnv } from "../console-env";
import { publicForm, publicPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render } from "../layout/render";
import { ensurePreSessionToken } from "./csrf";
import { csrfToken } from "./csrf-token";
import { credentialOf, linkMemberOf } from "./accounts-store";
import { redeemLink } from "./one-time-links";
import { endSession, startSession } from "./session";
import { SignInLinkPage } from "./link-pages";

/**
 * Signing in with a one-time link (`npm run admin -- sign-in-link`): the page reads the token from the
 * link's fragment, and its button posts it; the link is used up whether or not the sign-in goes on.
 */
export const linkRoutes = new Hono<ConsoleEnv>();

const LINK_FAILED =
  "This sign-in link has been used or has expired (each works once, for a limited time). Ask the operator for a new one: npm run admin -- sign-in-link --account <email>.";

async function linkPage(c: Context<ConsoleEnv>, status: 200 | 400, problem?: string) {
  const csrf = await csrfToken(ensurePreSessionToken(c));
  return render(c, <SignInLinkPage meta={await pageMeta(c, "Sign in with a one-time link")} csrf={csrf} problem={problem} />, status);
}

linkRoutes.get("/sign-in/link", ...publicPage, (c) => linkPage(c, 200));

linkRoutes.post("/sign-in/link", ...publicForm, async (c) => {
  const link = await redeemLink(c.env.DB, "sign-in", (await readForm(c)).token ?? "");
  const memberId = link?.accountId ? await linkMemberOf(c.env.DB, link.accountId) : undefined;
  if (!link?.accountId || !memberId) return linkPage(c, 400, LINK_FAILED);
  await endSession(c); // whoever was signed in here before, the link's account's owner is now
  await startSession(c, { accountId: link.accountId, memberId });
  // An owner made without a password chooses one first, so the next sign-in needs no link.
  const hasPassword = (await credentialOf(c.env.DB, memberId)) !== undefined;
  return c.redirect(hasPassword ? "/settings/keys" : "/settings/password", 303);
});
