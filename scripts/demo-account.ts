import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname } from "node:path";
import { AdminClient } from "./admin-client.ts";

export const DEMO_EMAIL = "demo@switchyard.local";
export const DEMO_KEY_FILE = ".dev/demo-key";

/** Makes sure the demo account ($10.00 of credits) exists and a working demo key is saved; returns the key. */
export async function ensureDemoAccount(admin: AdminClient, baseUrl: string, keyFile = DEMO_KEY_FILE): Promise<{ key: string; created: boolean }> {
  let account = await admin.request<{ id: string }>("GET", `/accounts/${encodeURIComponent(DEMO_EMAIL)}`).catch(() => undefined);
  account ??= await admin.request<{ id: string }>("POST", "/accounts", { email: DEMO_EMAIL, credits: 10 });
  if (existsSync(keyFile)) {
    const saved = readFileSync(keyFile, "utf8").trim();
    const res = await fetch(`${baseUrl}/api/v1/key`, { headers: { authorization: `Bearer ${saved}` } });
    if (res.ok) return { key: saved, created: false };
  }
  const { key } = await admin.request<{ key: string }>("POST", "/keys", { account: account.id, label: "demo" });
  mkdirSync(dirname(keyFile), { recursive: true });
  writeFileSync(keyFile, key + "\n", { mode: 0o600 });
  return { key, created: true };
}

/** A one-time link into the console as the demo account (where the demo key's requests show); each call makes a new one. */
export async function demoSignInLink(admin: AdminClient): Promise<{ url: string; expires_at: string }> {
  return admin.request<{ url: string; expires_at: string }>("POST", `/accounts/${encodeURIComponent(DEMO_EMAIL)}/sign-in-link`);
}
