// The `/__sim/*` routes that let tests shape carriers at runtime: latency profiles and outages.
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorJson, isRecord, readBody, sendJson, type Json } from "./http";
import { DEFAULT_OUTAGE_STATUS, validOutageStatus, type Outages } from "./outages";
import type { ProfileOverride, Profiles } from "./profiles";

// Long enough for any "slow carrier" test, short enough that a typo cannot wedge a run.
const MAX_FIRST_BYTE_MS = 600_000;

function badRequest(res: ServerResponse, message: string): void {
  sendJson(res, 400, errorJson(400, message, "invalid_request_error"));
}

/** The JSON object body, or undefined once a 400 has been sent. */
async function readObject(req: IncomingMessage, res: ServerResponse): Promise<Json | undefined> {
  const raw = await readBody(req);
  if (typeof raw === "string") {
    if (raw === "too_large") sendJson(res, 413, errorJson(413, "request body too large", "invalid_request_error"));
    return undefined;
  }
  let body: unknown;
  try {
    body = raw.text.trim() === "" ? {} : JSON.parse(raw.text);
  } catch {
    body = undefined;
  }
  if (!isRecord(body)) {
    badRequest(res, "the body must be a JSON object");
    return undefined;
  }
  return body;
}

function carrierOf(body: Json): string | undefined {
  return typeof body.carrier === "string" && body.carrier.length > 0 ? body.carrier : undefined;
}

/** `GET /__sim/profiles[?carrier=a&carrier=b]`. */
export function listProfiles(url: URL, res: ServerResponse, profiles: Profiles): void {
  const asked = url.searchParams.getAll("carrier").filter((c) => c.length > 0);
  const list = profiles.list(asked.length > 0 ? asked : undefined);
  sendJson(res, 200, JSON.stringify({ mode: profiles.mode, profiles: list }));
}

/** `POST /__sim/profile {"carrier","first_byte_ms"?,"tps"?}` or `{"carrier","reset":true}`. */
export async function setProfile(req: IncomingMessage, res: ServerResponse, profiles: Profiles): Promise<void> {
  const body = await readObject(req, res);
  if (body === undefined) return;
  const carrier = carrierOf(body);
  if (carrier === undefined) return badRequest(res, "`carrier` must be a non-empty string");
  if (body.reset === true) {
    profiles.reset(carrier);
  } else {
    const override: ProfileOverride = {};
    if (body.first_byte_ms !== undefined) {
      const ms = body.first_byte_ms;
      if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms > MAX_FIRST_BYTE_MS) {
        return badRequest(res, `\`first_byte_ms\` must be a number from 0 to ${MAX_FIRST_BYTE_MS}`);
      }
      override.first_byte_ms = ms;
    }
    if (body.tps !== undefined) {
      const tps = body.tps;
      // null and 0 both mean unlimited: there is no such thing as a pace of zero.
      if (tps !== null && (typeof tps !== "number" || !Number.isFinite(tps) || tps < 0)) {
        return badRequest(res, "`tps` must be a positive number, or 0 / null for unlimited");
      }
      override.tps = tps === null || tps === 0 ? null : tps;
    }
    profiles.set(carrier, override);
  }
  sendJson(res, 200, JSON.stringify({ carrier, profile: profiles.resolve(carrier) }));
}

/** `DELETE /__sim/profile?carrier=x` drops that override; without `carrier`, every override. */
export function resetProfile(url: URL, res: ServerResponse, profiles: Profiles): void {
  const carrier = url.searchParams.get("carrier");
  profiles.reset(carrier === null || carrier === "" ? undefined : carrier);
  sendJson(res, 200, JSON.stringify({ mode: profiles.mode, profiles: profiles.list() }));
}

/** `GET /__sim/outage`: the carriers still down and how many requests each will still fail. */
export function listOutages(res: ServerResponse, outages: Outages): void {
  sendJson(res, 200, JSON.stringify({ outages: outages.list() }));
}

/** `POST /__sim/outage {"carrier","requests":N,"status"?}`; `requests: 0` ends the outage. */
export async function setOutage(req: IncomingMessage, res: ServerResponse, outages: Outages): Promise<void> {
  const body = await readObject(req, res);
  if (body === undefined) return;
  const carrier = carrierOf(body);
  if (carrier === undefined) return badRequest(res, "`carrier` must be a non-empty string");
  const requests = body.requests;
  if (typeof requests !== "number" || !Number.isInteger(requests) || requests < 0) {
    return badRequest(res, "`requests` must be a non-negative integer");
  }
  const status = body.status ?? DEFAULT_OUTAGE_STATUS;
  if (typeof status !== "number" || !validOutageStatus(status)) {
    return badRequest(res, "`status` must be 300–599, or 0 for a connection reset");
  }
  outages.set(carrier, requests, status);
  sendJson(res, 200, JSON.stringify({ outages: outages.list() }));
}
