import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { ErrorObject } from "ajv";
import { parse } from "yaml";
import { readContract, readTeamsContract } from "./contract-file.ts";

/**
 * Validates responses against the OpenRouter contract's own schemas, read from the YAML at test time:
 * the whole document is added to Ajv (draft 2020-12, which reads OpenAPI 3.1's `type: [x, "null"]`)
 * and each response is checked against the schema the contract gives for its path, method, status and
 * media type. Node only: Ajv compiles validators with `new Function`, which workerd forbids.
 */

type MediaType = { schema?: unknown };
type Operation = { responses?: Record<string, { content?: Record<string, MediaType> }> };
type Contract = { paths: Record<string, Record<string, Operation>> };

const contract = parse(readContract()) as Contract;
/** The teams extract (guardrails, `/models/user`, …): validated the same way, under its own id. */
const teams = parse(readTeamsContract()) as Contract;
// strict: false — OpenAPI keywords (`example`, `discriminator`, `x-speakeasy-*`, …) are not JSON Schema.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(contract, "contract");
ajv.addSchema(teams, "teams");
const DOCS = { contract, teams } as const;
type DocId = keyof typeof DOCS;

/**
 * Statuses our specification requires where the contract lists none. Their bodies must still be the
 * contract's error shape: the 404 of a route the API does not have (spec §7: "route not found"), which
 * the contract cannot list since it describes only the routes that exist; the 403 a key that is not a
 * management key gets on every /keys operation (issue 10: "any other key gets 403"), which the contract
 * lists only for POST /keys.
 */
const SPEC_REQUIRED: { path: string | null; status: string; schema: string }[] = [
  { path: null, status: "404", schema: "#/components/schemas/NotFoundResponse" },
  { path: "/keys", status: "403", schema: "#/components/schemas/ForbiddenResponse" },
  { path: "/keys/{hash}", status: "403", schema: "#/components/schemas/ForbiddenResponse" },
];

/**
 * The same for the teams extract: the 403 a key that is not a management key gets on every guardrail
 * route (listed only for POST /guardrails), and the 501 of the member assignment routes, which answer the
 * contract's error shape until members exist (docs/teams.md).
 */
const MEMBER_PATHS = ["/guardrails/{id}/assignments/members", "/guardrails/{id}/assignments/members/remove", "/guardrails/assignments/members"];
const TEAMS_REQUIRED: { path: string | null; status: string; schema: string }[] = [
  { path: null, status: "404", schema: "#/components/schemas/NotFoundResponse" },
  ...[
    "/guardrails",
    "/guardrails/{id}",
    "/guardrails/{id}/assignments/keys",
    "/guardrails/{id}/assignments/keys/remove",
    "/guardrails/assignments/keys",
    ...MEMBER_PATHS,
  ].map((path) => ({ path, status: "403", schema: "#/components/schemas/ForbiddenResponse" })),
  ...MEMBER_PATHS.map((path) => ({ path, status: "501", schema: "#/components/schemas/InternalServerResponse" })),
];
const REQUIRED: Record<DocId, typeof SPEC_REQUIRED> = { contract: SPEC_REQUIRED, teams: TEAMS_REQUIRED };

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** The contract's path template for a request path (`/models/a/b/endpoints` → `/models/{author}/{slug}/endpoints`), if any. */
export function contractPathFor(path: string, doc: DocId = "contract"): string | null {
  const bare = path.replace(/^\/api\/v1/, "").replace(/\?.*$/, "");
  // Literal templates first: `/guardrails/assignments/keys` is not `/guardrails/{id}/…`.
  const templates = Object.keys(DOCS[doc].paths).sort((a, b) => Number(a.includes("{")) - Number(b.includes("{")));
  for (const template of templates) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (re.test(bare)) return template;
  }
  return null;
}

/** Statuses the contract documents for a path and method. */
export function documentedStatuses(path: string, method: string): string[] {
  const template = contractPathFor(path);
  const op = template === null ? undefined : contract.paths[template]?.[method.toLowerCase()];
  return Object.keys(op?.responses ?? {});
}

/**
 * Checks one response body; returns the problems in readable form (empty = conforms). `path` is the
 * request path (with or without `/api/v1` and a query); `contentType` the response header (parameters
 * ignored). For `text/event-stream` pass one event as the contract describes it: `{ data: <chunk JSON> }`.
 */
export function validateResponse(path: string, method: string, status: number, contentType: string | null, body: unknown, doc: DocId = "contract"): string[] {
  const template = contractPathFor(path, doc);
  const op = template === null ? undefined : DOCS[doc].paths[template]?.[method.toLowerCase()];
  const where = `${method.toUpperCase()} ${template ?? path} → ${status}`;
  const response = op?.responses?.[String(status)];
  if (!response) {
    const required = REQUIRED[doc].find((r) => r.status === String(status) && r.path === (op ? template : null));
    if (!required) {
      const listed = op ? Object.keys(op.responses ?? {}).join(", ") : "none: the contract has no such operation";
      return [`${where}: status not documented by the contract (documented: ${listed})`];
    }
    return errorsOf(`${doc}${required.schema}`, body, where);
  }
  const media = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  const content = response.content ?? {};
  if (!(media in content)) return [`${where}: content type "${contentType}" not documented (documented: ${Object.keys(content).join(", ") || "no body"})`];
  return errorsOf(`${doc}#/${pointer("paths", template!, method.toLowerCase(), "responses", String(status), "content", media, "schema")}`, body, where);
}

/** The problems of a body against one of a document's component schemas (the teams extract's presets: their POST, PATCH and DELETE are not operations of it). */
export function validateSchema(schema: string, body: unknown, doc: DocId = "contract"): string[] {
  return errorsOf(`${doc}#/components/schemas/${schema}`, body, schema);
}

function errorsOf(ref: string, body: unknown, where: string): string[] {
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${where}: ${describe(e)}`);
}

function describe(e: ErrorObject): string {
  const params = Object.entries(e.params as Record<string, unknown>)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(" ");
  return `${e.instancePath || "(body)"} ${e.message ?? "invalid"}${params ? ` (${params})` : ""} [${e.schemaPath}]`;
}
