import { Hono } from "hono";
import type { ConsoleEnv } from "../console-env";
import { publicPage } from "../http/stacks";
import { pageMeta, render, renderError } from "../layout/render";
import { loadCatalog } from "../../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../../protocols/outbound";
import { readHealth } from "../../health/health-memo";
import { endpointStats } from "../../health/health-snapshot";
import { modelRows, parseSort, selectRows } from "./listing";
import { ModelsPage } from "./list-page";
import { ModelPage } from "./model-page";

/** The public catalog: /models (search, sort) and /models/<author>/<slug>. */
export const modelRoutes = new Hono<ConsoleEnv>();

modelRoutes.get("/models", ...publicPage, async (c) => {
  const catalog = await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p));
  const query = (c.req.query("q") ?? "").trim().slice(0, 100);
  const sort = parseSort(c.req.query("sort"));
  const all = modelRows(catalog);
  const rows = selectRows(all, query, sort);
  return render(c, <ModelsPage meta={await pageMeta(c, "Models")} rows={rows} total={all.length} query={query} sort={sort} />);
});

modelRoutes.get("/models/:author/:slug", ...publicPage, async (c) => {
  const catalog = await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p));
  const id = `${c.req.param("author")}/${c.req.param("slug")}`;
  const model = catalog.model(id);
  // A model no configured carrier serves is not listed, here as on the API.
  if (!model || catalog.endpoints(id).length === 0) return renderError(c, 404, "Model not found", `There is no model ${id} in the catalog.`);
  // Figures come from the Cron Trigger's snapshot in KV: this public page never queries D1 for them.
  // The page shows latency and throughput to everyone, as OpenRouter's own pages do; only the API withholds them.
  const stats = endpointStats(await readHealth(c.env, (p) => c.executionCtx.waitUntil(p), c.var.settings.HEALTH_MEMO_MS), id, true);
  const carriers = catalog.endpoints(id).map((endpoint) => ({ endpoint, stats: stats(endpoint.providerEntry.slug) }));
  return render(c, <ModelPage meta={await pageMeta(c, model.name)} model={model} carriers={carriers} baseUrl={`${new URL(c.req.url).origin}/api/v1`} />);
});
