// Per-carrier latency profiles: every carrier slug gets its own time to first byte and stream
// pace, derived from a hash of the slug, so routing sees carriers that differ without any
// provider list. Tests may pin a carrier's profile at runtime. Pure state, no I/O.

/** `default`: every slug has its hashed profile. `off`: no delay, unlimited pace (as before profiles). */
export type ProfileMode = "off" | "default";

export interface Profile {
  first_byte_ms: number;
  /** Tokens per second; null = unlimited. */
  tps: number | null;
}

/** Where a carrier's profile came from, as `GET /__sim/profiles` shows it. */
export type ProfileSource = "default" | "off" | "override";

/** A runtime override: each field present replaces the carrier's base value. */
export type ProfileOverride = Partial<Profile>;

// Small on purpose: the whole test suite runs against the default profiles.
export const FIRST_BYTE_MS_RANGE = [0, 12] as const;
export const TPS_RANGE = [2_000, 10_000] as const;
const TPS_STEP = 100;
const MAX_SEEN = 1_000;

/** FNV-1a, 32 bits: stable across runs and platforms, unlike anything seeded. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The slug's default profile: first byte in 0–12 ms, pace in 2,000–10,000 tokens/s (steps of 100). */
export function defaultProfile(slug: string): Profile {
  const h = fnv1a(slug);
  const [fbMin, fbMax] = FIRST_BYTE_MS_RANGE;
  const [tpsMin, tpsMax] = TPS_RANGE;
  const steps = (tpsMax - tpsMin) / TPS_STEP + 1;
  // Different bits of the hash for each value, so they vary independently.
  return { first_byte_ms: fbMin + (h % (fbMax - fbMin + 1)), tps: tpsMin + ((h >>> 8) % steps) * TPS_STEP };
}

/** What one request to a carrier gets before its own directives apply. */
export interface ResolvedProfile extends Profile {
  source: ProfileSource;
}

export class Profiles {
  private readonly overrides = new Map<string, ProfileOverride>();
  /** Carriers asked about or played, so the listing shows them. */
  private readonly seen = new Set<string>();

  /**
   * @param mode whether slugs get their hashed defaults
   * @param serverTps the `--tps` option: replaces the default pace (an override still wins)
   * @param known carriers listed even before any request (the catalog's)
   */
  constructor(
    readonly mode: ProfileMode,
    private readonly serverTps: number | undefined,
    private readonly known: Iterable<string> = [],
  ) {}

  resolve(carrier: string): ResolvedProfile {
    const base: Profile =
      this.mode === "default"
        ? { ...defaultProfile(carrier), tps: this.serverTps ?? defaultProfile(carrier).tps }
        : { first_byte_ms: 0, tps: this.serverTps ?? null };
    const o = this.overrides.get(carrier);
    if (o === undefined) return { ...base, source: this.mode };
    return { first_byte_ms: o.first_byte_ms ?? base.first_byte_ms, tps: o.tps !== undefined ? o.tps : base.tps, source: "override" };
  }

  /** Marks a carrier as played, for the listing. */
  touch(carrier: string): void {
    if (this.seen.size < MAX_SEEN) this.seen.add(carrier);
  }

  set(carrier: string, override: ProfileOverride): void {
    this.overrides.set(carrier, { ...this.overrides.get(carrier), ...override });
    this.touch(carrier);
  }

  /** Drops one carrier's override, or every override without a carrier. */
  reset(carrier?: string): void {
    if (carrier === undefined) this.overrides.clear();
    else this.overrides.delete(carrier);
  }

  /** The resolved profiles of `carriers`, or of every known, played or overridden carrier. */
  list(carriers?: readonly string[]): Record<string, ResolvedProfile> {
    const names = carriers ?? [...new Set([...this.known, ...this.seen, ...this.overrides.keys()])].sort();
    return Object.fromEntries(names.map((c) => [c, this.resolve(c)]));
  }
}
