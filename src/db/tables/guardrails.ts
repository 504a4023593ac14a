import { sqliteTable, text, integer, index, primaryKey, unique } from "drizzle-orm/sqlite-core";
import { accounts, apiKeys } from "./accounts";
import { members } from "./members";

// Guardrails on API keys (docs/teams.md): what a key may use, in OpenRouter's shape (`/guardrails`).

/**
 * A guardrail: rules on the models and carriers a key assigned to it may use. Lists are JSON arrays of
 * strings, null = no such rule. Each ZDR flag applies to the models of one author (the contract's
 * `enforce_zdr_<author>`); the price caps are nano-USD per token (a price per 1M tokens at 3 decimals).
 */
export const guardrails = sqliteTable(
  "guardrails",
  {
    id: text("id").primaryKey(), // a UUID, the contract's
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    description: text("description"),
    allowedModels: text("allowed_models", { mode: "json" }).$type<string[]>(),
    ignoredModels: text("ignored_models", { mode: "json" }).$type<string[]>(),
    allowedProviders: text("allowed_providers", { mode: "json" }).$type<string[]>(),
    ignoredProviders: text("ignored_providers", { mode: "json" }).$type<string[]>(),
    zdrAnthropic: integer("zdr_anthropic", { mode: "boolean" }).notNull().default(false),
    zdrOpenai: integer("zdr_openai", { mode: "boolean" }).notNull().default(false),
    zdrGoogle: integer("zdr_google", { mode: "boolean" }).notNull().default(false),
    zdrXai: integer("zdr_xai", { mode: "boolean" }).notNull().default(false),
    zdrOther: integer("zdr_other", { mode: "boolean" }).notNull().default(false),
    maxPromptNano: integer("max_prompt_nano"), // nano-USD per prompt token; null = no cap
    maxCompletionNano: integer("max_completion_nano"), // nano-USD per completion token; null = no cap
    createdAt: integer("created_at").notNull(), // Unix ms
    updatedAt: integer("updated_at"), // Unix ms of the last change; null = never changed
  },
  (t) => [index("guardrails_account").on(t.accountId, t.createdAt)],
);

/** A key carrying a guardrail: a key may carry several, and a request must satisfy all of them. */
export const guardrailKeys = sqliteTable(
  "guardrail_keys",
  {
    guardrailId: text("guardrail_id")
      .notNull()
      .references(() => guardrails.id, { onDelete: "cascade" }),
    keyHash: text("key_hash")
      .notNull()
      .references(() => apiKeys.hash, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    id: text("id").notNull().unique(), // the assignment's UUID, the contract's
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.guardrailId, t.keyHash] }),
    index("guardrail_keys_key").on(t.keyHash),
    index("guardrail_keys_account").on(t.accountId, t.createdAt),
  ],
);

/**
 * A member carrying a guardrail: every key of the member (`api_keys.member_id`) carries it, beside the key's own.
 * Deleted with its guardrail or its member.
 */
export const guardrailMembers = sqliteTable(
  "guardrail_members",
  {
    id: text("id").primaryKey(), // the assignment's UUID, the contract's
    accountId: text("account_id").notNull(),
    guardrailId: text("guardrail_id")
      .notNull()
      .references(() => guardrails.id, { onDelete: "cascade" }),
    memberId: text("member_id")
      .notNull()
      .references(() => members.id, { onDelete: "cascade" }),
    assignedBy: text("assigned_by"), // the assigning member's id; null = a key of the operator's (no member)
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    unique("guardrail_members_pair").on(t.guardrailId, t.memberId),
    index("guardrail_members_member").on(t.memberId),
    index("guardrail_members_account").on(t.accountId, t.createdAt),
  ],
);
