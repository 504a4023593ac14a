import { ApiError } from "../../request/errors";

export type Obj = Record<string, unknown>;

/** The caller's 400, naming what is wrong: an inbound protocol's request it cannot translate. */
export function refuse(message: string): never {
  throw new ApiError(400, message);
}

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The router's own fields the Messages and Responses requests take (the contract lists them on both), passed to the canonical request as they are. */
export const ROUTER_FIELDS_TAKEN = ["models", "provider", "route", "session_id", "plugins", "trace"] as const;

/** Refuses every field of `json` the protocol does not take, naming them and the API (`/messages`). */
export function refuseUnknownFields(json: Obj, taken: ReadonlySet<string>, api: string): void {
  const unknown = Object.keys(json).filter((k) => !taken.has(k));
  if (unknown.length) refuse(`Unsupported field${unknown.length > 1 ? "s" : ""} for ${api}: ${unknown.join(", ")}.`);
}
