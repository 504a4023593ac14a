import { between, count, decimal, invalid, type Spec } from "./spec";

/** A percentage: at most 100. */
function atMost100(spec: Spec<number>): Spec<number> {
  return {
    ...spec,
    expected: "a decimal number from 0 to 100 with at most 3 decimals",
    parse: (raw) => {
      const n = spec.parse(raw);
      return n === invalid || n > 100 ? invalid : n;
    },
  };
}

/** Versioned deployment keys: `<version>:<secret of at least 32 characters>`, comma-separated. */
export type ByokKeyring = ReadonlyArray<{ version: number; secret: string }>;

/** Bring your own key (docs/byok.md): the keys that encrypt accounts' carrier keys, and the fee on BYOK requests. */
export const BYOK_SETTINGS = {
  BYOK_ENCRYPTION_KEYS: {
    kind: "secret",
    expected: "comma-separated `<version>:<secret>` pairs, versions whole numbers ≥ 1 and distinct, secrets at least 32 characters (`openssl rand -base64 32`)",
    doc: "encrypts the carrier keys accounts bring (AES-256-GCM under a key derived from the secret by HKDF-SHA-256, the account and carrier as associated data): `1:<secret>`, and to rotate `1:<old>,2:<new>` — the highest version encrypts, every listed version decrypts, `npm run admin -- byok-reencrypt` moves rows to the newest (docs/byok.md). Unset = accounts cannot store keys (`/byok` and the console answer 503) and stored keys are not used",
    fallback: [],
    parse: (raw) => {
      if (raw === undefined || raw.trim() === "") return [];
      const ring: { version: number; secret: string }[] = [];
      for (const part of raw.split(",")) {
        const m = /^\s*(\d{1,6}):(.+?)\s*$/.exec(part);
        if (!m || m[2]!.length < 32) return invalid;
        const version = Number(m[1]);
        if (version < 1 || ring.some((k) => k.version === version)) return invalid;
        ring.push({ version, secret: m[2]! });
      }
      return ring.sort((a, b) => b.version - a.version);
    },
  } satisfies Spec<ByokKeyring>,
  BYOK_FEE_PERCENT: atMost100(
    decimal(
      5,
      "percent of what the carrier charged (at the catalog's prices) that a request served with the account's own carrier key is billed, rounded up to the nano-USD (docs/byok.md); at most 100",
    ),
  ),
  BYOK_FREE_REQUESTS_PER_MONTH: {
    kind: "var",
    shown: "1000000",
    expected: "a whole number ≥ 0",
    doc: "requests per account and UTC month served with the account's own carrier keys whose fee is waived (OpenRouter's first million); the account's ledger counts them as they settle, so the debit and the record say 0 while the answer's `usage.cost` shows the fee before the waiver (docs/byok.md); 0 = the fee from the first request",
    fallback: 1_000_000,
    parse: (raw) => (raw === undefined || raw.trim() === "" ? 1_000_000 : /^\d{1,12}$/.test(raw.trim()) ? Number(raw.trim()) : invalid),
  } satisfies Spec<number>,
  BYOK_KEY_CHARS: between(16, 65_536, count(4096, "the longest carrier key an account may store, in characters; 400 beyond")),
};
