import { Hono } from "hono";
import type { ConsoleEnv } from "../console-env";
import { publicPage } from "../http/stacks";
import { pageMeta, render } from "../layout/render";
import { loadCatalog } from "../../catalog/load";
import { CARRIER_PROTOCOL_NAMES } from "../../protocols/outbound";
import { HomePage } from "./page";

export const homeRoutes = new Hono<ConsoleEnv>();

homeRoutes.get("/", ...publicPage, async (c) => {
  const catalog = await loadCatalog(c.env, CARRIER_PROTOCOL_NAMES, (p) => c.executionCtx.waitUntil(p));
  const baseUrl = `${new URL(c.req.url).origin}/api/v1`;
  return render(
    c,
    <HomePage
      meta={await pageMeta(c, "OpenAI-compatible model router")}
      baseUrl={baseUrl}
      defaultModel={catalog.file.default_model}
      modelCount={catalog.models.length}
      carrierCount={catalog.providers.length}
    />,
  );
});
