/**
 * Load balancing among a model's endpoints, weighted toward the cheaper (OpenRouter's rule: by the
 * inverse square of price, here input + output nano-USD per token): the whole order is drawn by
 * weighted sampling without replacement, so the cheapest leads most requests while the others still
 * get their share (and the rest stay behind as fallbacks). Price-0 endpoints (free) lead, in random
 * order among themselves. Pure: the random source is given.
 */
export function balanceByPrice<E extends { inputNano: number; outputNano: number }>(endpoints: readonly E[], random: () => number): E[] {
  if (endpoints.length < 2) return [...endpoints];
  const free = endpoints.filter((e) => e.inputNano + e.outputNano === 0);
  const priced = endpoints.filter((e) => e.inputNano + e.outputNano > 0);
  return [...draw(free, () => 1, random), ...draw(priced, (e) => 1 / (e.inputNano + e.outputNano) ** 2, random)];
}

function draw<E>(items: readonly E[], weight: (e: E) => number, random: () => number): E[] {
  const left = items.map((e) => ({ e, w: weight(e) }));
  const out: E[] = [];
  while (left.length > 0) {
    const total = left.reduce((s, x) => s + x.w, 0);
    let r = random() * total;
    let i = 0;
    while (i < left.length - 1 && r >= left[i]!.w) r -= left[i++]!.w;
    out.push(left.splice(i, 1)[0]!.e);
  }
  return out;
}
