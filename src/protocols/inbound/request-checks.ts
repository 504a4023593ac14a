import { ApiError } from "../../request/errors";

export type Obj = Record<string, unknown>;

/** The caller's 400, naming what is wrong: an inbound protocol's request it cannot translate. */
export function refuse(message: string): never {
  throw new ApiError(400, message);
}

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Refuses every field of `json` the protocol does not take, naming them and the API (`/messages`). */
export function refuseUnknownFields(json: Obj, taken: ReadonlySet<string>, api: string): void {
  const unknown = Object.keys(json).filter((k) => !taken.has(k));
  if (unknown.length) refuse(`Unsupported field${unknown.length > 1 ? "s" : ""} for ${api}: ${unknown.join(", ")}.`);
}
