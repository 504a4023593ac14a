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

/** The teams extract (guardrails, presets, members, `/models/user`) beside the repository, and its vendored byte copy. */
export const SHARED_TEAMS_CONTRACT = fileURLToPath(new URL("../../../shared/reference/openrouter-openapi-teams.yaml", import.meta.url));
export const VENDORED_TEAMS_CONTRACT = fileURLToPath(new URL("./openrouter-openapi-teams.yaml", import.meta.url));

export function readTeamsContract(): string {
  return readFileSync(existsSync(SHARED_TEAMS_CONTRACT) ? SHARED_TEAMS_CONTRACT : VENDORED_TEAMS_CONTRACT, "utf8");
}
