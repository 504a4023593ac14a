import { describe, it, expect } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import { admin, ORIGIN } from "./helpers";
import { ConsoleClient, PASSWORD, csrfOf, textOf, uniqueEmail } from "./console-helpers";
import { settings } from "../../src/settings";

// The ways into the console besides signing up: one-time sign-in links the operator makes (for accounts
// made without a password), invitations, and the sign-up policy (SIGN_UP) that closes or restricts sign-up.

type SignInLink = { id: string; email: string; url: string; expires_at: string; has_password: boolean };
const tokenOf = (url: string) => new URL(url).hash.slice(1);

async function sha256Hex(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The Worker with extra vars (a sign-up policy), as a ConsoleClient's fetcher or for admin calls. */
function withVars(vars: Record<string, string>) {
  return async (req: Request) => {
    const ctx = createExecutionContext();
    const res = await app.fetch(req, { ...env, ...vars }, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  };
}

async function adminWith(vars: Record<string, string>, path: string, body: unknown = {}) {
  return withVars(vars)(
    new Request(`${ORIGIN}/admin${path}`, {
      method: "POST",
      headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

/** Opens a sign-in link's page and presses its button, as the page's script would (the token from the fragment). */
async function useLink(client: ConsoleClient, url: string): Promise<Response> {
  const page = await client.page(new URL(url).pathname);
  expect(page.status).toBe(200);
  return client.post("/sign-in/link", { token: tokenOf(url) }, { csrf: csrfOf(page.html) });
}

describe("one-time sign-in links", () => {
  it("an operator-made account (no password) signs in once with its link, chooses a password, then signs in with it", async () => {
    const { email, id } = await admin<{ email: string; id: string }>("/accounts", { email: uniqueEmail() });
    const before = Date.now();
    const link = await admin<SignInLink>(`/accounts/${encodeURIComponent(email)}/sign-in-link`, {});
    expect(link).toMatchObject({ id, email, has_password: false });
    // The link opens this origin's sign-in-link page; the token rides in the fragment, which no server sees.
    expect(link.url).toMatch(new RegExp(`^${ORIGIN}/sign-in/link#[A-Za-z0-9_-]{43}$`));
    const expires = Date.parse(link.expires_at) - before;
    expect(expires).toBeGreaterThan(59 * 60_000);
    expect(expires).toBeLessThanOrEqual(60 * 60_000 + 60_000);
    // Only the token's hash is stored.
    const token = tokenOf(link.url);
    const rows = await env.DB.prepare("SELECT * FROM one_time_links WHERE account_id = ?").bind(id).all();
    expect(rows.results).toEqual([expect.objectContaining({ token_hash: await sha256Hex(token), kind: "sign-in" })]);
    expect(JSON.stringify(rows.results)).not.toContain(token);

    const client = new ConsoleClient();
    const signedIn = await useLink(client, link.url);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe("/settings/password");
    const choose = await client.page("/settings/password");
    expect(textOf(choose.html)).toContain("Choose a password");
    expect(choose.html).not.toContain('name="current"');
    const set = await client.post("/settings/password", { password: PASSWORD }, { from: "/settings/password" });
    expect(set.status).toBe(303);
    expect((await client.page("/settings/keys")).html).toContain(email);

    // Used once: the same link again signs no one in.
    const again = new ConsoleClient();
    const reused = await useLink(again, link.url);
    expect(reused.status).toBe(400);
    expect(textOf(await reused.text())).toContain("This sign-in link has been used or has expired");
    expect(again.sessionCookie()).toBeUndefined();

    // The password works from now on, and the page asks for the current one to change it.
    const byPassword = new ConsoleClient();
    expect((await byPassword.post("/sign-in", { email, password: PASSWORD }, { from: "/sign-in" })).status).toBe(303);
    expect((await byPassword.page("/settings/password")).html).toContain('name="current"');
    expect((await admin<SignInLink>(`/accounts/${id}/sign-in-link`, {})).has_password).toBe(true);
  });

  it("an account with a password goes to its keys; a newer link replaces the older; an expired or made-up one fails", async () => {
    const email = uniqueEmail();
    await new ConsoleClient().post("/sign-up", { email, password: PASSWORD });
    const older = await admin<SignInLink>(`/accounts/${encodeURIComponent(email)}/sign-in-link`, {});
    const newer = await admin<SignInLink>(`/accounts/${encodeURIComponent(email)}/sign-in-link`, {});
    expect((await useLink(new ConsoleClient(), older.url)).status).toBe(400);
    const ok = await useLink(new ConsoleClient(), newer.url);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/settings/keys");

    const stale = await admin<SignInLink>(`/accounts/${encodeURIComponent(email)}/sign-in-link`, {});
    await env.DB.prepare("UPDATE one_time_links SET expires_at = ? WHERE token_hash = ?")
      .bind(Date.now() - 1, await sha256Hex(tokenOf(stale.url)))
      .run();
    expect((await useLink(new ConsoleClient(), stale.url)).status).toBe(400);
    for (const token of ["", "x".repeat(43), "not a token"]) {
      const client = new ConsoleClient();
      const page = await client.page("/sign-in/link");
      expect((await client.post("/sign-in/link", { token }, { csrf: csrfOf(page.html) })).status).toBe(400);
    }
  });

  it("is the operator's: without the admin token 401, an unknown account 404; a link's form needs its CSRF token", async () => {
    const { email } = await admin<{ email: string }>("/accounts", { email: uniqueEmail() });
    const res = await app.fetch(new Request(`${ORIGIN}/admin/accounts/${email}/sign-in-link`, { method: "POST" }), env);
    expect(res.status).toBe(401);
    const unknown = await app.fetch(
      new Request(`${ORIGIN}/admin/accounts/nobody@example.test/sign-in-link`, { method: "POST", headers: { authorization: "Bearer test-admin-token" } }),
      env,
    );
    expect(unknown.status).toBe(404);
    const link = await admin<SignInLink>(`/accounts/${encodeURIComponent(email)}/sign-in-link`, {});
    const forged = await new ConsoleClient().post("/sign-in/link", { token: tokenOf(link.url) }, { csrf: "forged" });
    expect(forged.status).toBe(403);
    // The refused form did not use the link up.
    expect((await useLink(new ConsoleClient(), link.url)).status).toBe(303);
  });
});

describe("sign-up policy (SIGN_UP)", () => {
  it("defaults to invite-only where unset (a deployment); npm start and these tests run open", () => {
    expect(settings({}).SIGN_UP).toBe("invite-only");
    expect(settings({ SIGN_UP: "closed" }).SIGN_UP).toBe("closed");
    expect(settings({ SIGN_UP: "sometimes" }).SIGN_UP).toBe("invite-only");
    expect(settings(env).SIGN_UP).toBe("open");
  });

  it("closed: the sign-up page says so and has no form; a posted sign-up makes no account; no invitations", async () => {
    const closed = { SIGN_UP: "closed" };
    const client = new ConsoleClient(undefined, ORIGIN, withVars(closed));
    const page = await client.page("/sign-up");
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain("Sign-up is closed");
    expect(page.html).not.toContain('action="/sign-up"');
    const email = uniqueEmail();
    const csrf = csrfOf((await client.page("/sign-in")).html);
    const res = await client.post("/sign-up", { email, password: PASSWORD }, { csrf });
    expect(res.status).toBe(403);
    expect(textOf(await res.text())).toContain("Sign-up is closed");
    expect(await env.DB.prepare("SELECT 1 FROM accounts WHERE email = ?").bind(email).first()).toBeNull();
    const invite = await adminWith(closed, "/invitations");
    expect(invite.status).toBe(409);
    expect(((await invite.json()) as { error: { message: string } }).error.message).toContain("SIGN_UP=closed");
    // The operator's way in still works: an account, then its sign-in link.
    const made = await admin<{ email: string }>("/accounts", { email: uniqueEmail() });
    const link = (await (await adminWith(closed, `/accounts/${encodeURIComponent(made.email)}/sign-in-link`)).json()) as SignInLink;
    expect((await useLink(new ConsoleClient(undefined, ORIGIN, withVars(closed)), link.url)).status).toBe(303);
  });

  it("invite-only: sign-up needs an invitation, which makes one account and is used up", async () => {
    const inviteOnly = { SIGN_UP: "invite-only" };
    const client = new ConsoleClient(undefined, ORIGIN, withVars(inviteOnly));
    const page = await client.page("/sign-up");
    expect(textOf(page.html)).toContain("Sign-up here is by invitation only");

    const email = uniqueEmail();
    const without = await client.post("/sign-up", { email, password: PASSWORD, invite: "" }, { from: "/sign-up" });
    expect(without.status).toBe(403);
    expect(textOf(await without.text())).toContain("by invitation only");
    expect(await env.DB.prepare("SELECT 1 FROM accounts WHERE email = ?").bind(email).first()).toBeNull();

    const made = await adminWith(inviteOnly, "/invitations");
    expect(made.status).toBe(201);
    const invitation = (await made.json()) as { url: string; sign_up: string };
    expect(invitation.url).toMatch(new RegExp(`^${ORIGIN}/sign-up#[A-Za-z0-9_-]{43}$`));
    expect(invitation.sign_up).toBe("invite-only");
    const invite = tokenOf(invitation.url);

    // A taken email does not use the invitation up; a weak password shows the form again with it.
    const { email: taken } = await admin<{ email: string }>("/accounts", { email: uniqueEmail() });
    expect((await client.post("/sign-up", { email: taken, password: PASSWORD, invite }, { from: "/sign-up" })).status).toBe(400);
    const weak = await client.post("/sign-up", { email, password: "short", invite }, { from: "/sign-up" });
    expect(weak.status).toBe(400);
    expect(await weak.text()).toContain(`value="${invite}"`);

    const ok = await client.post("/sign-up", { email, password: PASSWORD, invite }, { from: "/sign-up" });
    expect(ok.status).toBe(303);
    expect((await client.page("/settings/keys")).html).toContain(email);
    const second = await new ConsoleClient(undefined, ORIGIN, withVars(inviteOnly)).post(
      "/sign-up",
      { email: uniqueEmail(), password: PASSWORD, invite },
      { from: "/sign-up" },
    );
    expect(second.status).toBe(403);
  });

  it("open: anyone signs up, with no invitation", async () => {
    const client = new ConsoleClient(undefined, ORIGIN, withVars({ SIGN_UP: "open" }));
    expect(textOf((await client.page("/sign-up")).html)).not.toContain("invitation");
    expect((await client.post("/sign-up", { email: uniqueEmail(), password: PASSWORD })).status).toBe(303);
  });
});
