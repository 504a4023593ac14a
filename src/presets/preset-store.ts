import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import { db } from "../db/client";
import { presets, presetVersions, type Preset, type PresetVersion } from "../db/schema";
import type { PresetConfig, PresetContent } from "./preset-config";
import { forgetPreset } from "./preset-cache";

/**
 * Presets in D1, every read and write scoped to the account (a slug names a preset only in its own
 * account: another account's is "not found"). Versions are inserted, never changed; each save raises
 * the preset's `latest_version` and inserts that version in one batch (one transaction), so two saves at
 * once get two numbers.
 */

/** A preset with one of its versions (the latest, or the one asked for). */
export type PresetWithVersion = { preset: Preset; version: PresetVersion };

/** The version's content as it applies: its config parsed back (it was validated when saved). */
export function contentOf(v: PresetVersion): PresetContent {
  return { config: JSON.parse(v.config) as PresetConfig, systemPrompt: v.systemPrompt };
}

/**
 * The account's preset of this slug with its version `version` (null: the latest), in one query:
 * `undefined` when the account has no such preset, `{ preset }` alone when it has no such version.
 */
export async function findPresetVersion(
  d1: D1Database,
  accountId: string,
  slug: string,
  version: number | null,
): Promise<PresetWithVersion | { preset: Preset; version: null } | undefined> {
  const row = await db(d1)
    .select({ preset: presets, version: presetVersions })
    .from(presets)
    .leftJoin(
      presetVersions,
      and(eq(presetVersions.presetId, presets.id), eq(presetVersions.version, version === null ? presets.latestVersion : sql`${version}`)),
    )
    .where(and(eq(presets.accountId, accountId), eq(presets.slug, slug)))
    .get();
  return row;
}

/** The account's presets, most recently saved first, and how many it has. */
export async function listPresets(d1: D1Database, accountId: string, offset: number, limit: number): Promise<{ rows: PresetWithVersion[]; total: number }> {
  const q = db(d1);
  // Not a batch: a batch's rows come back as objects by column name, and both tables have an `id`.
  const [rows, [total]] = await Promise.all([
    q
      .select({ preset: presets, version: presetVersions })
      .from(presets)
      .innerJoin(presetVersions, and(eq(presetVersions.presetId, presets.id), eq(presetVersions.version, presets.latestVersion)))
      .where(eq(presets.accountId, accountId))
      .orderBy(desc(presets.updatedAt), asc(presets.slug))
      .limit(limit)
      .offset(offset),
    q.select({ n: count() }).from(presets).where(eq(presets.accountId, accountId)),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/** How many presets the account has. */
export async function countPresets(d1: D1Database, accountId: string): Promise<number> {
  const [row] = await db(d1).select({ n: count() }).from(presets).where(eq(presets.accountId, accountId));
  return row?.n ?? 0;
}

/** A preset's versions, oldest first, and how many it has. */
export async function listVersions(d1: D1Database, presetId: string, offset: number, limit: number): Promise<{ rows: PresetVersion[]; total: number }> {
  const q = db(d1);
  const [rows, [total]] = await q.batch([
    q.select().from(presetVersions).where(eq(presetVersions.presetId, presetId)).orderBy(asc(presetVersions.version)).limit(limit).offset(offset),
    q.select({ n: count() }).from(presetVersions).where(eq(presetVersions.presetId, presetId)),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/** What a save says of the preset itself (its name and description; undefined: unchanged). */
export type PresetFields = { name?: string; description?: string | null };

/** Creates the account's preset with version 1; undefined when the account has a preset of this slug already. */
export async function createPreset(
  d1: D1Database,
  accountId: string,
  slug: string,
  fields: { name: string; description: string | null },
  content: PresetContent,
): Promise<PresetWithVersion | undefined> {
  const now = Date.now();
  const preset: Preset = { id: crypto.randomUUID(), accountId, slug, ...fields, latestVersion: 1, createdAt: now, updatedAt: now };
  const version = versionRow(preset.id, 1, content, now);
  const q = db(d1);
  try {
    await q.batch([q.insert(presets).values(preset), q.insert(presetVersions).values(version)]);
  } catch (err) {
    if (uniqueViolation(err)) return undefined;
    throw err;
  }
  forgetPreset(accountId, slug);
  return { preset, version };
}

/**
 * Saves a new version of the account's preset (the next number), with its name and description changed
 * as given; undefined when the account has no such preset.
 */
export async function savePresetVersion(
  d1: D1Database,
  accountId: string,
  slug: string,
  fields: PresetFields,
  content: PresetContent,
): Promise<PresetWithVersion | undefined> {
  const now = Date.now();
  const id = crypto.randomUUID();
  const q = db(d1);
  const mine = and(eq(presets.accountId, accountId), eq(presets.slug, slug));
  const [updated] = await q.batch([
    q
      .update(presets)
      .set({ latestVersion: sql`${presets.latestVersion} + 1`, updatedAt: now, ...defined(fields) })
      .where(mine)
      .returning(),
    q.insert(presetVersions).select(
      q
        .select({
          id: sql`${id}`.as("id"),
          presetId: presets.id,
          version: presets.latestVersion,
          config: sql`${JSON.stringify(content.config)}`.as("config"),
          systemPrompt: sql`${content.systemPrompt}`.as("system_prompt"),
          createdAt: sql`${now}`.as("created_at"),
        })
        .from(presets)
        .where(mine),
    ),
  ]);
  forgetPreset(accountId, slug);
  const preset = updated[0];
  if (!preset) return undefined;
  return { preset, version: versionRow(preset.id, preset.latestVersion, content, now, id) };
}

/** Deletes the account's preset and its versions; false when it has no such preset. */
export async function deletePreset(d1: D1Database, accountId: string, slug: string): Promise<boolean> {
  const q = db(d1);
  const own = q
    .select({ id: presets.id })
    .from(presets)
    .where(and(eq(presets.accountId, accountId), eq(presets.slug, slug)));
  const [, deleted] = await q.batch([
    q.delete(presetVersions).where(sql`${presetVersions.presetId} IN ${own}`),
    q
      .delete(presets)
      .where(and(eq(presets.accountId, accountId), eq(presets.slug, slug)))
      .returning({ id: presets.id }),
  ]);
  forgetPreset(accountId, slug);
  return deleted.length > 0;
}

function versionRow(presetId: string, version: number, content: PresetContent, now: number, id: string = crypto.randomUUID()): PresetVersion {
  return { id, presetId, version, config: JSON.stringify(content.config), systemPrompt: content.systemPrompt, createdAt: now };
}

function defined(fields: PresetFields): PresetFields {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

function uniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (/UNIQUE constraint failed/i.test(e.message)) return true;
  return false;
}
