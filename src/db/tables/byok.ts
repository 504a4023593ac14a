import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Bring your own key (docs/byok.md): an account's own API key for a carrier, encrypted at rest.

/**
 * One carrier key of one account (at most one per carrier). The key itself is stored only as AES-GCM
 * ciphertext under the deployment's key of `key_version` (`BYOK_ENCRYPTION_KEYS`), with the account id
 * and carrier slug as additional authenticated data: a row copied to another account or carrier does not
 * decrypt. `last4` is all that is ever shown again.
 */
export const byokKeys = sqliteTable(
  "byok_keys",
  {
    id: text("id").primaryKey(), // a UUID, the contract's
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    provider: text("provider").notNull(), // the carrier's catalog slug
    name: text("name"),
    ciphertext: text("ciphertext").notNull(), // base64 of AES-GCM's output (the tag included)
    iv: text("iv").notNull(), // base64 of the 12-byte nonce, fresh for every encryption
    keyVersion: integer("key_version").notNull(), // which deployment key encrypted it
    last4: text("last4").notNull(),
    // "first": this key first, the platform's after it only when allow_fallback and this one is refused; "only": never the platform's.
    mode: text("mode", { enum: ["first", "only"] })
      .notNull()
      .default("first"),
    allowFallback: integer("allow_fallback", { mode: "boolean" }).notNull().default(false),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    lastError: text("last_error"), // the carrier's last refusal of this key (401/403/429), never the key
    lastErrorAt: integer("last_error_at"), // Unix ms
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at"), // Unix ms of the last change; null = never changed
  },
  (t) => [uniqueIndex("byok_keys_account_provider").on(t.accountId, t.provider), index("byok_keys_account").on(t.accountId, t.createdAt)],
);
