// Every D1 table (drizzle-kit reads this file: drizzle.config.ts), one file per concern in src/db/tables/.
import { accounts, apiKeys } from "./tables/accounts";
import { generations } from "./tables/records";
import { archiveParts } from "./tables/archive";
import { credentials, sessions } from "./tables/console-auth";
import { payments } from "./tables/payments";
import { guardrails, guardrailKeys } from "./tables/guardrails";
import { presets, presetVersions } from "./tables/presets";
export * from "./tables/accounts";
export * from "./tables/records";
export * from "./tables/archive";
export * from "./tables/health";
export * from "./tables/console-auth";
export * from "./tables/payments";
export * from "./tables/guardrails";
export * from "./tables/presets";

export type Account = typeof accounts.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type Generation = typeof generations.$inferSelect;
export type NewGeneration = typeof generations.$inferInsert;
export type ArchivePart = typeof archiveParts.$inferSelect;
export type Credential = typeof credentials.$inferSelect;
export type Session = typeof sessions.$inferSelect;
export type Payment = typeof payments.$inferSelect;
export type Guardrail = typeof guardrails.$inferSelect;
export type GuardrailKey = typeof guardrailKeys.$inferSelect;
export type Preset = typeof presets.$inferSelect;
export type PresetVersion = typeof presetVersions.$inferSelect;
