import { Layout, type PageMeta, CsrfField } from "../layout/layout";
import { ErrorSummary, Field } from "../layout/forms";
import type { FieldErrors } from "./credentials-input";
import { PASSWORD_MIN } from "./password";

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

export function SignUpPage(props: { meta: PageMeta; csrf: string; state?: AuthFormState }) {
  const { state = {} } = props;
  const messages = [state.problem, state.errors?.email, state.errors?.password].filter((m): m is string => !!m);
  return (
    <Layout meta={props.meta}>
      <h1>Create an account</h1>
      <p class="lead">
        An account holds your API keys and your prepaid balance. It starts with no credits: free models work at once, paid ones once you add credits.
      </p>
      <ErrorSummary messages={messages} />
      <form method="post" action="/sign-up" class="stack" novalidate>
        <CsrfField token={props.csrf} />
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

/** Change the password of the signed-in account: the current one, then the new one. */
export function ChangePasswordPage(props: { meta: PageMeta; csrf: string; state?: PasswordFormState }) {
  const { state = {} } = props;
  const messages = [state.problem, state.errors?.current, state.errors?.password].filter((m): m is string => !!m);
  return (
    <Layout meta={props.meta}>
      <h1>Change your password</h1>
      <p>Every other place you are signed in is signed out; this browser stays signed in.</p>
      <ErrorSummary messages={messages} />
      <form method="post" action="/settings/password" class="stack" novalidate>
        <CsrfField token={props.csrf} />
        <Field id="current" name="current" label="Current password" type="password" autocomplete="current-password" required error={state.errors?.current} />
        <Field
          id="password"
          name="password"
          label="New password"
          type="password"
          autocomplete="new-password"
          required
          minlength={PASSWORD_MIN}
          hint={`At least ${PASSWORD_MIN} characters.`}
          error={state.errors?.password}
        />
        <div>
          <button type="submit">Change password</button>
        </div>
      </form>
    </Layout>
  );
}
