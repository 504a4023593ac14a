import { count, between, text, invalid, type Spec, type SignUpPolicy } from "./spec";

/** Who may reach the console and the admin API, and the secrets that seal what callers get back. */
export const ACCESS_SETTINGS = {
  ADMIN_TOKEN: text("secret", "guards `/admin`; unset = admin API closed"),
  SIGN_UP: {
    kind: "var",
    shown: "invite-only",
    expected: "open, invite-only or closed",
    doc: "who may create an account on the console's sign-up page: `open` (anyone), `invite-only` (only with an invitation link, `npm run admin -- invite`) or `closed` (nobody: the operator makes accounts, `create-account` then `sign-in-link`); `npm start` runs `open` (docs/deploy.md)",
    fallback: "invite-only",
    parse: (raw) => {
      const v = (raw ?? "").trim() || "invite-only";
      return v === "open" || v === "invite-only" || v === "closed" ? v : invalid;
    },
  } satisfies Spec<SignUpPolicy>,
  SIGN_IN_LINK_TTL_MINUTES: between(
    1,
    10_080,
    count(60, "a one-time sign-in link (`npm run admin -- sign-in-link`, printed by `cloudflare:setup` and `npm start`) works once, within this many minutes"),
  ),
  INVITE_TTL_HOURS: between(1, 2_160, count(168, "an invitation link (`npm run admin -- invite`) signs one person up, within this many hours")),
  REASONING_SEAL_KEY: {
    kind: "secret",
    expected: "at least 32 characters (32 random bytes as base64: `openssl rand -base64 32`)",
    doc: "seals `encrypted_content` on `/responses`: AES-256-GCM under a key derived from it (HKDF-SHA-256), bound to the account, so callers can neither read nor alter it (docs/api/responses.md); at least 32 characters. Unset = `/responses` refuses with 503 a request that asks for `reasoning.encrypted_content` or carries one of our envelopes (everything else works); `npm start` and the tests set a development key, `npm run cloudflare:setup` generates one. It also seals budget alert endpoints' and observability destinations' webhook signing secrets and header values (docs/teams.md, docs/observability.md); unset, those cannot be added (503)",
    fallback: undefined,
    parse: (raw) => (raw === undefined || raw === "" ? undefined : raw.length >= 32 ? raw : invalid),
  } satisfies Spec<string | undefined>,
  REASONING_SEAL_KEYS_PREVIOUS: {
    kind: "secret",
    expected: "earlier keys of at least 32 characters each, comma-separated",
    doc: "earlier `REASONING_SEAL_KEY`s, comma-separated: envelopes sealed under them are still opened, never sealed with (rotation: docs/deploy.md); unset = none",
    fallback: [],
    parse: (raw) => {
      const keys = (raw ?? "")
        .split(",")
        .map((k) => k.trim())
        .filter((k) => k !== "");
      return keys.every((k) => k.length >= 32) ? keys : invalid;
    },
  } satisfies Spec<string[]>,
};
