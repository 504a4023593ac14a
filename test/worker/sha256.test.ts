import { describe, it, expect } from "vitest";
import { sha256Hex } from "../../src/keys/sha256";
import { hashApiKey, generateApiKey, toHex } from "../../src/keys/api-key";

async function webCrypto(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

describe("sha256Hex", () => {
  it("gives the FIPS 180-4 example digests", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    expect(sha256Hex("a".repeat(1_000_000))).toBe("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  });

  it("matches WebCrypto for every length around the block and padding edges, and for non-ASCII text", async () => {
    for (let n = 0; n <= 200; n++) {
      const text = Array.from({ length: n }, (_, i) => String.fromCharCode(33 + ((i * 7 + n) % 90))).join("");
      expect(sha256Hex(text), `length ${n}`).toBe(await webCrypto(text));
    }
    for (const text of ["é", "日本語のテキスト", "🙂".repeat(40), "a\u0000b"]) expect(sha256Hex(text)).toBe(await webCrypto(text));
  });

  it("hashes inputs around the size of the buffer it keeps between calls, short after long, alike", async () => {
    const texts = [300, 340, 341, 342, 400, 5, 1500, 0, 341].map((n, k) => (k % 2 ? "é" : "x").repeat(n));
    for (const text of texts) expect(sha256Hex(text), `length ${text.length}`).toBe(await webCrypto(text));
  });

  it("hashes API keys as before: stored key hashes stay valid", async () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      expect(hashApiKey(key)).toBe(await webCrypto(key));
    }
  });
});
