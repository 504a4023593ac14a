import { Layout, type PageMeta, CsrfField } from "../layout/layout";
import { ErrorSummary } from "../layout/forms";

/**
 * One-time links carry their token in the URL's fragment, which browsers never send: this script (inline,
 * allowed by the page's CSP nonce) copies it into the form's hidden field, then drops it from the address
 * bar and the history. Without JavaScript the field stays empty and the server says the link did not work.
 */
const FRAGMENT_SCRIPT = `(function () {
  var token = location.hash.slice(1), field = document.querySelector("input[data-fragment]");
  if (!field || !/^[A-Za-z0-9_-]{43}$/.test(token)) return;
  field.value = token;
  history.replaceState(null, "", location.pathname);
  document.querySelectorAll("[data-with-fragment]").forEach(function (el) { el.hidden = false; });
  document.querySelectorAll("[data-without-fragment]").forEach(function (el) { el.hidden = true; });
})();`;

export function FragmentScript(props: { nonce: string }) {
  return <script nonce={props.nonce} dangerouslySetInnerHTML={{ __html: FRAGMENT_SCRIPT }} />;
}

/** A hidden field the script fills with the link's token. */
export const FragmentField = (props: { name: string }) => <input type="hidden" name={props.name} value="" data-fragment />;

/** The page a sign-in link opens: one button, so a link previewer fetching the page signs no one in. */
export function SignInLinkPage(props: { meta: PageMeta; csrf: string; problem?: string }) {
  return (
    <Layout meta={props.meta}>
      <h1>Sign in with a one-time link</h1>
      <ErrorSummary messages={props.problem ? [props.problem] : []} />
      <p>This link was made for one account by the operator of this service. It works once, for a limited time.</p>
      <form method="post" action="/sign-in/link" class="stack">
        <CsrfField token={props.csrf} />
        <FragmentField name="token" />
        <div>
          <button type="submit">Sign in</button>
        </div>
      </form>
      <noscript>
        <p class="notice">This page needs JavaScript to read the link.</p>
      </noscript>
      <p>
        Have a password? <a href="/sign-in">Sign in with it</a>.
      </p>
      <FragmentScript nonce={props.meta.nonce} />
    </Layout>
  );
}

/** The sign-up page while sign-up is closed: no form, and where to go instead. */
export function SignUpClosedPage(props: { meta: PageMeta }) {
  return (
    <Layout meta={props.meta}>
      <h1>Sign-up is closed</h1>
      <p class="notice">This service does not take new accounts here. Its operator makes accounts and sends their owners a one-time sign-in link.</p>
      <p>
        Already have an account? <a href="/sign-in">Sign in</a>.
      </p>
    </Layout>
  );
}
