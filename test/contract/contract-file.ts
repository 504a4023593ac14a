import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The contract beside the repository (`../shared/reference/`): the one source, when this checkout has it. */
export const SHARED_CONTRACT = fileURLToPath(new URL("../../../shared/reference/openrouter-openapi.yaml", import.meta.url));
/** Its vendored byte copy, for clones without `../shared` (a test keeps the two identical). */
export const VENDORED_CONTRACT = fileURLToPath(new URL("./openrouter-openapi.yaml", import.meta.url));

/** The contract's path: the shared file when present, else the vendored copy. */
export function contractPath(): string {
  return existsSync(SHARED_CONTRACT) ? SHARED_CONTRACT : VENDORED_CONTRACT;
}

export function readContract(): string {
  return readFileSync(contractPath(), "utf8");
}
