import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { ORIGIN } from "./helpers";

/**
 * A minimal browser for console handler tests: a cookie jar, a client address, form posts that
 * carry the CSRF token read from the page, and no redirect following (tests look at each hop).
 */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}-${Math.random().toString(36).slice(2)}`,
    readonly origin = ORIGIN,
    /** How requests reach the Worker; by default its real entry point. */
    readonly fetcher: (req: Request) => Promise<Response> = (req) => exports.default.fetch(req),
  ) {}

  private store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    return { "cf-connecting-ip": this.ip, ...(cookie ? { cookie } : {}), ...extra };
  }

  async get(path: string): Promise<Response> {
    const res = await this.fetcher(new Request(this.origin + path, { headers: this.headers(), redirect: "manual" }));
    this.store(res);
    return res;
  }

  /** GETs `path` and returns the status and HTML body. */
  async page(path: string): Promise<{ status: number; html: string; res: Response }> {
    const res = await this.get(path);
    return { status: res.status, html: await res.text(), res };
  }

  /** POSTs a form as a browser would from this origin; `csrf` defaults to the token on `from`'s page. */
  async post(
    path: string,
    fields: Record<string, string>,
    opts: { from?: string; csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    let csrf = opts.csrf;
    if (csrf === undefined) csrf = csrfOf((await this.page(opts.from ?? path)).html);
    const body = new URLSearchParams({ ...(csrf === null ? {} : { _csrf: csrf }), ...fields });
    const res = await this.fetcher(
      new Request(this.origin + path, {
        method: "POST",
        headers: this.headers({ "content-type": "application/x-www-form-urlencoded", origin: this.origin, "sec-fetch-site": "same-origin", ...opts.headers }),
        body,
        redirect: "manual",
      }),
    );
    this.store(res);
    return res;
  }

  sessionCookie(): string | undefined {
    return this.cookies.get("__Host-sy_session") ?? this.cookies.get("sy_session");
  }
}

export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error("no CSRF token on the page");
  return m[1]!;
}

let n = 0;
export const uniqueEmail = () => `console${Date.now()}-${n++}-${Math.random().toString(36).slice(2, 8)}@example.test`;
export const PASSWORD = "correct horse battery staple";

/** Signs up a new account through the console; returns the signed-in client and the account id. */
export async function signUp(email = uniqueEmail(), password = PASSWORD): Promise<{ client: ConsoleClient; email: string; accountId: string }> {
  const client = new ConsoleClient();
  const res = await client.post("/sign-up", { email, password });
  if (res.status !== 303) throw new Error(`sign-up: ${res.status} ${await res.text()}`);
  const row = await env.DB.prepare("SELECT id FROM accounts WHERE email = ?").bind(email).first<{ id: string }>();
  return { client, email, accountId: row!.id };
}

/** The create-key form's fields as the keys page renders them: its CSRF token and its one-time creation token. */
export async function keyForm(client: ConsoleClient): Promise<{ csrf: string; creationToken: string }> {
  const html = (await client.page("/settings/keys")).html;
  const m = /name="creation_token" value="([^"]+)"/.exec(html);
  return { csrf: csrfOf(html), creationToken: m?.[1] ?? "" };
}

/** Creates a key through the console and returns its plaintext (read from the one response that shows it). */
export async function createKeyViaConsole(client: ConsoleClient, name: string, limit = ""): Promise<{ key: string; html: string }> {
  const form = await keyForm(client);
  const res = await client.post("/settings/keys", { name, limit, creation_token: form.creationToken }, { csrf: form.csrf });
  const html = await res.text();
  const m = /value="(sk-sy-v1-[0-9a-f]{64})"/.exec(html);
  if (res.status !== 200 || !m) throw new Error(`create key: ${res.status}`);
  return { key: m[1]!, html };
}

/** Text content of the page with tags removed (for "does the page say X" checks). */
export function textOf(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/\s+/g, " ");
}
