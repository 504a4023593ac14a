import { Hono, type Context } from "hono";
import * as z from "zod";
import type { ConsoleEnv, SignedIn } from "../console-env";
import { accountForm, accountPage } from "../http/stacks";
import { readForm } from "../http/form";
import { pageMeta, render, renderError } from "../layout/render";
import { csrfToken } from "../auth/csrf-token";
import { loadCatalog } from "../../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../../protocols/outbound";
import { forgetAccountKeys } from "../../keys/key-cache";
import { createByok, deleteByok, findByokOfProvider, listByok, updateByok } from "../../byok/byok-store";
import { ByokPage, type ByokForm } from "./page";

/**
 * /settings/byok: the signed-in account's own carrier keys (docs/byok.md) — add or replace a key per carrier,
 * remove one; every query scoped to the session's account, every form carrying its CSRF token and validated
 * here as `/byok` validates its body. One sub-app, mounted with one line (role checks go at the mount).
 */
export const byokConsoleRoutes = new Hono<ConsoleEnv>();

const NOTICES = { saved: "Key saved. Only its last four characters are shown from now on.", removed: "Key removed." } as const;
const account = (c: Context<ConsoleEnv>): SignedIn => c.var.session!;
const noticeOf = (c: Context<ConsoleEnv>) => {
  const done = c.req.query("done");
  return done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined;
};

const keyForm = z.object({
  provider: z.string().min(1, "Choose a carrier."),
  key: z
    .string()
    .min(1, "Enter the carrier's API key.")
    .refine((k) => /^[\x21-\x7e]+$/.test(k), "A key is printable characters without spaces."),
  mode: z.enum(["first", "only"], { error: "Choose First or Only." }),
  allow_fallback: z.literal("on").optional(),
});

async function carriers(c: Context<ConsoleEnv>) {
  const catalog = await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p));
  return catalog.providers.map((p) => ({ slug: p.slug, name: p.name }));
}

async function page(c: Context<ConsoleEnv>, status: 200 | 400, extra: { form?: ByokForm; notice?: string }) {
  const s = account(c);
  const { rows } = await listByok(c.env.DB, s.accountId, { offset: 0, limit: 1000 });
  const enabled = c.var.settings.BYOK_ENCRYPTION_KEYS.length > 0;
  return render(
    c,
    <ByokPage meta={await pageMeta(c, "Carrier keys")} csrf={await csrfToken(s.token)} keys={rows} carriers={await carriers(c)} enabled={enabled} {...extra} />,
    status,
  );
}

byokConsoleRoutes.get("/settings/byok", ...accountPage, (c) => page(c, 200, { notice: noticeOf(c) }));

byokConsoleRoutes.post("/settings/byok", ...accountForm, async (c) => {
  const form = await readForm(c);
  const values = { provider: form.provider, mode: form.mode, allow_fallback: form.allow_fallback };
  const parsed = keyForm.safeParse(form);
  if (!parsed.success) {
    const errors: ByokForm["errors"] = {};
    for (const issue of parsed.error.issues) {
      const field = issue.path[0];
      if ((field === "provider" || field === "key" || field === "mode") && !errors[field]) errors[field] = issue.message;
    }
    return page(c, 400, { form: { values, errors, problem: Object.keys(errors).length ? undefined : "Check the form." } });
  }
  const { provider, key, mode, allow_fallback } = parsed.data;
  const ring = c.var.settings.BYOK_ENCRYPTION_KEYS;
  const s = account(c);
  if (!(await carriers(c)).some((x) => x.slug === provider)) return page(c, 400, { form: { values, errors: { provider: "Choose a carrier of the list." } } });
  if (key.length > c.var.settings.BYOK_KEY_CHARS)
    return page(c, 400, { form: { values, errors: { key: `A key is at most ${c.var.settings.BYOK_KEY_CHARS} characters.` } } });
  if (ring.length === 0) return page(c, 400, { form: { values, errors: {}, problem: "Carrier keys are not enabled on this deployment." } });
  const options = { mode, allowFallback: allow_fallback === "on" };
  const existing = await findByokOfProvider(c.env.DB, s.accountId, provider);
  const saved = existing
    ? await updateByok(c.env.DB, ring, s.accountId, existing.id, { ...options, key })
    : await createByok(c.env.DB, ring, s.accountId, provider, key, options);
  if (!saved || saved === "exists") return page(c, 400, { form: { values, errors: {}, problem: "The key changed meanwhile: try again." } });
  forgetAccountKeys(s.accountId);
  return c.redirect("/settings/byok?done=saved", 303);
});

byokConsoleRoutes.post("/settings/byok/:id/delete", ...accountForm, async (c) => {
  const s = account(c);
  const id = z.uuid().safeParse(c.req.param("id"));
  if (!id.success || !(await deleteByok(c.env.DB, s.accountId, id.data.toLowerCase())))
    return renderError(c, 404, "Key not found", "There is no such carrier key in your account.");
  forgetAccountKeys(s.accountId);
  return c.redirect("/settings/byok?done=removed", 303);
});
