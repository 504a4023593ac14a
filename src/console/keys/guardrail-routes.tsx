import { allowed } from "../http/roles";
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { ConsoleEnv } from "../console-env";
import type { ApiKey } from "../../db/schema";
import { accountForm } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render, renderError } from "../layout/render";
import { csrfToken } from "../auth/csrf-token";
import { findApiKey } from "../../keys/key-store";
import { loadCatalog } from "../../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../../protocols/outbound";
import {
  assignKeys,
  countGuardrails,
  createGuardrail,
  findGuardrail,
  guardrailsOfKey,
  listGuardrails,
  unassignKeys,
  NO_RULES,
} from "../../keys/guardrail-store";
import { guardrailsOfMember } from "../../keys/guardrail-member-store";
import { createGuardrailBody, storedFields } from "../../api/guardrail-input";
import { invalidInput } from "../../request/json-body";
import { ApiError } from "../../request/errors";
import { EditKeyPage } from "./edit-page";
import { settingsValues } from "./key-settings-form";
import { KeyGuardrails, type GuardrailFormState } from "./guardrail-section";

/** A key's guardrails on its page (/settings/keys/edit): assign, unassign, create and assign; every query scoped to the signed-in account. */
export const keyGuardrailRoutes = new Hono<ConsoleEnv>();

const accountOf = (c: Context<ConsoleEnv>) => c.var.session!.accountId;
const fields = z.object({ key: z.string().regex(/^[0-9a-f]{64}$/), guardrail: z.uuid().optional() });
const notFound = (c: Context<ConsoleEnv>) => renderError(c, 404, "Not found", "There is no such key or guardrail in your account.");
const backTo = (c: Context<ConsoleEnv>, key: ApiKey) => c.redirect(`/settings/keys/edit?key=${key.hash}`, 303);

/** The guardrails section of a key's page: what it carries and the account's others (at most a page of them). */
export async function guardrailSection(c: Context<ConsoleEnv>, key: ApiKey, form?: GuardrailFormState) {
  if (!allowed(c.var.session!, "guardrails.write")) return null; // a member's own key: its guardrails are set by owners and admins
  const [carried, viaMember, all] = await Promise.all([
    guardrailsOfKey(c.env.DB, accountOf(c), key.hash),
    key.memberId === null ? [] : guardrailsOfMember(c.env.DB, accountOf(c), key.memberId),
    listGuardrails(c.env.DB, accountOf(c), { offset: 0, limit: 100 }),
  ]);
  const others = all.rows.filter((g) => !carried.some((x) => x.id === g.id));
  return <KeyGuardrails csrf={await csrfToken(c.var.session!.token)} apiKey={key} carried={carried} viaMember={viaMember} others={others} form={form} />;
}

/** The key and guardrail a form names, both the account's (the guardrail only when the form has one). */
async function named(c: Context<ConsoleEnv>, form: Record<string, string>) {
  const parsed = fields.safeParse(form);
  if (!parsed.success) return undefined;
  const key = await findApiKey(c.env.DB, accountOf(c), parsed.data.key);
  const guardrail = parsed.data.guardrail === undefined ? undefined : await findGuardrail(c.env.DB, accountOf(c), parsed.data.guardrail);
  return key && (parsed.data.guardrail === undefined || guardrail) ? { key, guardrail } : undefined;
}

for (const [action, change] of [
  ["assign", assignKeys],
  ["unassign", unassignKeys],
] as const)
  keyGuardrailRoutes.post(`/settings/keys/guardrails/${action}`, ...accountForm, async (c) => {
    const found = await named(c, await readForm(c));
    if (!found?.guardrail) return notFound(c);
    await change(c.env.DB, accountOf(c), found.guardrail.id, [found.key.hash]);
    return backTo(c, found.key);
  });

const list = (s: string | undefined) => {
  const items = (s ?? "")
    .split(/[,\s]+/)
    .map((x) => x.trim())
    .filter(Boolean);
  return items.length ? items : null;
};
const price = (s: string | undefined) => (s?.trim() ? Number(s.trim()) : null);

/** Creates a guardrail from the key page's form, validated as `POST /guardrails` validates, and assigns it to the key. */
keyGuardrailRoutes.post("/settings/keys/guardrails/create", ...accountForm, async (c) => {
  const form = await readForm(c);
  const found = await named(c, form);
  if (!found) return notFound(c);
  const body = {
    name: form.name ?? "",
    allowed_models: list(form.allowed_models),
    allowed_providers: list(form.allowed_providers),
    max_price: { prompt: price(form.max_prompt), completion: price(form.max_completion) },
    enforce_zdr: form.zdr === "on",
  };
  const refuse = async (problem: string) => {
    const key = found.key;
    const page = (
      <EditKeyPage meta={await pageMeta(c, `Edit key ${key.name}`)} csrf={await csrfToken(c.var.session!.token)} apiKey={key} values={settingsValues(key)}>
        {await guardrailSection(c, key, { values: form, problem })}
      </EditKeyPage>
    );
    return render(c, page, 400);
  };
  const parsed = createGuardrailBody.safeParse(body);
  if (!parsed.success) return refuse(invalidInput(parsed.error).message.replace("Invalid request: ", ""));
  const max = c.var.settings.GUARDRAILS_PER_ACCOUNT;
  if ((await countGuardrails(c.env.DB, accountOf(c))) >= max) return refuse(`An account can have at most ${max} guardrails; delete one to create another.`);
  let stored;
  try {
    stored = storedFields(
      parsed.data,
      await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p)),
      c.var.settings.GUARDRAIL_LIST_ITEMS,
    );
  } catch (err) {
    if (err instanceof ApiError) return refuse(err.message.replace("Invalid request: ", ""));
    throw err;
  }
  const g = await createGuardrail(c.env.DB, accountOf(c), {
    ...NO_RULES,
    ...stored,
    name: parsed.data.name,
  });
  await assignKeys(c.env.DB, accountOf(c), g.id, [found.key.hash]);
  return backTo(c, found.key);
});
