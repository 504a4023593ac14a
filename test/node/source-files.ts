import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/** The repository's root. */
export const root = resolve(import.meta.dirname, "../..");

/** Every .ts and .tsx file below `dir`. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}
