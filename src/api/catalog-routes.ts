import { Hono, type Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../keys/caller";
import { isolate } from "../isolate";
import { ApiError } from "../request/errors";
import { loadCatalog } from "../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../protocols/outbound";
import type { Catalog } from "../catalog/catalog";
import { presentEndpoints, presentModel, presentModelList, presentProviders, type PresentedModel } from "./present-catalog";
import { readHealth } from "../health/health-memo";
import { endpointStats } from "../health/health-snapshot";
import { hasValidKey } from "./auth";

/** Public catalog: GET /models, /models/count, /models/:author/:slug/endpoints, /providers. No key needed. */
export const catalogRoutes = new Hono<AppEnv>();

/** What is presented once per catalog version: the catalog never changes under a Catalog object. */
interface Presented {
  models: PresentedModel[];
  /** Average of the top endpoint's prompt and completion nano prices, for `sort=pricing-*`. */
  averagePrice: Map<string, number>;
  /** `GET /models` without a query, serialized once: the text-output models (the contract's default). */
  fullList: string;
  providers: string;
}
const presentedCatalogs = isolate.slot("presented catalogs", () => new WeakMap<Catalog, Presented>());

function presented(catalog: Catalog): Presented {
  const presentedCache = presentedCatalogs.get();
  let p = presentedCache.get(catalog);
  if (!p) {
    const models = catalog.models.map((m) => presentModel(catalog, m));
    const averagePrice = new Map(
      catalog.models.map((m) => {
        const top = catalog.endpoints(m.id)[0];
        return [m.id, top ? (top.inputNano + top.outputNano) / 2 : 0] as const;
      }),
    );
    p = {
      models,
      averagePrice,
      // The list without a query: the contract's default filter (text output) applied.
      fullList: (() => {
        const text = models.filter((m) => m.architecture.output_modalities.includes("text"));
        return JSON.stringify(presentModelList(text, text.length, null));
      })(),
      providers: JSON.stringify(presentProviders(catalog)),
    };
    presentedCache.set(catalog, p);
  }
  return p;
}

const catalogFor = (c: Context<AppEnv>) => loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p));

const CACHE_CONTROL = "public, max-age=60";

/** A comma-separated query value as a set of lower-case words. */
const csv = z
  .string()
  .max(1000)
  .transform((s) =>
    s
      .split(",")
      .map((w) => w.trim().toLowerCase())
      .filter((w) => w.length > 0),
  );

/** The `/models` query parameters we honour (from the contract); others are ignored. */
const modelsQuery = z.object({
  offset: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  supported_parameters: csv.optional(),
  input_modalities: csv.optional(),
  output_modalities: csv.optional(),
  model_authors: csv.optional(),
  context: z.coerce.number().int().min(1).optional(),
  q: z.string().max(200).optional(),
  // Every contract value is accepted; those we have no data for keep the catalog order.
  sort: z
    .enum([
      "most-popular",
      "newest",
      "top-weekly",
      "pricing-low-to-high",
      "pricing-high-to-low",
      "context-high-to-low",
      "throughput-high-to-low",
      "latency-low-to-high",
      "intelligence-high-to-low",
      "coding-high-to-low",
      "agentic-high-to-low",
      "design-arena-elo-high-to-low",
    ])
    .optional(),
});
type ModelsQuery = z.infer<typeof modelsQuery>;

function selectModels(p: Presented, q: ModelsQuery): PresentedModel[] {
  const hasAll = (have: readonly string[], want: readonly string[] | undefined) => !want || want.every((w) => have.includes(w));
  const outputs = q.output_modalities ?? ["text"]; // the contract's default
  const text = q.q?.trim().toLowerCase();
  const out = p.models.filter(
    (m) =>
      hasAll(m.supported_parameters, q.supported_parameters) &&
      hasAll(m.architecture.input_modalities, q.input_modalities) &&
      (outputs.includes("all") || m.architecture.output_modalities.some((o) => outputs.includes(o))) &&
      (!q.model_authors || q.model_authors.includes(m.id.slice(0, m.id.indexOf("/")))) &&
      (q.context === undefined || m.context_length >= q.context) &&
      (!text || m.id.includes(text) || m.name.toLowerCase().includes(text) || m.aliases.some((a) => a.includes(text))),
  );
  const price = (m: PresentedModel) => p.averagePrice.get(m.id) ?? 0;
  if (q.sort === "newest") out.sort((a, b) => b.created - a.created);
  else if (q.sort === "context-high-to-low") out.sort((a, b) => b.context_length - a.context_length);
  else if (q.sort === "pricing-low-to-high") out.sort((a, b) => price(a) - price(b));
  else if (q.sort === "pricing-high-to-low") out.sort((a, b) => price(b) - price(a));
  return out;
}

