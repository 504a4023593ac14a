/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as lowercase hex, computed synchronously.
 * Every request hashes its API key. Timed alone in workerd it costs about what `crypto.subtle.digest`
 * does (3.2–3.8 against 2.8–2.9 µs a call); it is kept because it takes the promise off the auth path,
 * and concurrency-1 latency leaned its way in an A/B against WebCrypto (bench/history/2026-11-23.md). Checked against
 * WebCrypto on the standard vectors and on inputs of every length up to four blocks
 * (test/worker/sha256.test.ts). The rounds have no branches on the data, so timing does not depend on it.
 * It allocates only the digest's string (an input up to KEPT_BYTES is encoded into a buffer kept between
 * calls): every request hashes a key, and what a request allocates is what the collector pauses for.
 */

/** First 32 bits of the fractional parts of the square roots (H0) and cube roots (K) of the first primes. */
const PRIMES = primes(64);
const H0 = PRIMES.slice(0, 8).map((p) => fraction32(Math.sqrt(p)));
const K = Int32Array.from(PRIMES, (p) => fraction32(Math.cbrt(p)));

const encoder = new TextEncoder();
const w = new Int32Array(64);
const state = new Int32Array(8);
/** Hex digits of the digest as character codes: one string is made from them, nothing else per call. */
const out: number[] = new Array<number>(64).fill(48);
const HEX = Array.from("0123456789abcdef", (ch) => ch.charCodeAt(0));
/** Input kept between calls up to this many bytes (an API key is under 100); longer input gets a buffer of its own. */
const KEPT_BYTES = 1024;
const kept = new Uint8Array(KEPT_BYTES);

export function sha256Hex(text: string): string {
  // Padding: 0x80, zeros, then the length in bits as a 64-bit big-endian number; a multiple of 64 bytes.
  // UTF-8 takes at most 3 bytes per UTF-16 unit, so the text always fits where it is encoded.
  const room = Math.ceil((text.length * 3 + 9) / 64) * 64;
  const buf = room <= KEPT_BYTES ? kept : new Uint8Array(room);
  const length = encoder.encodeInto(text, buf).written;
  const end = Math.ceil((length + 9) / 64) * 64;
  buf.fill(0, length, end);
  buf[length] = 0x80;
  const bits = length * 8;
  const high = Math.floor(bits / 2 ** 32);
  for (let i = 0; i < 4; i++) {
    buf[end - 8 + i] = (high >>> (24 - 8 * i)) & 0xff;
    buf[end - 4 + i] = (bits >>> (24 - 8 * i)) & 0xff;
  }
  state.set(H0);
  for (let offset = 0; offset < end; offset += 64) {
    for (let i = 0; i < 16; i++) {
      const o = offset + i * 4;
      w[i] = (buf[o]! << 24) | (buf[o + 1]! << 16) | (buf[o + 2]! << 8) | buf[o + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = state[0]!,
      b = state[1]!,
      c = state[2]!,
      d = state[3]!,
      e = state[4]!,
      f = state[5]!,
      g = state[6]!,
      h = state[7]!;
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    state[0] = state[0]! + a;
    state[1] = state[1]! + b;
    state[2] = state[2]! + c;
    state[3] = state[3]! + d;
    state[4] = state[4]! + e;
    state[5] = state[5]! + f;
    state[6] = state[6]! + g;
    state[7] = state[7]! + h;
  }
  if (buf === kept) kept.fill(0, 0, length); // the key's bytes do not outlive the call
  for (let i = 0; i < 64; i++) out[i] = HEX[(state[i >> 3]! >>> (28 - 4 * (i & 7))) & 15]!;
  return String.fromCharCode.apply(null, out);
}

function rotr(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

function fraction32(x: number): number {
  return ((x - Math.floor(x)) * 2 ** 32) | 0;
}

function primes(n: number): number[] {
  const found: number[] = [];
  for (let k = 2; found.length < n; k++) if (found.every((p) => k % p !== 0)) found.push(k);
  return found;
}
