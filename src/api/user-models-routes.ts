import { Hono } from "hono";
import * as z from "zod";
import { limitParam, offsetParam } from "./page-query";
import type { AppEnv } from "../keys/caller";
import { loadCatalog } from "../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../protocols/outbound";
import { presentModel, presentModelList } from "./present-catalog";
import { allowedEndpoints } from "../guardrails/rules";
import { requireKey } from "./auth";
import { parseInput } from "./key-management-input";

/**
 * `GET /models/user`: the models the calling key may use — each with at least one endpoint its guardrails
 * allow (all of them, without guardrails), priced by the first such endpoint — every output modality.
 * The contract's `offset` and `limit` page it; without either the whole list comes back, as on /models.
 */
export const userModelsRoutes = new Hono<AppEnv>();

const pageQuery = z.strictObject({
  offset: offsetParam.optional(),
  limit: limitParam(1000).optional(),
});

userModelsRoutes.get("/models/user", requireKey, async (c) => {
  const q = parseInput(pageQuery, c.req.query());
  const catalog = await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p));
  const { guardrails } = c.get("caller");
  const all = catalog.models.flatMap((m) => {
    const top = allowedEndpoints(catalog.endpoints(m.id), guardrails)[0];
    return top ? [presentModel(catalog, m, top)] : [];
  });
  const offset = q.offset ?? 0;
  const limit = q.limit ?? all.length;
  const next = offset + limit < all.length ? `/api/v1/models/user?offset=${offset + limit}&limit=${limit}` : null;
  return c.json(presentModelList(all.slice(offset, offset + limit), all.length, next), 200, { "cache-control": "private, no-store" });
});
