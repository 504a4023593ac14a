// `npm run catalog -- check [file]`: validates a catalog file (default catalog.json) as the service loads
// it and for what only a person gets wrong; every problem names the line to fix (docs/catalog.md).
import { readFileSync } from "node:fs";
import { checkCatalog } from "./catalog-check.ts";

const USAGE = `Usage: npm run catalog -- check [file]

  check [file]   validate a catalog file (default: catalog.json); exit 1 listing each problem as file:line
  help           this text

docs/catalog.md explains the fields and walks through adding a carrier and a model.`;

const [command, file = "catalog.json", ...rest] = process.argv.slice(2);
if (command === undefined || command === "help" || command === "--help" || command === "-h") {
  console.log(USAGE);
  process.exit(command === undefined ? 1 : 0);
}
if (command !== "check" || rest.length) {
  console.error(`Unknown command or argument: ${[command, ...(command === "check" ? rest : [])].join(" ")}\n\n${USAGE}`);
  process.exit(2);
}
let text: string;
try {
  text = readFileSync(file, "utf8");
} catch (err) {
  console.error(`${file}: cannot be read (${err instanceof Error ? err.message : String(err)})`);
  process.exit(2);
}
const problems = checkCatalog(text);
for (const p of problems) console.error(`${file}:${p.line}: ${p.path ? `${p.path}: ` : ""}${p.message}`);
if (problems.length) {
  console.error(`${problems.length} problem${problems.length > 1 ? "s" : ""} in ${file}`);
  process.exit(1);
}
const cat = JSON.parse(text) as { providers: unknown[]; models: Array<{ endpoints: unknown[] }> };
console.log(`${file}: ok (${cat.providers.length} carriers, ${cat.models.length} models, ${cat.models.reduce((n, m) => n + m.endpoints.length, 0)} endpoints)`);
