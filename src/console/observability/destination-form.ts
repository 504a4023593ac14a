import type * as z from "zod";
import type { ObservabilityDestination } from "../../db/schema";
import { headerHints } from "../../observability/destination-secrets";
import { config as collectorConfig, createDestinationBody, updateDestinationBody, webhookConfig } from "../../api/observability-input";
import type { CreateDestination, UpdateDestination } from "../../api/observability-changes";

/**
 * The destination form of /settings/observability: its fields read into the body `/observability/destinations`
 * takes, checked by the API's own schemas (src/api/observability-input.ts), the problems said per field. Headers
 * are lines `Name: value`; keys of the filter are checkboxes `key_<hash>` (none: every key).
 */

export type DestinationFormValues = {
  type: string;
  name: string;
  endpoint: string;
  encoding: string;
  method: string;
  headers: string;
  samplingRate: string;
  enabled: boolean;
  cost: boolean;
  identity: boolean;
  requestContext: boolean;
  keys: string[];
};
export type FormField = "type" | "name" | "endpoint" | "headers" | "samplingRate" | "keys";
export type DestinationForm = { values: DestinationFormValues; errors: Partial<Record<FormField, string>>; problem?: string };
type Issues = z.ZodError["issues"];

const KEY_FIELD = /^key_([0-9a-f]{64})$/;

const HEADERS_MESSAGE = "Each header is a line “Name: value”: a name of letters, digits and -, a value of at most 4096 characters; at most 20 headers.";
const MESSAGES: Record<FormField, (issue: Issues[number]) => string> = {
  type: () => "Choose a kind: an OpenTelemetry collector or a webhook.",
  name: () => "Enter a name of at most 100 characters.",
  endpoint: (i) => `The endpoint ${i.message}.`,
  headers: () => HEADERS_MESSAGE,
  samplingRate: () => "The sampling rate is a number from 0 to 1 (0.1: one request in ten).",
  keys: () => "Choose keys of this account.",
};

/** The submitted form's values (a checkbox is on when sent). */
export function valuesOfForm(form: Record<string, string>): DestinationFormValues {
  return {
    type: form.type ?? "",
    name: form.name ?? "",
    endpoint: form.endpoint ?? "",
    encoding: form.encoding ?? "protobuf",
    method: form.method ?? "POST",
    headers: form.headers ?? "",
    samplingRate: form.sampling_rate ?? "",
    enabled: form.enabled === "on",
    cost: form.broadcast_cost === "on",
    identity: form.broadcast_identity === "on",
    requestContext: form.broadcast_request_context === "on",
    keys: Object.keys(form).flatMap((k) => (form[k] === "on" ? (KEY_FIELD.exec(k)?.slice(1) ?? []) : [])),
  };
}

/** A stored destination as its edit form shows it: header values by their masks (sent back unchanged, they keep the stored ones). */
export function valuesOfDestination(d: ObservabilityDestination): DestinationFormValues {
  return {
    type: d.type,
    name: d.name,
    endpoint: d.endpoint,
    encoding: d.encoding,
    method: d.method,
    headers: Object.entries(headerHints(d))
      .map(([k, v]) => `${k}: ${v}`)
      .join("\n"),
    samplingRate: String(d.samplingRate),
    enabled: d.enabled,
    cost: d.broadcastCost,
    identity: d.broadcastIdentity,
    requestContext: d.broadcastRequestContext,
    keys: d.apiKeyHashes === null ? [] : (JSON.parse(d.apiKeyHashes) as string[]),
  };
}

/** Header lines as the API's `headers` object; a line without a colon is an error. */
function headersOf(text: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/).map((l) => l.trim())) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0) return null;
    out[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return out;
}

/** The fields both forms share, as the API names them. Empty sampling rate: the default (create) or unchanged (edit). */
function apiFields(v: DestinationFormValues) {
  return {
    name: v.name,
    enabled: v.enabled,
    ...(v.samplingRate.trim() === "" ? {} : { sampling_rate: Number(v.samplingRate) }),
    api_key_hashes: v.keys.length > 0 ? v.keys : null,
    broadcast_generation_cost: v.cost,
    broadcast_generation_identity: v.identity,
    broadcast_generation_request_context: v.requestContext,
  };
}

const configOf = (type: string, v: DestinationFormValues, headers: Record<string, string>) =>
  type === "webhook" ? { url: v.endpoint, method: v.method, headers } : { endpoint: v.endpoint, encoding: v.encoding, headers };

const TOP_FIELDS: Record<string, FormField> = { type: "type", name: "name", sampling_rate: "samplingRate", api_key_hashes: "keys" };

/** Where an issue of the API's schemas goes on the form; undefined: said above the form. */
function fieldOf(path: readonly PropertyKey[]): FormField | undefined {
  const [first, second] = path;
  if (first === "config") return second === "endpoint" || second === "url" ? "endpoint" : second === "headers" ? "headers" : undefined;
  return typeof first === "string" && Object.hasOwn(TOP_FIELDS, first) ? TOP_FIELDS[first] : undefined;
}

function formOf(values: DestinationFormValues, issues: Issues, badHeaders: boolean): DestinationForm {
  const errors: DestinationForm["errors"] = badHeaders ? { headers: HEADERS_MESSAGE } : {};
  let problem: string | undefined;
  for (const issue of issues) {
    const field = fieldOf(issue.path);
    if (field) errors[field] ??= MESSAGES[field](issue);
    else problem ??= `${issue.path.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`;
  }
  return { values, errors, problem };
}

/** The create form as the API's create body, or the form back with what is wrong. */
export function parseCreate(form: Record<string, string>): { ok: CreateDestination } | { refused: DestinationForm } {
  const values = valuesOfForm(form);
  const headers = headersOf(values.headers);
  const parsed = createDestinationBody.safeParse({ type: values.type, ...apiFields(values), config: configOf(values.type, values, headers ?? {}) });
  if (parsed.success && headers) return { ok: parsed.data };
  return { refused: formOf(values, parsed.success ? [] : parsed.error.issues, headers === null) };
}

/** The edit form of `found` as the API's change body (the config checked against its kind), or the form back with what is wrong. */
export function parseUpdate(form: Record<string, string>, found: ObservabilityDestination): { ok: UpdateDestination } | { refused: DestinationForm } {
  const values = { ...valuesOfForm(form), type: found.type };
  const headers = headersOf(values.headers);
  const config = configOf(found.type, values, headers ?? {});
  const parsed = updateDestinationBody.safeParse({ ...apiFields(values), config });
  const kind = (found.type === "webhook" ? webhookConfig : collectorConfig).safeParse(config);
  const issues = [
    ...(parsed.success ? [] : parsed.error.issues),
    ...(kind.success ? [] : kind.error.issues.map((i) => ({ ...i, path: ["config", ...i.path] }))),
  ];
  if (parsed.success && issues.length === 0 && headers) return { ok: parsed.data };
  return { refused: formOf(values, issues, headers === null) };
}
