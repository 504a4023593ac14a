import { sha256Hex } from "../keys/sha256";

/**
 * Whether a destination with this sampling rate takes the generation: decided by the generation id alone
 * (its hash as a fraction of 2^32 below the rate), so the same record is in or out however often it is
 * delivered, and destinations of the same rate keep the same records.
 */
export function sampled(genId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  return parseInt(sha256Hex(`switchyard-sample:${genId}`).slice(0, 8), 16) / 2 ** 32 < rate;
}
