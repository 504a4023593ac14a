import type { Child } from "hono/jsx";
import { CSRF_FIELD } from "../auth/csrf-token";
import { STYLESHEET_PATH } from "./stylesheet";
import type { MemberRole } from "../../db/schema";
import { can } from "../../members/permissions";

/** What every page needs to draw its frame. */
export type PageMeta = {
  title: string;
  /** The request path, to mark the current navigation item. */
  path: string;
  nonce: string;
  /** The signed-in member (with their role and the CSRF token of their forms), or null. */
  account: { email: string; role: MemberRole; csrf: string } | null;
};

const NAV_PUBLIC = [
  ["/", "Home"],
  ["/models", "Models"],
] as const;
/** The signed-in pages, each shown to the roles that may open it (src/members/permissions.ts). */
const NAV_ACCOUNT = [
  ["/settings/keys", "API keys", "keys.own"],
  ["/settings/presets", "Presets", "presets.read"],
  ["/settings/alerts", "Alerts", "alerts.read"],
  ["/settings/byok", "Carrier keys", "byok.read"],
  ["/settings/observability", "Trace export", "observability.read"],
  ["/settings/credits", "Credits", "credits.read"],
  ["/activity", "Activity", "activity.own"],
  ["/settings/members", "Members", "members.read"],
  ["/settings/audit", "Audit log", "audit.read"],
] as const;
const NAV_SIGNED_OUT = [
  ["/sign-in", "Sign in"],
  ["/sign-up", "Sign up"],
] as const;

function isCurrent(path: string, href: string): boolean {
  return href === "/" ? path === "/" : path === href || path.startsWith(href + "/");
}

/** A hidden field carrying the form's CSRF token. */
export const CsrfField = (props: { token: string }) => <input type="hidden" name={CSRF_FIELD} value={props.token} />;

export function Layout(props: { meta: PageMeta; children?: Child }) {
  const { meta } = props;
  const account = meta.account;
  const links = [
    ...NAV_PUBLIC,
    ...(account ? NAV_ACCOUNT.filter(([, , action]) => can(account.role, action)).map(([h, l]) => [h, l] as const) : NAV_SIGNED_OUT),
  ];
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${meta.title} · Switchyard`}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="site-header">
          <nav aria-label="Main" class="nav">
            <a class="brand" href="/">
              Switchyard
            </a>
            <ul>
              {links.map(([href, label]) => (
                <li>
                  <a href={href} aria-current={isCurrent(meta.path, href) ? "page" : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
            {meta.account && (
              <form method="post" action="/sign-out" class="sign-out">
                <CsrfField token={meta.account.csrf} />
                <a class="who" href="/settings/password" title="Signed in as: change your password">
                  {meta.account.email}
                </a>
                <button type="submit" class="link-button">
                  Sign out
                </button>
              </form>
            )}
          </nav>
        </header>
        <main id="main" tabindex={-1}>
          {props.children}
        </main>
        <footer class="site-footer">
          <p>
            Switchyard — an OpenAI-compatible model router. API base URL: <code>/api/v1</code> on this origin.
          </p>
        </footer>
      </body>
    </html>
  );
}
