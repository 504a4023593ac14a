// Imported first by scripts/start.ts: refuses to start, in one clear line, before anything is loaded or started.
import { readFileSync } from "node:fs";
import { nodeVersionProblem, npmConfigProblem } from "./start-checks.ts";

const engines = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { engines?: { node?: string } }).engines;
const problem = nodeVersionProblem(process.versions.node, engines?.node) ?? npmConfigProblem(process.env);
if (problem) {
  console.error(problem);
  process.exit(2);
}
