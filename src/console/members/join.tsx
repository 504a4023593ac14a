import { Hono, type Context } from "hono";
import type { ConsoleEnv } from "../console-env";
import { publicForm, publicPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render } from "../layout/render";
import { Layout, CsrfField, type PageMeta } from "../layout/layout";
import { ErrorSummary, Field } from "../layout/forms";
import { ensurePreSessionToken } from "../auth/csrf";
import { csrfToken } from "../auth/csrf-token";
import { newPasswordField } from "../auth/credentials-input";
import { hashPassword, PASSWORD_MIN } from "../auth/password";
import { endSession, startSession } from "../auth/session";
import { FragmentField, FragmentScript } from "../auth/link-pages";
import { acceptInvite, INVITE_PATH, peekInvite } from "../../members/invite-store";
import { landingOf } from "../http/roles";
import { audit } from "../../members/audit-store";

/**
 * /join: accepting an invitation to an account (made on the Members page). The token is in the link's
 * fragment (never sent to a server); the page's script puts it in the form, whose POST uses it up, makes the
 * member with the invited email and role and their password, and signs them in.
 */
export const joinRoutes = new Hono<ConsoleEnv>();

const INVALID =
  "This invitation has been used, revoked or has expired (each works once, for a limited time), or the page was opened without one. Ask whoever invited you for a new link.";
const TAKEN =
  "This email already belongs to a member of an account on this service, so it cannot join another. The invitation is used up: ask for one to another email, or sign in.";

function JoinPage(props: { meta: PageMeta; csrf: string; problem?: string; error?: string; token?: string }) {
  return (
    <Layout meta={props.meta}>
      <h1>Join an account</h1>
      <ErrorSummary messages={[props.problem, props.error].filter((m): m is string => !!m)} />
      <p>You were invited to an account on this service. Choose your password: you sign in with the invited email and it.</p>
      <form method="post" action={INVITE_PATH} class="stack">
        <CsrfField token={props.csrf} />
        {props.token ? <input type="hidden" name="token" value={props.token} /> : <FragmentField name="token" />}
        <Field
          id="join-password"
          name="password"
          label="Password"
          type="password"
          autocomplete="new-password"
          required
          minlength={PASSWORD_MIN}
          hint={`At least ${PASSWORD_MIN} characters.`}
          error={props.error}
        />
        <div>
          <button type="submit">Join and sign in</button>
        </div>
      </form>
      <noscript>
        <p class="notice">This page needs JavaScript to read the link.</p>
      </noscript>
      <FragmentScript nonce={props.meta.nonce} />
    </Layout>
  );
}

async function joinPage(c: Context<ConsoleEnv>, status: 200 | 400, state: { problem?: string; error?: string; token?: string } = {}) {
  const csrf = await csrfToken(ensurePreSessionToken(c));
  return render(c, <JoinPage meta={await pageMeta(c, "Join an account")} csrf={csrf} {...state} />, status);
}

joinRoutes.get(INVITE_PATH, ...publicPage, (c) => joinPage(c, 200));

joinRoutes.post(INVITE_PATH, ...publicForm, async (c) => {
  const form = await readForm(c);
  const token = form.token ?? "";
  // The invitation is checked before the password is hashed, so a guessed link costs no PBKDF2 work.
  if (!(await peekInvite(c.env.DB, token))) return joinPage(c, 400, { problem: INVALID });
  const password = newPasswordField.safeParse(form.password ?? "");
  // The form comes back with the token (the address bar no longer has it), for the person to try another password.
  if (!password.success) return joinPage(c, 400, { error: password.error.issues[0]?.message ?? "Choose a password.", token });
  const accepted = await acceptInvite(c.env.DB, token, await hashPassword(password.data));
  if (!accepted.ok) return joinPage(c, 400, { problem: accepted.reason === "email-taken" ? TAKEN : INVALID });
  await endSession(c); // whoever was signed in on this browser, the new member is now
  await startSession(c, accepted);
  await audit(c.env.DB, { accountId: accepted.accountId, memberId: accepted.memberId, email: accepted.email, via: "session" }, "member.join", accepted.email, {
    role: accepted.role,
  });
  return c.redirect(landingOf(accepted.role), 303);
});
