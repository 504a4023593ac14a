import { Hono, type Context } from "hono";
import * as z from "zod";
import type { ConsoleEnv, SignedIn } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { parseUsdInput } from "../http/usd-input";
import { pageMeta, render, renderError } from "../layout/render";
import { csrfToken } from "../auth/csrf-token";
import { countAccountKeys, createKeyOnce, creationTokenUsed, deleteAccountKey, findAccountKey, listAccountKeys, setAccountKeyDisabled } from "../../db/keys";
import { randomToken } from "../http/encoding";
import { ledgerFor } from "../../ledger/ledger";
import { DeleteKeyPage, KeysPage, type CreateKeyState, type KeyRow } from "./page";

/** /settings/keys: the signed-in account's keys; every query is scoped to that account. */
export const keyRoutes = new Hono<ConsoleEnv>();

export const MAX_KEYS = 50;
const KEY_LIMIT_MAX_NANO = 1_000_000 * 1_000_000_000;

const NOTICES = {
  disabled: "Key disabled: the API now refuses it with 401.",
  enabled: "Key enabled.",
  deleted: "Key deleted.",
  exists: "That form had already created a key, so no other key was made. The key it created is in the list below; its secret was shown only once, when it was created.",
} as const;

/** The create form's one-time token (`api_keys.creation_token`): a random 43-character id per rendered form. */
const CREATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

const account = (c: Context<ConsoleEnv>): SignedIn => c.var.session!;

async function keyRows(c: Context<ConsoleEnv>, accountId: string): Promise<KeyRow[]> {
  const keys = await listAccountKeys(c.env.DB, accountId);
  const ledger = ledgerFor(c.env, accountId);
  return Promise.all(keys.map(async (key) => ({ key, usage: await ledger.keyUsage(key.hash) })));
}

async function keysPage(c: Context<ConsoleEnv>, status: 200 | 400, extra: { created?: { name: string; secret: string }; form?: CreateKeyState; notice?: string }) {
  const s = account(c);
  const rows = await keyRows(c, s.accountId);
  return render(
    c,
    <KeysPage meta={await pageMeta(c, "API keys")} csrf={await csrfToken(s.token)} creationToken={randomToken()} rows={rows} maxKeys={MAX_KEYS} {...extra} />,
    status,
  );
}

keyRoutes.get("/settings/keys", ...accountPage, async (c) => {
  const done = c.req.query("done");
  const notice = done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined;
  return keysPage(c, 200, { notice });
});

const createForm = z.object({
  name: z.string().trim().min(1, "Give the key a name.").max(100, "Use a name of at most 100 characters."),
  limit: z
    .string()
    .trim()
    .optional()
    .transform((v, ctx) => {
      if (!v) return null;
      const nano = parseUsdInput(v);
      if (nano === undefined || nano > KEY_LIMIT_MAX_NANO) {
        ctx.addIssue({ code: "custom", message: "Enter the credit limit as an amount in USD, like 5 or 12.50 (at most 1,000,000), or leave it empty." });
        return z.NEVER;
      }
      return nano;
    }),
});

/**
 * Creates a key and shows it in this response only; nothing about the plaintext is kept. The form's
 * one-time creation token makes every later submission of the same form (the browser's resubmit on
 * reload, a double click) a redirect to the list: never a second key, never the key again.
 */
keyRoutes.post("/settings/keys", ...accountForm, async (c) => {
  const s = account(c);
  const form = await readForm(c);
  const parsed = createForm.safeParse(form);
  if (!parsed.success) {
    const errors: { name?: string; limit?: string } = {};
    for (const i of parsed.error.issues) if ((i.path[0] === "name" || i.path[0] === "limit") && !errors[i.path[0]]) errors[i.path[0]] = i.message;
    return keysPage(c, 400, { form: { name: form.name, limit: form.limit, errors } });
  }
  const token = form.creation_token ?? "";
  if (!CREATION_TOKEN.test(token)) return renderError(c, 400, "This form has expired", "Reload the keys page and create the key again.");
  const alreadyCreated = () => c.redirect("/settings/keys?done=exists", 303);
  if (await creationTokenUsed(c.env.DB, token)) return alreadyCreated();
  if ((await countAccountKeys(c.env.DB, s.accountId)) >= MAX_KEYS) return keysPage(c, 400, { form: { problem: `An account can have at most ${MAX_KEYS} keys.` } });
  const created = await createKeyOnce(c.env.DB, s.accountId, parsed.data.name, { limitNano: parsed.data.limit }, token);
  if (!created) return alreadyCreated(); // a concurrent submission of the same form won
  return keysPage(c, 200, { created: { name: created.record.name, secret: created.key } });
});

const hashField = z.object({ key: z.string().regex(/^[0-9a-f]{64}$/) });

for (const [action, disabled] of [["disable", true], ["enable", false]] as const) {
  keyRoutes.post(`/settings/keys/${action}`, ...accountForm, async (c) => {
    const parsed = hashField.safeParse(await readForm(c));
    const key = parsed.success ? await setAccountKeyDisabled(c.env.DB, account(c).accountId, parsed.data.key, disabled) : undefined;
    if (!key) return renderError(c, 404, "Key not found", "There is no such key in your account.");
    return c.redirect(`/settings/keys?done=${action}d`, 303);
  });
}

keyRoutes.get("/settings/keys/delete", ...accountPage, async (c) => {
  const s = account(c);
  const parsed = hashField.safeParse({ key: c.req.query("key") });
  const key = parsed.success ? await findAccountKey(c.env.DB, s.accountId, parsed.data.key) : undefined;
  if (!key) return renderError(c, 404, "Key not found", "There is no such key in your account.");
  return render(c, <DeleteKeyPage meta={await pageMeta(c, `Delete key ${key.name}`)} csrf={await csrfToken(s.token)} apiKey={key} />);
});

keyRoutes.post("/settings/keys/delete", ...accountForm, async (c) => {
  const parsed = hashField.safeParse(await readForm(c));
  const key = parsed.success ? await deleteAccountKey(c.env.DB, account(c).accountId, parsed.data.key) : undefined;
  if (!key) return renderError(c, 404, "Key not found", "There is no such key in your account.");
  return c.redirect("/settings/keys?done=deleted", 303);
});
