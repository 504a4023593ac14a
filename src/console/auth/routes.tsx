import { Hono, type Context } from "hono";
import * as z from "zod";
import type { ConsoleEnv } from "../console-env";
import { accountForm, accountPage, publicForm, publicPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render } from "../layout/render";
import { ensurePreSessionToken } from "./csrf";
import { csrfToken } from "./csrf-token";
import { emailField, fieldErrors, newPasswordField, passwordField, type FieldErrors } from "./credentials-input";
import { hashPassword, PASSWORD_MAX, verifyNothing, verifyPassword } from "./password";
import { changePassword, createAccountWithPassword, credentialOf, findCredential, setFirstPassword } from "./accounts-store";
import { clearSignInAttempts, clientAddress, takeSignInAttempt, takeSignUpAttempt } from "./rate-limit";
import { endSession, safeNext, startSession } from "./session";
import { ChangePasswordPage, SignInPage, SignUpPage, type AuthFormState, type PasswordFormState } from "./pages";
import { sha256Hex } from "../http/encoding";
import { SignUpClosedPage } from "./link-pages";
import { redeemLink, restoreInvite } from "./one-time-links";
import { linkRoutes } from "./link-routes";
import { landingOf } from "../http/roles";

/** Sign up, sign in, sign out. Failures never say whether an email has an account. */
export const authRoutes = new Hono<ConsoleEnv>();

const SIGN_IN_FAILED = "Email or password is incorrect.";
const SIGN_UP_FAILED = "We could not create an account with these details. If you already have an account, sign in instead.";

const INVITE_FAILED =
  "Sign-up here is by invitation only, and this invitation has been used or has expired (or the page was opened without one). Ask the operator of this service for a new invitation link.";

const minutes = (ms: number) => Math.max(1, Math.ceil(ms / 60_000));

async function signInPage(c: Context<ConsoleEnv>, status: 200 | 400 | 401 | 429, next: string | undefined, state?: AuthFormState) {
  const csrf = await csrfToken(ensurePreSessionToken(c));
  return render(c, <SignInPage meta={await pageMeta(c, "Sign in")} csrf={csrf} next={next} state={state} />, status);
}

async function signUpPage(c: Context<ConsoleEnv>, status: 200 | 400 | 403 | 429, state?: AuthFormState, invite?: string) {
  const policy = c.var.settings.SIGN_UP;
  if (policy === "closed") return render(c, <SignUpClosedPage meta={await pageMeta(c, "Sign-up is closed")} />, status === 200 ? 200 : 403);
  const csrf = await csrfToken(ensurePreSessionToken(c));
  return render(
    c,
    <SignUpPage meta={await pageMeta(c, "Create an account")} csrf={csrf} state={state} inviteOnly={policy === "invite-only"} invite={invite} />,
    status,
  );
}

authRoutes.get("/sign-in", ...publicPage, async (c) => {
  const next = c.req.query("next");
  if (c.var.session) return c.redirect(next === undefined ? landingOf(c.var.session.role) : safeNext(next), 303);
  return signInPage(c, 200, next === undefined ? undefined : safeNext(next));
});

authRoutes.post("/sign-in", ...publicForm, async (c) => {
  const form = await readForm(c);
  const next = form.next === undefined ? undefined : safeNext(form.next);
  const parsed = z.object({ email: emailField, password: passwordField }).safeParse(form);
  if (!parsed.success) return signInPage(c, 400, next, { email: form.email, errors: fieldErrors(parsed.error) });
  const { email, password } = parsed.data;

  const limit = await takeSignInAttempt(c.env, email, clientAddress(c));
  if (!limit.ok) return signInPage(c, 429, next, { email, problem: `Too many sign-in attempts. Wait ${minutes(limit.retryAfterMs)} minutes and try again.` });

  const found = password.length <= PASSWORD_MAX ? await findCredential(c.env.DB, email) : undefined;
  // Same work whether or not the email has a password, so timing does not tell either.
  const ok = found ? await verifyPassword(password, found.hash) : await verifyNothing(password.slice(0, PASSWORD_MAX));
  if (!ok || !found) return signInPage(c, 401, next, { email, problem: SIGN_IN_FAILED });

  await clearSignInAttempts(c.env, email);
  await endSession(c); // a new sign-in always gets a new session token
  await startSession(c, found);
  return c.redirect(next ?? landingOf(found.role), 303);
});

authRoutes.get("/sign-up", ...publicPage, async (c) => {
  if (c.var.session) return c.redirect(landingOf(c.var.session.role), 303);
  return signUpPage(c, 200);
});

