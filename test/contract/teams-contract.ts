import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { ErrorObject } from "ajv";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

/**
 * OpenRouter's teams contract (`../shared/reference/openrouter-openapi-teams.yaml`: /presets, /guardrails,
 * …), as contract.ts reads the main one: a response is checked against the schema the file gives for its
 * path, method, status and media type (Ajv, draft 2020-12). Not vendored: a checkout without `../shared`
 * skips the suites that use it (`TEAMS_CONTRACT_PRESENT`). Node only (Ajv compiles with `new Function`).
 */
export const TEAMS_CONTRACT = fileURLToPath(new URL("../../../shared/reference/openrouter-openapi-teams.yaml", import.meta.url));
export const TEAMS_CONTRACT_PRESENT = existsSync(TEAMS_CONTRACT);

type Operation = { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> };
type Contract = { paths: Record<string, Record<string, Operation>> };

let loaded: { contract: Contract; ajv: Ajv2020 } | undefined;
function teams() {
  if (!loaded) {
    const contract = parse(readFileSync(TEAMS_CONTRACT, "utf8")) as Contract;
    // strict: false — OpenAPI keywords (`example`, `x-speakeasy-*`, …) are not JSON Schema.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(contract, "teams");
    loaded = { contract, ajv };
  }
  return loaded;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

function templateFor(contract: Contract, path: string): string | null {
  const bare = path.replace(/^\/api\/v1/, "").replace(/\?.*$/, "");
  for (const template of Object.keys(contract.paths)) if (new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(bare)) return template;
  return null;
}

/** The problems of one response against the teams contract (empty: it conforms); a status the file does not list for the operation is one. */
export function validateTeamsResponse(path: string, method: string, status: number, contentType: string | null, body: unknown): string[] {
  const { contract } = teams();
  const template = templateFor(contract, path);
  const op = template === null ? undefined : contract.paths[template]?.[method.toLowerCase()];
  const where = `${method.toUpperCase()} ${template ?? path} → ${status}`;
  const response = op?.responses?.[String(status)];
  if (!response)
    return [`${where}: not documented by the teams contract (documented: ${op ? Object.keys(op.responses ?? {}).join(", ") : "no such operation"})`];
  const media = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (!(media in (response.content ?? {}))) return [`${where}: content type "${contentType}" not documented`];
  return errorsOf(`teams#/${pointer("paths", template!, method.toLowerCase(), "responses", String(status), "content", media, "schema")}`, body, where);
}

/** The problems of a body against one of the file's component schemas (for the operations the file does not define: POST, PATCH, DELETE). */
export function validateTeamsSchema(schema: string, body: unknown): string[] {
  return errorsOf(`teams#/components/schemas/${schema}`, body, schema);
}

function errorsOf(ref: string, body: unknown, where: string): string[] {
  const { ajv } = teams();
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${where}: ${e.instancePath || "(body)"} ${e.message ?? "invalid"} [${e.schemaPath}]`);
}
