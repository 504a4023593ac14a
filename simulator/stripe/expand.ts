// `expand[]`: ids replaced by their objects (dotted paths, `data.` for lists), as Stripe expands them.
import { invalid } from "./errors";
import { listObject } from "./session-object";
import type { Store } from "./store";

type Obj = Record<string, unknown>;

function lookup(store: Store, id: string): object | undefined {
  if (id.startsWith("cs_")) return store.sessions.get(id)?.session;
  if (id.startsWith("pi_")) return store.paymentIntents.get(id);
  if (id.startsWith("ch_")) return store.charges.get(id);
  if (id.startsWith("re_")) return store.refunds.get(id);
  if (id.startsWith("dp_")) return store.disputes.get(id);
  return undefined;
}

/** Fields that only appear when expanded: a session's line items, a charge's refunds. */
function includable(store: Store, obj: Obj, field: string): object | undefined {
  if (obj.object === "checkout.session" && field === "line_items") {
    const items = store.sessions.get(obj.id as string)?.items ?? [];
    return listObject(items, false, `/v1/checkout/sessions/${obj.id as string}/line_items`);
  }
  if (obj.object === "charge" && field === "refunds") {
    const refunds = [...store.refunds.values()].filter((r) => r.charge === obj.id).reverse();
    return listObject(refunds, false, `/v1/charges/${obj.id as string}/refunds`);
  }
  return undefined;
}

function expandPath(store: Store, obj: Obj, path: string[], full: string): void {
  const [field, ...rest] = path;
  if (field === "data" && obj.object === "list" && Array.isArray(obj.data)) {
    for (const item of obj.data as Obj[]) expandPath(store, item, rest, full);
    return;
  }
  let value = obj[field!];
  if (typeof value === "string") value = lookup(store, value) && structuredClone(lookup(store, value));
  else if (value === undefined) value = includable(store, obj, field!);
  if (value === undefined || value === null || typeof value !== "object") {
    if (obj[field!] === null) return; // nothing to expand: stays null, as with Stripe
    throw invalid("expand", `This property cannot be expanded (${full}).`);
  }
  obj[field!] = value;
  if (rest.length > 0) expandPath(store, value as Obj, rest, full);
}

/** A copy of `object` with each `expand` path expanded. */
export function expand<T extends object>(store: Store, object: T, paths: string[]): T {
  if (paths.length === 0) return object;
  const copy = structuredClone(object) as Obj;
  for (const path of paths) expandPath(store, copy, path.split("."), path);
  return copy as T;
}
