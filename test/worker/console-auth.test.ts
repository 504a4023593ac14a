import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin } from "./helpers";
import { ConsoleClient, PASSWORD, csrfOf, signUp, textOf, uniqueEmail } from "./console-helpers";
import { hashPassword, verifyPassword, PBKDF2_ITERATIONS } from "../../src/console/auth/password";

type CredentialRow = { member_id: string; algorithm: string; iterations: number; salt: string; password_hash: string };
const b64 = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));

async function credentialOf(email: string): Promise<CredentialRow> {
  const row = await env.DB.prepare("SELECT c.* FROM credentials c JOIN members m ON m.id = c.member_id WHERE m.email = ?").bind(email).first<CredentialRow>();
  if (!row) throw new Error(`no credential for ${email}`);
  return row;
}

async function sha256Hex(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function signIn(client: ConsoleClient, email: string, password: string, extra: Record<string, string> = {}) {
  return client.post("/sign-in", { email, password, ...extra }, { from: "/sign-in" });
}

describe("sign up", () => {
  it("creates the account, stores a PBKDF2-SHA256 hash (100,000 iterations, per-user salt) and signs in", async () => {
    const email = uniqueEmail();
    const client = new ConsoleClient();
    const res = await client.post("/sign-up", { email: email.toUpperCase(), password: PASSWORD });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/settings/keys");

    const cred = await credentialOf(email); // stored lower-cased
    expect(cred.algorithm).toBe("pbkdf2-sha256");
    expect(cred.iterations).toBe(100_000);
    expect(b64(cred.salt)).toHaveLength(16);
    expect(b64(cred.password_hash)).toHaveLength(32);
    // The stored hash is exactly PBKDF2-HMAC-SHA256(password, salt, 100000) — recomputed here independently.
    const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(PASSWORD), "PBKDF2", false, ["deriveBits"]);
    const bits = new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: b64(cred.salt), iterations: 100_000 }, material, 256));
    expect([...bits]).toEqual([...b64(cred.password_hash)]);
    // Nothing stores the password itself.
    const dump = JSON.stringify(await env.DB.prepare("SELECT * FROM credentials WHERE member_id = ?").bind(cred.member_id).all());
    expect(dump).not.toContain(PASSWORD);

    // The same password for another user gets another salt and another hash.
    const other = await signUp(uniqueEmail(), PASSWORD);
    const cred2 = await credentialOf(other.email);
    expect(cred2.salt).not.toBe(cred.salt);
    expect(cred2.password_hash).not.toBe(cred.password_hash);

    const page = await client.page("/settings/keys");
    expect(page.status).toBe(200);
    expect(page.html).toContain(email);
  });

  it("the session cookie is HttpOnly, SameSite=Lax, Secure with the __Host- prefix on https, and only its hash is stored", async () => {
    const client = new ConsoleClient();
    const res = await client.post("/sign-up", { email: uniqueEmail(), password: PASSWORD });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-sy_session="));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; Secure/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\//i);
    const token = client.sessionCookie()!;
    const row = await env.DB.prepare("SELECT token_hash FROM sessions WHERE token_hash = ?")
      .bind(await sha256Hex(token))
      .first();
    expect(row).not.toBeNull();
    expect(await env.DB.prepare("SELECT 1 FROM sessions WHERE token_hash = ?").bind(token).first()).toBeNull();
  });

  it("on plain http (local runs) the cookie is not Secure and has no __Host- prefix", async () => {
    const client = new ConsoleClient(undefined, "http://127.0.0.1:8787");
    const res = await client.post("/sign-up", { email: uniqueEmail(), password: PASSWORD });
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("sy_session="));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i);
  });

  it("rejects a short password and a malformed email with field errors, creating nothing", async () => {
    const email = uniqueEmail();
    const client = new ConsoleClient();
    const short = await client.post("/sign-up", { email, password: "short" });
    expect(short.status).toBe(400);
    expect(textOf(await short.text())).toContain("at least 10 characters");
    const bad = await client.post("/sign-up", { email: "not-an-email", password: PASSWORD });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('aria-invalid="true"');
    expect(await env.DB.prepare("SELECT 1 FROM accounts WHERE email = ?").bind(email).first()).toBeNull();
  });

  it("a taken email gets a generic answer that does not say the email exists", async () => {
    const { email } = await signUp();
    const res = await new ConsoleClient().post("/sign-up", { email, password: "another password 123" });
    expect(res.status).toBe(400);
    const text = textOf(await res.text());
    expect(text).toContain("We could not create an account with these details");
    expect(text).not.toMatch(/exists|already registered|taken/i);
    // An operator-created account (no password) cannot be claimed by signing up with its email.
    const { email: opEmail } = await admin<{ email: string }>("/accounts", { email: uniqueEmail() });
    expect((await new ConsoleClient().post("/sign-up", { email: opEmail, password: PASSWORD })).status).toBe(400);
    expect(await env.DB.prepare("SELECT 1 FROM credentials c JOIN members m ON m.id = c.member_id WHERE m.email = ?").bind(opEmail).first()).toBeNull();
  });
});

