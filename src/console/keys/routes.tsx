import { Hono, type Context } from "hono";
import * as z from "zod";
import type { ConsoleEnv, SignedIn } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render, renderError } from "../layout/render";
import { csrfToken } from "../auth/csrf-token";
import {
  MAX_KEYS_PER_ACCOUNT,
  countAccountKeys,
  createKeyOnce,
  creationTokenUsed,
  deleteAccountKey,
  findAccountKey,
  findApiKey,
  listAccountKeys,
  setAccountKeyDisabled,
  updateApiKey,
  type KeySettings,
} from "../../keys/key-store";
import { randomToken } from "../http/encoding";
import { keysUsageNow } from "../../ledger/usage-now";
import { DeleteKeyPage, KeysPage, type CreatedKey, type CreateKeyState } from "./page";
import { NewManagementKeyPage } from "./management-keys";
import { EditKeyPage } from "./edit-page";
import { SETTINGS_FIELDS, fieldErrors, settingsShape, settingsValues } from "./key-settings-form";
import { guardrailSection, keyGuardrailRoutes } from "./guardrail-routes";
import { allowed, keyScopeOf } from "../http/roles";

/** /settings/keys: the signed-in account's keys; every query is scoped to that account. */
export const keyRoutes = new Hono<ConsoleEnv>();
keyRoutes.route("/", keyGuardrailRoutes); // a key's guardrails, on its edit page

const NOTICES = {
  disabled: "Key disabled: the API now refuses it with 401.",
  password: "Password changed. Every other place you were signed in is signed out.",
  enabled: "Key enabled.",
  deleted: "Key deleted.",
  updated: "Key saved.",
  exists:
    "That form had already created a key, so no other key was made. The key it created is in the list below; its secret was shown only once, when it was created.",
} as const;

/** The create forms' one-time token (`api_keys.creation_token`): a random 43-character id per rendered form. */
const CREATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

const account = (c: Context<ConsoleEnv>): SignedIn => c.var.session!;
const tooMany = `An account can have at most ${MAX_KEYS_PER_ACCOUNT} keys.`;
const keyNotFound = (c: Context<ConsoleEnv>) => renderError(c, 404, "Key not found", "There is no such key in your account.");

async function keysPage(c: Context<ConsoleEnv>, status: 200 | 400, extra: { created?: CreatedKey; form?: CreateKeyState; notice?: string }) {
  const s = account(c);
  const keys = await listAccountKeys(c.env.DB, s.accountId, keyScopeOf(s));
  const usage = keys.length
    ? await keysUsageNow(
        c.env,
        s.accountId,
        keys.map((k) => k.hash),
      )
    : {};
  const rows = keys.map((key) => ({ key, usage: usage[key.hash]! }));
  return render(
    c,
    <KeysPage
      meta={await pageMeta(c, "API keys")}
      csrf={await csrfToken(s.token)}
      creationToken={randomToken()}
      rows={rows.filter((r) => !r.key.isManagement)}
      managementRows={allowed(s, "keys.management") ? rows.filter((r) => r.key.isManagement) : undefined}
      atMaxKeys={keys.length >= MAX_KEYS_PER_ACCOUNT}
      maxKeys={MAX_KEYS_PER_ACCOUNT}
      now={Date.now()}
      {...extra}
    />,
    status,
  );
}

keyRoutes.get("/settings/keys", ...accountPage, async (c) => {
  const done = c.req.query("done");
  const notice = done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined;
  return keysPage(c, 200, { notice });
});

const name = z.string().trim().min(1, "Give the key a name.").max(100, "Use a name of at most 100 characters.");
const createForm = z.object({ name, ...settingsShape() });

/**
 * Creates a key from a form with a one-time creation token and shows it in this response only; nothing
 * about the plaintext is kept. Every later submission of the same form (the browser's resubmit on
 * reload, a double click) is a redirect to the list: never a second key, never the key again.
 */
async function createOnce(
  c: Context<ConsoleEnv>,
  form: Record<string, string>,
  name: string,
  settings: KeySettings,
  refuse: (problem: string) => Promise<Response>,
) {
  const s = account(c);
  const token = form.creation_token ?? "";
  if (!CREATION_TOKEN.test(token)) return renderError(c, 400, "This form has expired", "Reload the keys page and create the key again.");
  const alreadyCreated = () => c.redirect("/settings/keys?done=exists", 303);
  if (await creationTokenUsed(c.env.DB, token)) return alreadyCreated();
  if ((await countAccountKeys(c.env.DB, s.accountId)) >= MAX_KEYS_PER_ACCOUNT) return refuse(tooMany);
  const created = await createKeyOnce(c.env.DB, s.accountId, name, { ...settings, memberId: s.memberId }, token);
  if (!created) return alreadyCreated(); // a concurrent submission of the same form won
  return keysPage(c, 200, { created: { name: created.record.name, secret: created.key, management: created.record.isManagement } });
}

