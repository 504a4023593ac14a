import { createMiddleware } from "hono/factory";

/**
 * CORS for the API: any origin may call it with a bearer key (no cookies, so no credentials mode).
 * Headers are set on the route's own response once it exists, rather than on a placeholder response
 * merged into it afterwards (hono/cors's way, a measurable share of each request's CPU).
 */
export const apiCors = createMiddleware(async (c, next) => {
  if (c.req.method === "OPTIONS")
    return new Response(null, {
      status: 204,
      headers: {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, POST, PATCH, DELETE, OPTIONS",
        "access-control-allow-headers": c.req.header("access-control-request-headers") ?? "authorization, content-type",
        "access-control-max-age": "86400",
        vary: "Access-Control-Request-Headers",
      },
    });
  await next();
  let res = c.res;
  try {
    res.headers.set("access-control-allow-origin", "*");
  } catch {
    res = c.res = new Response(res.body, res); // immutable headers (a fetched response): copy them
    res.headers.set("access-control-allow-origin", "*");
  }
  res.headers.set(
    "access-control-expose-headers",
    "X-Generation-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Token-Count, X-Token-Count-Fallback, X-Switchyard-Dropped-Tools, X-OpenRouter-Cache-Status, X-OpenRouter-Cache-TTL, X-OpenRouter-Cache-Age, X-Switchyard-Cache-Reason, X-Switchyard-Cache-Source",
  );
});