describe("password hashing", () => {
  it("hashPassword/verifyPassword round-trip with the stored parameters", async () => {
    const h = await hashPassword("a long enough password");
    expect(h.iterations).toBe(PBKDF2_ITERATIONS);
    expect(PBKDF2_ITERATIONS).toBe(100_000);
    expect(await verifyPassword("a long enough password", h)).toBe(true);
    expect(await verifyPassword("a long enough passworD", h)).toBe(false);
    expect(await verifyPassword("a long enough password", { ...h, algorithm: "md5" })).toBe(false);
  });
});

describe("sign in and sign out", () => {
  it("signs in with the right password and goes to a safe `next`", async () => {
    const { email } = await signUp();
    const client = new ConsoleClient();
    const res = await signIn(client, email, PASSWORD, { next: "/activity" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/activity");
    expect((await client.page("/activity")).status).toBe(200);
    // An open redirect is not possible: a foreign `next` goes to the keys page.
    const again = await signIn(new ConsoleClient(), email, PASSWORD, { next: "https://evil.example/" });
    expect(again.headers.get("location")).toBe("/settings/keys");
    const slashes = await signIn(new ConsoleClient(), email, PASSWORD, { next: "//evil.example/" });
    expect(slashes.headers.get("location")).toBe("/settings/keys");
  });

  it("a wrong password, an unknown email and a password-less account get the same answer", async () => {
    const { email } = await signUp();
    const { email: opEmail } = await admin<{ email: string }>("/accounts", { email: uniqueEmail() });
    const answers = [];
    for (const [e, p] of [
      [email, "wrong password!"],
      [uniqueEmail(), PASSWORD],
      [opEmail, PASSWORD],
    ] as const) {
      const res = await signIn(new ConsoleClient(), e, p);
      expect(res.status).toBe(401);
      expect(res.headers.getSetCookie().some((c) => c.includes("sy_session=") && !c.includes("Max-Age=0"))).toBe(false);
      const summary = /<div class="error-summary"[\s\S]*?<\/div>/.exec(await res.text())?.[0];
      answers.push(textOf(summary ?? ""));
    }
    expect(answers[0]).toContain("Email or password is incorrect.");
    expect(new Set(answers).size).toBe(1);
  });

  it("signing out deletes the session: the old cookie no longer opens any page", async () => {
    const { client, accountId } = await signUp();
    const token = client.sessionCookie()!;
    const res = await client.post("/sign-out", {}, { from: "/settings/keys" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/");
    expect(res.headers.getSetCookie().some((c) => /^__Host-sy_session=;/.test(c) && /Max-Age=0/i.test(c))).toBe(true);
    expect(
      await env.DB.prepare("SELECT 1 FROM sessions WHERE token_hash = ?")
        .bind(await sha256Hex(token))
        .first(),
    ).toBeNull();
    // Replaying the old cookie by hand.
    const replay = new ConsoleClient();
    replay.cookies.set("__Host-sy_session", token);
    const page = await replay.get("/settings/keys");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/sign-in?next=%2Fsettings%2Fkeys");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM sessions WHERE account_id = ?").bind(accountId).first<{ n: number }>()).toEqual({ n: 0 });
  });

  it("a signed-in visitor of /sign-in or /sign-up is sent to the keys page", async () => {
    const { client } = await signUp();
    for (const p of ["/sign-in", "/sign-up"]) {
      const res = await client.get(p);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/settings/keys");
    }
  });
});

describe("CSRF", () => {
  it("sign-in and sign-up refuse a POST without the form's token, with another browser's token, or from another origin", async () => {
    const { email } = await signUp();
    const victim = new ConsoleClient();
    await victim.page("/sign-in"); // has a pre-session cookie
    const attacker = new ConsoleClient();
    const attackerToken = csrfOf((await attacker.page("/sign-in")).html);

    expect((await victim.post("/sign-in", { email, password: PASSWORD }, { csrf: null })).status).toBe(403);
    expect((await victim.post("/sign-in", { email, password: PASSWORD }, { csrf: attackerToken })).status).toBe(403);
    expect((await victim.post("/sign-up", { email: uniqueEmail(), password: PASSWORD }, { csrf: "0".repeat(64) })).status).toBe(403);
    expect((await victim.post("/sign-in", { email, password: PASSWORD }, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect((await victim.post("/sign-in", { email, password: PASSWORD }, { headers: { "sec-fetch-site": "cross-site" } })).status).toBe(403);
    const noCookie = new ConsoleClient();
    expect((await noCookie.post("/sign-in", { email, password: PASSWORD }, { csrf: attackerToken })).status).toBe(403);
    expect(victim.sessionCookie()).toBeUndefined();
    // …and the real form works.
    expect((await victim.post("/sign-in", { email, password: PASSWORD })).status).toBe(303);
  });

  it("sign-out refuses a forged POST: the session survives", async () => {
    const { client } = await signUp();
    const res = await client.post("/sign-out", {}, { csrf: null });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("This form has expired");
    expect((await client.get("/settings/keys")).status).toBe(200);
  });
});

describe("sign-in rate limits", () => {
  it("per email: after 5 attempts in 15 minutes even the right password is refused (429), from any client", async () => {
    const { email } = await signUp();
    const client = new ConsoleClient();
    for (let i = 0; i < 5; i++) expect((await signIn(client, email, `wrong password ${i}`)).status).toBe(401);
    const limited = await signIn(client, email, PASSWORD);
    expect(limited.status).toBe(429);
    expect(textOf(await limited.text())).toMatch(/Too many sign-in attempts\. Wait \d+ minutes/);
    expect((await signIn(new ConsoleClient(), email, PASSWORD)).status).toBe(429);
    // Other emails from the same client are not affected.
    const other = await signUp();
    expect((await signIn(client, other.email, PASSWORD)).status).toBe(303);
  });

  it("a successful sign-in clears its email's counter", async () => {
    const { email } = await signUp();
    const client = new ConsoleClient();
    for (let i = 0; i < 4; i++) expect((await signIn(client, email, "nope nope nope")).status).toBe(401);
    expect((await signIn(new ConsoleClient(), email, PASSWORD)).status).toBe(303);
    for (let i = 0; i < 4; i++) expect((await signIn(client, email, "nope nope nope")).status).toBe(401);
    expect((await signIn(new ConsoleClient(), email, PASSWORD)).status).toBe(303);
  });

  it("per client: 20 attempts in 15 minutes, whatever the emails; other clients are not affected", async () => {
    const client = new ConsoleClient();
    for (let i = 0; i < 20; i++) expect((await signIn(client, uniqueEmail(), PASSWORD)).status).toBe(401);
    const { email } = await signUp();
    expect((await signIn(client, email, PASSWORD)).status).toBe(429);
    expect((await signIn(new ConsoleClient(), email, PASSWORD)).status).toBe(303);
  });

  it("sign-up: 10 new accounts per client per hour", async () => {
    const client = new ConsoleClient();
    for (let i = 0; i < 10; i++) {
      const c = new ConsoleClient(client.ip);
      expect((await c.post("/sign-up", { email: uniqueEmail(), password: PASSWORD })).status).toBe(303);
    }
    const email = uniqueEmail();
    const res = await new ConsoleClient(client.ip).post("/sign-up", { email, password: PASSWORD });
    expect(res.status).toBe(429);
    expect(await env.DB.prepare("SELECT 1 FROM accounts WHERE email = ?").bind(email).first()).toBeNull();
  });
});

describe("changing the password", () => {
  it("checks the current one, stores the new one, ends every other session and keeps this one", async () => {
    const { client, email } = await signUp();
    const elsewhere = new ConsoleClient();
    expect((await elsewhere.post("/sign-in", { email, password: PASSWORD }, { from: "/sign-in" })).status).toBe(303);
    expect((await elsewhere.page("/settings/keys")).status).toBe(200);

    const wrong = await client.post("/settings/password", { current: "not my password", password: "a brand new passphrase" });
    expect(wrong.status).toBe(400);
    expect(textOf(await wrong.text())).toContain("The current password is not right.");
    const short = await client.post("/settings/password", { current: PASSWORD, password: "short" });
    expect(short.status).toBe(400);

    const changed = await client.post("/settings/password", { current: PASSWORD, password: "a brand new passphrase" });
    expect(changed.status).toBe(303);
    expect(changed.headers.get("location")).toBe("/settings/keys?done=password");
    expect((await client.page("/settings/keys")).status).toBe(200); // this browser stays signed in
    expect((await elsewhere.get("/settings/keys")).status).toBe(303); // the other session ended
    expect((await new ConsoleClient().post("/sign-in", { email, password: PASSWORD }, { from: "/sign-in" })).status).toBe(401);
    expect((await new ConsoleClient().post("/sign-in", { email, password: "a brand new passphrase" }, { from: "/sign-in" })).status).toBe(303);
  });

  it("needs a signed-in session and its CSRF token", async () => {
    expect((await new ConsoleClient().get("/settings/password")).status).toBe(303);
    const { client } = await signUp();
    expect((await client.post("/settings/password", { current: PASSWORD, password: "a brand new passphrase" }, { csrf: null })).status).toBe(403);
  });
});
