import { Layout, type PageMeta, CsrfField } from "../layout/layout";
import { ErrorSummary, Field } from "../layout/forms";
import type { FieldErrors } from "./credentials-input";
import { PASSWORD_MIN } from "./password";
import { FragmentScript } from "./link-pages";

export type AuthFormState = { email?: string; errors?: FieldErrors; problem?: string };

export function SignInPage(props: { meta: PageMeta; csrf: string; next?: string; state?: AuthFormState }) {
  const { state = {} } = props;
  const messages = [state.problem, state.errors?.email, state.errors?.password].filter((m): m is string => !!m);
  return (
    <Layout meta={props.meta}>
      <h1>Sign in</h1>
      <ErrorSummary messages={messages} />
      <form method="post" action="/sign-in" class="stack" novalidate>
        <CsrfField token={props.csrf} />
        {props.next && <input type="hidden" name="next" value={props.next} />}
        <EmailField state={state} />
        <Field id="password" name="password" label="Password" type="password" autocomplete="current-password" required error={state.errors?.password} />
        <div>
          <button type="submit">Sign in</button>
        </div>
      </form>
      <p>
        New here? <a href="/sign-up">Create an account</a>.
      </p>
    </Layout>
  );
}

/**
 * The sign-up form. While sign-up is invite-only it shows only with an invitation (`invite`: from the
 * link's fragment, or carried back when the form is shown again); without one the page says how to get one.
 */
export function SignUpPage(props: { meta: PageMeta; csrf: string; state?: AuthFormState; inviteOnly?: boolean; invite?: string }) {
  const { state = {} } = props;
  const messages = [state.problem, state.errors?.email, state.errors?.password].filter((m): m is string => !!m);
  const waiting = props.inviteOnly && !props.invite;
  return (
    <Layout meta={props.meta}>
      <h1>Create an account</h1>
      {props.inviteOnly && (
        <p class="notice" data-without-fragment hidden={!waiting}>
          Sign-up here is by invitation only. Open the invitation link the operator of this service sent you; if you already have an account,{" "}
          <a href="/sign-in">sign in</a>.
        </p>
      )}
      <div data-with-fragment hidden={waiting}>
        <p class="lead">
          An account holds your API keys and your prepaid balance. It starts with no credits: free models work at once, paid ones once you add credits.
        </p>
        <ErrorSummary messages={messages} />
        <form method="post" action="/sign-up" class="stack" novalidate>
          <CsrfField token={props.csrf} />
          {props.inviteOnly && <input type="hidden" name="invite" value={props.invite ?? ""} data-fragment />}
          <EmailField state={state} />
          <Field
            id="password"
            name="password"
            label="Password"
            type="password"
            autocomplete="new-password"
            required
            minlength={PASSWORD_MIN}
            hint={`At least ${PASSWORD_MIN} characters. A passphrase of several words is a good choice.`}
            error={state.errors?.password}
          />
          <div>
            <button type="submit">Create account</button>
          </div>
        </form>
        <p>
          Already have an account? <a href="/sign-in">Sign in</a>.
        </p>
      </div>
      {props.inviteOnly && <FragmentScript nonce={props.meta.nonce} />}
    </Layout>
  );
}

/** The email field both forms ask for. */
function EmailField(props: { state: AuthFormState }) {
  return (
    <Field
      id="email"
      name="email"
      label="Email"
      type="email"
      autocomplete="email"
      required
      value={props.state.email}
      error={props.state.errors?.email}
      maxlength={254}
    />
  );
}

export type PasswordFormState = { errors?: Partial<Record<"current" | "password", string>>; problem?: string };

/**
 * Change the password of the signed-in account: the current one, then the new one. An account without a
 * password (made by the operator, entered through a one-time link) chooses its first one: no current field.
 */
export function ChangePasswordPage(props: { meta: PageMeta; csrf: string; hasPassword: boolean; state?: PasswordFormState }) {
  const { state = {} } = props;
  const messages = [state.problem, state.errors?.current, state.errors?.password].filter((m): m is string => !!m);
  return (
    <Layout meta={props.meta}>
      <h1>{props.hasPassword ? "Change your password" : "Choose a password"}</h1>
      {props.hasPassword ? (
        <p>Every other place you are signed in is signed out; this browser stays signed in.</p>
      ) : (
        <p>You signed in with a one-time link. Choose a password to sign in with from now on.</p>
      )}
      <ErrorSummary messages={messages} />
      <form method="post" action="/settings/password" class="stack" novalidate>
        <CsrfField token={props.csrf} />
        {props.hasPassword && (
          <Field id="current" name="current" label="Current password" type="password" autocomplete="current-password" required error={state.errors?.current} />
        )}
        <Field
          id="password"
          name="password"
          label={props.hasPassword ? "New password" : "Password"}
          type="password"
          autocomplete="new-password"
          required
          minlength={PASSWORD_MIN}
          hint={`At least ${PASSWORD_MIN} characters.`}
          error={state.errors?.password}
        />
        <div>
          <button type="submit">{props.hasPassword ? "Change password" : "Set password"}</button>
        </div>
      </form>
    </Layout>
  );
}
