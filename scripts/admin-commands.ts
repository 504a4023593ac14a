// What each `npm run admin` command sends to /admin: parsed flags → one request, or a usage error.

export const USAGE = `usage: npm run admin -- <command> [--url URL] [--token TOKEN]
  create-account --email E [--credits USD]          (USD ≥ 0; 0 = an empty balance)
  create-key --account <email|id> [--label L] [--limit USD]
  create-key --account <email|id> --management [--label L]   (a management key: manages keys through /api/v1/keys, runs no completions)
  disable-key --hash H
  enable-key --hash H
  set-key-limit --hash H --limit USD|none          (none removes the limit)
  grant-credits --account <email|id> --usd N [--idempotency-key K]   (the same K grants once)
  show-account --account <email|id>
  sign-in-link --account <email|id>                  (a one-time console sign-in link, shown once: an account made here has no password)
  invite                                              (a one-time sign-up link, shown once, while SIGN_UP is invite-only)
  audit-account --account <email|id>
  list-accounts [--offset N] [--page-size N]           (oldest first; N ≤ 500, default 100; next_offset pages on)
  list-keys --account <email|id> [--offset N] [--page-size N]
  storage                                             (the service's D1 size beside its limit, rows, oldest record; the R2 archive; dead record batches)
  move-records                                        (moves records an earlier release kept in D1 to R2; repeat until "done": true)
  byok-reencrypt                                      (re-encrypts stored BYOK carrier keys under the newest BYOK_ENCRYPTION_KEYS version; repeat until "done": true)
  resend-records --account <email|id>                 (sends the account's record batches waiting for the store again now: dead letters replayed)
  list-records --account <email|id> [--page-size N]    (the account's newest stored records, N ≤ 500, default 50)
  help [command]                                      (also --help)
The token comes from --token, else $SWITCHYARD_ADMIN_TOKEN, else (for a local URL only) the development token.`;

type StringFlag = "email" | "credits" | "account" | "label" | "limit" | "hash" | "usd" | "idempotency-key" | "offset" | "page-size";
export type Flags = Partial<Record<StringFlag, string>> & { management?: boolean };
export type AdminRequest = { method: "GET" | "POST"; path: string; body?: unknown };

export class UsageError extends Error {}

const need = (flags: Flags, name: StringFlag): string => flags[name] ?? fail(`--${name} is required`);
function fail(message: string): never {
  throw new UsageError(message);
}

/** A USD amount flag: positive, or also zero when `zero` allows it. */
function usd(flags: Flags, name: StringFlag, opts: { zero?: boolean } = {}): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const n = raw.trim() === "" ? NaN : Number(raw);
  if (Number.isFinite(n) && (n > 0 || (opts.zero && n === 0))) return n;
  return fail(`--${name} must be a ${opts.zero ? "non-negative" : "positive"} number of USD`);
}

const ref = (s: string) => encodeURIComponent(s);

const commands: Record<string, (f: Flags) => AdminRequest> = {
  "create-account": (f) => ({ method: "POST", path: "/accounts", body: { email: need(f, "email"), credits: usd(f, "credits", { zero: true }) } }),
  "create-key": (f) => {
    if (f.management && f.limit !== undefined) fail("--management keys take no --limit: they run no completions");
    return {
      method: "POST",
      path: "/keys",
      body: { account: need(f, "account"), label: f.label, limit: usd(f, "limit"), management: f.management || undefined },
    };
  },
  "disable-key": (f) => ({ method: "POST", path: `/keys/${ref(need(f, "hash"))}/disable` }),
  "enable-key": (f) => ({ method: "POST", path: `/keys/${ref(need(f, "hash"))}/enable` }),
  "set-key-limit": (f) => {
    const hash = need(f, "hash");
    const limit = need(f, "limit") === "none" ? null : usd(f, "limit");
    return { method: "POST", path: `/keys/${ref(hash)}/limit`, body: { limit } };
  },
  "grant-credits": (f) => ({
    method: "POST",
    path: `/accounts/${ref(need(f, "account"))}/credits`,
    body: { usd: usd(f, "usd") ?? fail("--usd is required"), idempotency_key: f["idempotency-key"] },
  }),
  "sign-in-link": (f) => ({ method: "POST", path: `/accounts/${ref(need(f, "account"))}/sign-in-link` }),
  invite: () => ({ method: "POST", path: "/invitations" }),
  "show-account": (f) => ({ method: "GET", path: `/accounts/${ref(need(f, "account"))}` }),
  "audit-account": (f) => ({ method: "GET", path: `/accounts/${ref(need(f, "account"))}/audit` }),
  "list-accounts": (f) => ({ method: "GET", path: `/accounts${paging(f)}` }),
  "list-keys": (f) => ({ method: "GET", path: `/accounts/${ref(need(f, "account"))}/keys${paging(f)}` }),
  storage: () => ({ method: "GET", path: "/storage" }),
  "move-records": () => ({ method: "POST", path: "/records/move-from-d1" }),
  "byok-reencrypt": () => ({ method: "POST", path: "/byok/reencrypt" }),
  "resend-records": (f) => ({ method: "POST", path: `/accounts/${ref(need(f, "account"))}/records/resend` }),
  "list-records": (f) => {
    const n = whole(f, "page-size", 1, 500);
    return { method: "GET", path: `/accounts/${ref(need(f, "account"))}/records${n === undefined ? "" : `?limit=${n}`}` };
  },
};

/** Whole-number flags, checked here so a typo is a usage error, not a server's 400. */
function whole(flags: Flags, name: StringFlag, min: number, max: number): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isInteger(n) && n >= min && n <= max && raw.trim() !== "" ? n : fail(`--${name} must be a whole number from ${min} to ${max}`);
}

function paging(flags: Flags): string {
  const q = new URLSearchParams();
  const offset = whole(flags, "offset", 0, Number.MAX_SAFE_INTEGER);
  const size = whole(flags, "page-size", 1, 500);
  if (offset !== undefined) q.set("offset", String(offset));
  if (size !== undefined) q.set("limit", String(size));
  return q.size ? `?${q}` : "";
}

/** The usage of one command (its lines of USAGE), or the whole text; null for an unknown command. */
export function usageOf(command?: string): string | null {
  if (command === undefined) return USAGE;
  if (!(command in commands) && command !== "help") return null;
  const lines = USAGE.split("\n").filter((l) => l.trimStart().startsWith(`${command} `) || l.trim() === command);
  return `usage: npm run admin -- ${lines.map((l) => l.trim()).join("\n       npm run admin -- ")} [--url URL] [--token TOKEN]`;
}

/** The request for a command; throws UsageError for an unknown command or a bad flag. */
export function adminRequest(command: string | undefined, flags: Flags): AdminRequest {
  const build = commands[command ?? ""];
  if (!build) fail(command ? `unknown command ${command}` : "no command given");
  return build(flags);
}
