import { mulberry32 } from "./mulberry32";

/** The vars routing reads (a structural type: this file is also used by pure tests outside workerd). */
export type RoutingVars = { ROUTING_SEED?: string; ROUTING_BALANCE?: string };

/**
 * The random source of one request's load balancing. With ROUTING_SEED set, a seeded generator
 * (mulberry32) started afresh for every request, so every request draws the same order: tests and
 * reproductions. Otherwise Math.random.
 */
export function routingRandom(env: RoutingVars): () => number {
  const seed = env.ROUTING_SEED?.trim();
  if (!seed) return Math.random;
  return mulberry32(Number.parseInt(seed, 10));
}

/** Whether the default order balances load by price (ROUTING_BALANCE "price", the default) or is strictly cheapest first ("off"). */
export function balancing(env: RoutingVars): boolean {
  return (env.ROUTING_BALANCE ?? "price").trim() !== "off";
}
