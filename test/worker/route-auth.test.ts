import { describe, it, expect } from "vitest";
import { app } from "../../src/app";
import { call } from "./helpers";

// Auth is on the routes (requireKey in each route's chain), not in a path list beside them: a route
// added without it would answer here without a key (or crash reading a caller that is not there).
const PUBLIC = new Set([
  "GET /api/v1/models",
  "GET /api/v1/models/count",
  "GET /api/v1/models/:author/:slug/endpoints",
  "GET /api/v1/providers",
  "GET /api/v1/embeddings/models",
]);

describe("every /api/v1 route but the public catalog needs a key", () => {
  const routes = [...new Set(app.routes.filter((r) => r.path.startsWith("/api/v1/") && r.method !== "ALL").map((r) => `${r.method} ${r.path}`))];

  it("finds the routes", () => {
    expect(routes.length).toBeGreaterThanOrEqual(11);
    for (const p of PUBLIC) expect(routes).toContain(p);
  });

  it.each(routes.filter((r) => !PUBLIC.has(r)))("%s without a key: 401", async (route) => {
    const [method, path] = route.split(" ") as [string, string];
    const res = await call(path.replace(/:[a-z]+/g, "x"), {
      method,
      ...(method === "GET" ? {} : { body: "{}", headers: { "content-type": "application/json" } }),
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { type?: string; error: { code?: number; type?: string } };
    // Each protocol refuses in its own shape: Anthropic's for /messages, OpenAI's elsewhere.
    if (path.startsWith("/api/v1/messages")) expect(body).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    else expect(body.error.code).toBe(401);
  });
});
