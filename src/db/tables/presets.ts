import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// Presets (docs/teams.md#presets): a saved set-up of an account, named by a slug, with immutable numbered versions.

/** A preset: its slug is unique in its account; `latest_version` is the version `@preset/<slug>` applies. */
export const presets = sqliteTable(
  "presets",
  {
    id: text("id").primaryKey(), // a UUID (the contract's preset id, and the generation record's preset_id)
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    latestVersion: integer("latest_version").notNull(), // raised by every save; versions are never changed
    createdAt: integer("created_at").notNull(), // Unix ms
    updatedAt: integer("updated_at").notNull(), // Unix ms of the last save
  },
  (t) => [uniqueIndex("presets_account_slug").on(t.accountId, t.slug), index("presets_account_updated").on(t.accountId, t.updatedAt)],
);

/** One saved version of a preset, never changed: what it applies (its config, JSON) and its system prompt. */
export const presetVersions = sqliteTable(
  "preset_versions",
  {
    id: text("id").primaryKey(), // a UUID
    presetId: text("preset_id")
      .notNull()
      .references(() => presets.id, { onDelete: "cascade" }),
    version: integer("version").notNull(), // 1, 2, … per preset
    config: text("config").notNull(), // JSON of the validated config (src/presets/preset-config.ts)
    systemPrompt: text("system_prompt"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("preset_versions_preset_version").on(t.presetId, t.version)],
);
