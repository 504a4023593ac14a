// The simulated carriers' prompt caches, so cache reads and writes show up as real carriers report them.
import { createHash } from "node:crypto";
import { countTokens } from "./tokens";

/** Least prefix a carrier caches, in tokens (Anthropic's and OpenAI's minimum). */
export const MIN_CACHED_TOKENS = 1024;
/** Entries kept (least recently used dropped first). */
const MAX_ENTRIES = 1000;

/**
 * Prefixes seen per carrier and model. Explicit caching (Anthropic): the prompt up to the last
 * `cache_control` breakpoint is written the first time and read after. Implicit caching (OpenAI, Gemini):
 * a prefix seen before is read, in `step`-token steps (OpenAI 128), never written in the report.
 */
export class PromptCache {
  private readonly seen = new Map<string, number>();

  /** Reads and writes for an explicit breakpoint: the longest prefix ending at a breakpoint that is cached is read; the last breakpoint, if new, is written. */
  explicit(scope: string, breakpoints: readonly string[]): { read: number; write: number } {
    let read = 0;
    for (const prefix of breakpoints) if (this.has(scope, prefix)) read = Math.max(read, countTokens(prefix));
    const last = breakpoints.at(-1);
    if (last === undefined) return { read, write: 0 };
    const tokens = countTokens(last);
    if (tokens < MIN_CACHED_TOKENS || this.has(scope, last)) return { read, write: 0 };
    this.remember(scope, last);
    return { read, write: tokens - read };
  }

  /**
   * The implicit read: the longest of the prompt's prefixes (at each message boundary, the whole prompt but its
   * last message the longest) seen before, in `step`-token steps; all of them remembered either way — so a
   * conversation's next turn reads the turns before it, as OpenAI's and Gemini's caches do.
   */
  implicit(scope: string, prefixes: readonly string[], step: number): number {
    let read = 0;
    for (const prefix of prefixes) {
      const tokens = countTokens(prefix);
      if (tokens < MIN_CACHED_TOKENS) continue;
      if (this.has(scope, prefix)) read = Math.max(read, tokens - (tokens % step));
      this.remember(scope, prefix);
    }
    return read;
  }

  clear(): number {
    const n = this.seen.size;
    this.seen.clear();
    return n;
  }

  private key(scope: string, prefix: string): string {
    return `${scope}\n${createHash("sha256").update(prefix).digest("hex")}`;
  }

  private has(scope: string, prefix: string): boolean {
    const key = this.key(scope, prefix);
    const hit = this.seen.has(key);
    if (hit) {
      this.seen.delete(key); // most recently used last
      this.seen.set(key, Date.now());
    }
    return hit;
  }

  private remember(scope: string, prefix: string): void {
    const key = this.key(scope, prefix);
    this.seen.delete(key);
    this.seen.set(key, Date.now());
    while (this.seen.size > MAX_ENTRIES) this.seen.delete(this.seen.keys().next().value!);
  }
}