keyRoutes.post("/settings/keys", ...accountForm, async (c) => {
  const form = await readForm(c);
  const parsed = createForm.safeParse(form);
  if (!parsed.success) return keysPage(c, 400, { form: { values: form, errors: fieldErrors(parsed.error.issues, ["name", ...SETTINGS_FIELDS]) } });
  const { limit, limit_reset, include_byok_in_limit, expires_at } = parsed.data;
  const settings = { limitNano: limit, limitReset: limit_reset, includeByokInLimit: include_byok_in_limit, expiresAt: expires_at };
  return createOnce(c, form, parsed.data.name, settings, (problem) => keysPage(c, 400, { form: { problem } }));
});

/** Management keys have their own form: a name only (they run no completions, so they have no limit). */
async function managementPage(c: Context<ConsoleEnv>, status: 200 | 400, state: { name?: string; error?: string; problem?: string } = {}) {
  const s = account(c);
  return render(
    c,
    <NewManagementKeyPage meta={await pageMeta(c, "Create a management key")} csrf={await csrfToken(s.token)} creationToken={randomToken()} {...state} />,
    status,
  );
}

keyRoutes.get("/settings/keys/management", ...accountPage, (c) => managementPage(c, 200));

keyRoutes.post("/settings/keys/management", ...accountForm, async (c) => {
  const form = await readForm(c);
  const parsed = name.safeParse(form.name ?? "");
  if (!parsed.success) return managementPage(c, 400, { name: form.name, error: parsed.error.issues[0]!.message });
  return createOnce(c, form, parsed.data, { isManagement: true }, (problem) => managementPage(c, 400, { problem }));
});

const hashField = z.object({ key: z.string().regex(/^[0-9a-f]{64}$/) });

/** The account's API key named by the form or query (never a management key, never another account's). */
async function apiKeyOf(c: Context<ConsoleEnv>, fields: unknown) {
  const parsed = hashField.safeParse(fields);
  return parsed.success ? findApiKey(c.env.DB, account(c).accountId, parsed.data.key, keyScopeOf(account(c))) : undefined;
}

keyRoutes.get("/settings/keys/edit", ...accountPage, async (c) => {
  const key = await apiKeyOf(c, { key: c.req.query("key") });
  if (!key) return keyNotFound(c);
  return render(
    c,
    <EditKeyPage meta={await pageMeta(c, `Edit key ${key.name}`)} csrf={await csrfToken(account(c).token)} apiKey={key} values={settingsValues(key)}>
      {await guardrailSection(c, key)}
    </EditKeyPage>,
  );
});

/** Saves an API key's limit, reset period, BYOK counting and expiry (all of them, as the form shows them). */
keyRoutes.post("/settings/keys/edit", ...accountForm, async (c) => {
  const form = await readForm(c);
  const key = await apiKeyOf(c, form);
  if (!key) return keyNotFound(c);
  const parsed = z.object(settingsShape(key.expiresAt)).safeParse(form);
  if (!parsed.success) {
    const page = (
      <EditKeyPage
        meta={await pageMeta(c, `Edit key ${key.name}`)}
        csrf={await csrfToken(account(c).token)}
        apiKey={key}
        values={form}
        errors={fieldErrors(parsed.error.issues, SETTINGS_FIELDS)}
      >
        {await guardrailSection(c, key)}
      </EditKeyPage>
    );
    return render(c, page, 400);
  }
  const { limit, limit_reset, include_byok_in_limit, expires_at } = parsed.data;
  const changes = { limitNano: limit, limitReset: limit_reset, includeByokInLimit: include_byok_in_limit, expiresAt: expires_at };
  const saved = await updateApiKey(c.env.DB, account(c).accountId, key.hash, changes, keyScopeOf(account(c)));
  if (!saved) return keyNotFound(c); // deleted meanwhile
  return c.redirect("/settings/keys?done=updated", 303);
});

for (const [action, disabled] of [
  ["disable", true],
  ["enable", false],
] as const) {
  keyRoutes.post(`/settings/keys/${action}`, ...accountForm, async (c) => {
    const parsed = hashField.safeParse(await readForm(c));
    const s = account(c);
    const key = parsed.success ? await setAccountKeyDisabled(c.env.DB, s.accountId, parsed.data.key, disabled, keyScopeOf(s)) : undefined;
    if (!key) return keyNotFound(c);
    return c.redirect(`/settings/keys?done=${action}d`, 303);
  });
}

keyRoutes.get("/settings/keys/delete", ...accountPage, async (c) => {
  const s = account(c);
  const parsed = hashField.safeParse({ key: c.req.query("key") });
  const key = parsed.success ? await findAccountKey(c.env.DB, s.accountId, parsed.data.key, keyScopeOf(s)) : undefined;
  if (!key) return keyNotFound(c);
  return render(c, <DeleteKeyPage meta={await pageMeta(c, `Delete key ${key.name}`)} csrf={await csrfToken(s.token)} apiKey={key} />);
});

keyRoutes.post("/settings/keys/delete", ...accountForm, async (c) => {
  const parsed = hashField.safeParse(await readForm(c));
  const s = account(c);
  const key = parsed.success ? await deleteAccountKey(c.env.DB, s.accountId, parsed.data.key, keyScopeOf(s)) : undefined;
  if (!key) return keyNotFound(c);
  return c.redirect("/settings/keys?done=deleted", 303);
});
