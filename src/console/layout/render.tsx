import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { ConsoleEnv } from "../console-env";
import { csrfToken } from "../auth/csrf-token";
import { Layout, type PageMeta } from "./layout";

/** The frame of a page for this request: title, current path, nonce and the signed-in account. */
export async function pageMeta(c: Context<ConsoleEnv>, title: string): Promise<PageMeta> {
  const s = c.get("session");
  return { title, path: c.req.path, nonce: c.get("nonce") ?? "", account: s ? { email: s.email, role: s.role, csrf: await csrfToken(s.token) } : null };
}

/** Sends a server-rendered page. */
export async function render(c: Context, node: JSX.Element, status: ContentfulStatusCode = 200): Promise<Response> {
  return c.html("<!doctype html>\n" + (await node).toString(), status);
}

/** A page that only says what went wrong and where to go next. */
export async function renderError(c: Context<ConsoleEnv>, status: ContentfulStatusCode, title: string, message: string): Promise<Response> {
  return render(
    c,
    <Layout meta={await pageMeta(c, title)}>
      <h1>{title}</h1>
      <p>{message}</p>
      <p>
        <a href="/">Go to the home page</a>
      </p>
    </Layout>,
    status,
  );
}