/** The `/models` query of a request, 400 naming the first bad parameter. */
function readModelsQuery(url: URL): ModelsQuery {
  const parsed = modelsQuery.safeParse(Object.fromEntries(url.searchParams));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ApiError(400, `Invalid query parameter${issue?.path.length ? ` ${issue.path.join(".")}` : ""}: ${issue?.message ?? "invalid"}`);
}

/** `GET /models`, and `GET /embeddings/models` (the embeddings models, `output` forcing the output modality). */
async function listModels(c: Context<AppEnv>, output: "embeddings" | null): Promise<Response> {
  const p = presented(await catalogFor(c));
  const url = new URL(c.req.url);
  if (url.search === "" && output === null)
    return c.body(p.fullList, 200, { "content-type": "application/json; charset=UTF-8", "cache-control": CACHE_CONTROL });

  const query = readModelsQuery(url);
  const q = output === null ? query : { ...query, output_modalities: [output] };
  const all = selectModels(p, q);
  // The contract returns the whole list unless offset or limit is given.
  if (q.offset === undefined && q.limit === undefined) return c.json(presentModelList(all, all.length, null), 200, { "cache-control": CACHE_CONTROL });
  const offset = q.offset ?? 0;
  const limit = q.limit ?? 500;
  let next: string | null = null;
  if (offset + limit < all.length) {
    const nextParams = new URLSearchParams(url.searchParams);
    nextParams.set("offset", String(offset + limit));
    nextParams.set("limit", String(limit));
    next = `${url.pathname}?${nextParams}`;
  }
  return c.json(presentModelList(all.slice(offset, offset + limit), all.length, next), 200, { "cache-control": CACHE_CONTROL });
}

catalogRoutes.get("/models", (c) => listModels(c, null));
// The contract's count (`{data: {count}}`) of what `GET /models` lists with the same filters (offset and limit aside).
catalogRoutes.get("/models/count", async (c) => {
  const p = presented(await catalogFor(c));
  return c.json({ data: { count: selectModels(p, readModelsQuery(new URL(c.req.url))).length } }, 200, { "cache-control": CACHE_CONTROL });
});
catalogRoutes.get("/embeddings/models", (c) => listModels(c, "embeddings"));

/** Catalog id parts: anything else (encoded slashes, dots-only, over-long, upper case) names no model. */
const idPart = z
  .string()
  .max(100)
  .regex(/^[a-z0-9][a-z0-9._-]*$/);
const endpointsParams = z.object({
  author: idPart,
  slug: z
    .string()
    .max(120)
    .regex(/^[a-z0-9][a-z0-9._-]*(:[a-z]+)?$/), // a variant suffix such as `:free`
});

catalogRoutes.get("/models/:author/:slug/endpoints", async (c) => {
  const params = endpointsParams.safeParse({ author: c.req.param("author"), slug: c.req.param("slug") });
  if (!params.success) throw new ApiError(404, "Model not found");
  const catalog = await catalogFor(c);
  const id = `${params.data.author}/${params.data.slug}`;
  const model = catalog.model(id);
  // A model no configured carrier serves is not listed, here as on /models.
  if (!model || catalog.endpoints(id).length === 0) throw new ApiError(404, `Model ${id} not found`);
  // Figures come from the Cron Trigger's snapshot in KV (this route never queries D1 for them);
  // latency and throughput only for callers with a valid key, as the contract has it.
  const [snapshot, withPercentiles] = await Promise.all([
    readHealth(c.env, (p) => c.executionCtx.waitUntil(p), c.var.settings.HEALTH_MEMO_MS),
    hasValidKey(c.env, c.req.header("authorization")),
  ]);
  const body = presentEndpoints(catalog, model, endpointStats(snapshot, id, withPercentiles));
  return c.json(body, 200, { "cache-control": "no-store" });
});

catalogRoutes.get("/providers", async (c) => {
  const p = presented(await catalogFor(c));
  return c.body(p.providers, 200, { "content-type": "application/json; charset=UTF-8", "cache-control": CACHE_CONTROL });
});