/** Sign-up as `SIGN_UP` allows it: open to anyone, with an invitation (used up by the account it makes), or not at all. */
authRoutes.post("/sign-up", ...publicForm, async (c) => {
  const policy = c.var.settings.SIGN_UP;
  if (policy === "closed") return signUpPage(c, 403);
  const form = await readForm(c);
  const invite = policy === "invite-only" ? (form.invite ?? "") : undefined;
  const parsed = z.object({ email: emailField, password: newPasswordField }).safeParse(form);
  if (!parsed.success) return signUpPage(c, 400, { email: form.email, errors: fieldErrors(parsed.error) satisfies FieldErrors }, invite);
  const { email, password } = parsed.data;

  const limit = await takeSignUpAttempt(c.env, clientAddress(c));
  if (!limit.ok)
    return signUpPage(
      c,
      429,
      { email, problem: `Too many new accounts from your network. Wait ${minutes(limit.retryAfterMs)} minutes and try again.` },
      invite,
    );

  const invitation = invite === undefined ? undefined : await redeemLink(c.env.DB, "invite", invite);
  if (invite !== undefined && !invitation) return signUpPage(c, 403, { email, problem: INVITE_FAILED });
  const created = await createAccountWithPassword(c.env.DB, email, await hashPassword(password));
  if (!created) {
    if (invite !== undefined && invitation) await restoreInvite(c.env.DB, invite, invitation.expiresAt); // not used up: no account was made
    return signUpPage(c, 400, { email, problem: SIGN_UP_FAILED }, invite);
  }
  await endSession(c);
  await startSession(c, created);
  return c.redirect("/settings/keys", 303);
});

authRoutes.post("/sign-out", ...accountForm, async (c) => {
  await endSession(c);
  return c.redirect("/", 303);
});

async function passwordPage(c: Context<ConsoleEnv>, status: 200 | 400 | 429, hasPassword: boolean, state?: PasswordFormState) {
  const meta = await pageMeta(c, hasPassword ? "Change your password" : "Choose a password");
  return render(c, <ChangePasswordPage meta={meta} csrf={await csrfToken(c.var.session!.token)} hasPassword={hasPassword} state={state} />, status);
}

authRoutes.get("/settings/password", ...accountPage, async (c) => passwordPage(c, 200, (await credentialOf(c.env.DB, c.var.session!.memberId)) !== undefined));

/** A password change: the current password checked (rate-limited as sign-ins are), the new one stored, other sessions ended. */
authRoutes.post("/settings/password", ...accountForm, async (c) => {
  const s = c.var.session!;
  const form = await readForm(c);
  const stored = await credentialOf(c.env.DB, s.memberId);
  if (!stored) return firstPassword(c, form);
  const parsed = z.object({ current: passwordField, password: newPasswordField }).safeParse(form);
  if (!parsed.success) {
    const errors: PasswordFormState["errors"] = {};
    for (const issue of parsed.error.issues) {
      const key = issue.path[0];
      if ((key === "current" || key === "password") && !errors[key]) errors[key] = key === "current" ? "Enter your current password." : issue.message;
    }
    return passwordPage(c, 400, true, { errors });
  }
  const limit = await takeSignInAttempt(c.env, s.email, clientAddress(c));
  if (!limit.ok) return passwordPage(c, 429, true, { problem: `Too many attempts. Wait ${minutes(limit.retryAfterMs)} minutes and try again.` });
  const ok = parsed.data.current.length <= PASSWORD_MAX ? await verifyPassword(parsed.data.current, stored) : false;
  if (!ok) return passwordPage(c, 400, true, { errors: { current: "The current password is not right." } });
  await clearSignInAttempts(c.env, s.email);
  await changePassword(c.env.DB, s.memberId, await hashPassword(parsed.data.password), await sha256Hex(s.token));
  return c.redirect(`${landingOf(s.role)}?done=password`, 303);
});

/** The first password of an account that has none: the session (begun with a one-time link) is the proof, no current password. */
async function firstPassword(c: Context<ConsoleEnv>, form: Record<string, string>) {
  const s = c.var.session!;
  const parsed = newPasswordField.safeParse(form.password ?? "");
  if (!parsed.success) return passwordPage(c, 400, false, { errors: { password: parsed.error.issues[0]?.message ?? "Choose a password." } });
  if (!(await setFirstPassword(c.env.DB, s.memberId, await hashPassword(parsed.data), await sha256Hex(s.token))))
    return passwordPage(c, 400, true, { problem: "This account has a password already: enter it as the current password." });
  return c.redirect(`${landingOf(s.role)}?done=password`, 303);
}

authRoutes.route("/", linkRoutes);
