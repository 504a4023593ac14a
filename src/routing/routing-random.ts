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
  let a = Number.parseInt(seed, 10) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Whether the default order balances load by price (ROUTING_BALANCE "price", the default) or is strictly cheapest first ("off"). */
export function balancing(env: RoutingVars): boolean {
  return (env.ROUTING_BALANCE ?? "price").trim() !== "off";
}
