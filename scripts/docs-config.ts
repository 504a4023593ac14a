// `npm run docs:config`: writes the settings table of docs/configuration.md from src/settings.ts (its one source).
import { readFileSync, writeFileSync } from "node:fs";
import { settingsTable } from "../src/settings.ts";

const FILE = "docs/configuration.md";
const START = "<!-- settings:start -->";
const END = "<!-- settings:end -->";

export function withSettingsTable(doc: string): string {
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${FILE} has no ${START} … ${END} region`);
  return `${doc.slice(0, from + START.length)}\n${settingsTable()}\n${doc.slice(to)}`;
}

if (process.argv[1]?.endsWith("docs-config.ts")) writeFileSync(FILE, withSettingsTable(readFileSync(FILE, "utf8")));
