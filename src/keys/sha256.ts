/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as lowercase hex, computed synchronously.
 * Every request hashes its API key. Timed alone in workerd it costs about what `crypto.subtle.digest`
 * does (3.2–3.8 against 2.8–2.9 µs a call); it is kept because it takes the promise off the auth path,
 * and concurrency-1 latency leaned its way in an A/B against WebCrypto (bench/RESULTS.md). Checked against
 * WebCrypto on the standard vectors and on inputs of every length up to four blocks
 * (test/worker/sha256.test.ts). The rounds have no branches on the data, so timing does not depend on it.
 */

/** First 32 bits of the fractional parts of the square roots (H0) and cube roots (K) of the first primes. */
const PRIMES = primes(64);
const H0 = PRIMES.slice(0, 8).map((p) => fraction32(Math.sqrt(p)));
const K = Int32Array.from(PRIMES, (p) => fraction32(Math.cbrt(p)));

const encoder = new TextEncoder();
const w = new Int32Array(64);

export function sha256Hex(text: string): string {
  const bytes = encoder.encode(text);
  // Padding: 0x80, zeros, then the length in bits as a 64-bit big-endian number; a multiple of 64 bytes.
  const blocks = Math.ceil((bytes.length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  const bits = bytes.length * 8;
  view.setUint32(padded.length - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(padded.length - 4, bits >>> 0);

  let [h0, h1, h2, h3, h4, h5, h6, h7] = H0 as [number, number, number, number, number, number, number, number];
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0,
      b = h1,
      c = h2,
      d = h3,
      e = h4,
      f = h5,
      g = h6,
      h = h7;
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
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  return hex32(h0) + hex32(h1) + hex32(h2) + hex32(h3) + hex32(h4) + hex32(h5) + hex32(h6) + hex32(h7);
}

function rotr(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

function hex32(x: number): string {
  return (x >>> 0).toString(16).padStart(8, "0");
}

function fraction32(x: number): number {
  return ((x - Math.floor(x)) * 2 ** 32) | 0;
}

function primes(n: number): number[] {
  const found: number[] = [];
  for (let k = 2; found.length < n; k++) if (found.every((p) => k % p !== 0)) found.push(k);
  return found;
}
