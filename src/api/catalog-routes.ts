import { Hono } from "hono";
import type { AppEnv } from "../env";

/** Placeholder: GET /models, /models/:author/:slug/endpoints, /providers (being written). */
export const catalogRoutes = new Hono<AppEnv>();
