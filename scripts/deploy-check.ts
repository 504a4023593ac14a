// `npm run cloudflare:setup -- --check --url URL [--key KEY]`: calls a deployed service once per surface and
// says what works (docs/deploy.md). Reads only: it makes no completion, so it costs nothing.

export type CheckLine = { ok: boolean; what: string; detail: string };

/** GET a path with a time bound; a network failure is an answer too (status 0, its message). */
async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(url, { headers, redirect: "manual", signal: AbortSignal.timeout(15_000) });
    return { status: res.status, text: await res.text() };
  } catch (err) {
    return { status: 0, text: err instanceof Error ? err.message : String(err) };
  }
}

const problem = (r: { status: number; text: string }) =>
  r.status === 0 ? `unreachable: ${r.text}` : `HTTP ${r.status}: ${r.text.replace(/\s+/g, " ").slice(0, 160)}`;

/** The checks, in order: the API's model list, the console, an API key (when given), the admin API (when a token is given). */
export async function deployCheck(origin: string, opts: { key?: string; adminToken?: string }): Promise<CheckLine[]> {
  const base = origin.replace(/\/+$/, "");
  const lines: CheckLine[] = [];

  const models = await get(`${base}/api/v1/models`);
  const count = models.status === 200 ? ((JSON.parse(models.text) as { data?: unknown[] }).data?.length ?? 0) : 0;
  lines.push(
    models.status !== 200
      ? { ok: false, what: "API", detail: `GET /api/v1/models: ${problem(models)}` }
      : count === 0
        ? { ok: false, what: "API", detail: "GET /api/v1/models lists no model: no carrier has a key (CARRIER_KEY_*, then re-run the setup)" }
        : { ok: true, what: "API", detail: `GET /api/v1/models lists ${count} models` },
  );

  const home = await get(`${base}/`);
  const signUp = await get(`${base}/sign-up`);
  const policy = /Sign-up is closed/.test(signUp.text) ? "closed" : /by invitation only/.test(signUp.text) ? "invite-only" : "open";
  lines.push(
    home.status === 200 && signUp.status === 200
      ? { ok: true, what: "console", detail: `${base}/ answers; sign-up is ${policy} (SIGN_UP)` }
      : { ok: false, what: "console", detail: `GET /: ${home.status === 200 ? problem(signUp) : problem(home)}` },
  );

  if (opts.key) {
    const auth = { authorization: `Bearer ${opts.key}` };
    const key = await get(`${base}/api/v1/key`, auth);
    const data = key.status === 200 ? (JSON.parse(key.text) as { data: { name?: string; is_management_key?: boolean } }).data : null;
    const credits = data ? await get(`${base}/api/v1/credits`, auth) : null;
    const totals = credits?.status === 200 ? (JSON.parse(credits.text) as { data: { total_credits: number; total_usage: number } }).data : null;
    const balance = totals ? `; its account: $${totals.total_credits} of credits, $${totals.total_usage} used` : "";
    lines.push(
      data
        ? {
            ok: true,
            what: "key",
            detail: `GET /api/v1/key: the key works (${data.is_management_key ? "a management key" : `"${data.name ?? ""}"`})${balance}`,
          }
        : { ok: false, what: "key", detail: `GET /api/v1/key: ${problem(key)}` },
    );
  } else lines.push({ ok: true, what: "key", detail: "not checked: give --key sk-sy-v1-… (or SWITCHYARD_API_KEY) to check one" });

  if (opts.adminToken) {
    const admin = await get(`${base}/admin/accounts?limit=1`, { authorization: `Bearer ${opts.adminToken}` });
    lines.push(
      admin.status === 200
        ? { ok: true, what: "admin", detail: "GET /admin/accounts: the admin token works" }
        : { ok: false, what: "admin", detail: `GET /admin/accounts: ${problem(admin)}` },
    );
  }
  return lines;
}

export function printCheck(origin: string, lines: CheckLine[]): boolean {
  console.log(`Checking ${origin}`);
  for (const l of lines) console.log(`  ${l.ok ? "ok  " : "FAIL"}  ${l.what.padEnd(8)} ${l.detail}`);
  const ok = lines.every((l) => l.ok);
  console.log(ok ? "Everything checked works." : "Something does not work: see FAIL above (docs/deploy.md, After deploying).");
  return ok;
}
