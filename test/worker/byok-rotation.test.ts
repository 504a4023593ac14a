import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, newAccount } from "./helpers";
import { openCarrierKey, sealCarrierKey } from "../../src/byok/byok-crypto";
import { createByok, findByok, reencryptByok } from "../../src/byok/byok-store";
import type { ByokKey } from "../../src/db/schema";

// The encryption of accounts' carrier keys (docs/byok.md): bound to the account and the carrier, opened
// under any listed version of BYOK_ENCRYPTION_KEYS, and rotated by re-encrypting under the newest.
const V1 = { version: 1, secret: "rotation-test-secret-version-one-0123456789" };
const V2 = { version: 2, secret: "rotation-test-secret-version-two-0123456789" };
const V3 = { version: 3, secret: "rotation-test-secret-version-three-012345678" };

const sealedOf = (k: ByokKey) => ({ ciphertext: k.ciphertext, iv: k.iv, keyVersion: k.keyVersion });

describe("a carrier key at rest", () => {
  it("opens only for its account and carrier, under a listed version, unaltered", async () => {
    const sealed = (await sealCarrierKey([V1], "acct_a", "groq", "gsk_plain_key_1234"))!;
    expect(sealed.keyVersion).toBe(1);
    expect(sealed.ciphertext).not.toContain("gsk_plain");
    expect(await openCarrierKey([V1], "acct_a", "groq", sealed)).toBe("gsk_plain_key_1234");
    expect(await openCarrierKey([V2, V1], "acct_a", "groq", sealed)).toBe("gsk_plain_key_1234");
    expect(await openCarrierKey([V1], "acct_b", "groq", sealed)).toBeNull();
    expect(await openCarrierKey([V1], "acct_a", "cerebras", sealed)).toBeNull();
    expect(await openCarrierKey([V2], "acct_a", "groq", sealed)).toBeNull();
    // The same version number under another secret (a mistyped rotation) does not open it either.
    expect(await openCarrierKey([{ version: 1, secret: V2.secret }], "acct_a", "groq", sealed)).toBeNull();
    const bytes = atob(sealed.ciphertext);
    const flipped = btoa(String.fromCharCode(bytes.charCodeAt(0) ^ 1) + bytes.slice(1));
    expect(await openCarrierKey([V1], "acct_a", "groq", { ...sealed, ciphertext: flipped })).toBeNull();
    // A fresh nonce every time: the same key twice is two ciphertexts.
    expect((await sealCarrierKey([V1], "acct_a", "groq", "gsk_plain_key_1234"))!.ciphertext).not.toBe(sealed.ciphertext);
  });

  it("rotation: a new version encrypts, the old still decrypts until re-encryption moves every row, then the old can go", async () => {
    const a = await newAccount(1);
    const b = await newAccount(1);
    const ka = (await createByok(env.DB, [V1], a.accountId, "groq", "gsk_account_a_AAAA", {})) as ByokKey;
    const kb = (await createByok(env.DB, [V1], b.accountId, "anthropic", "sk-ant-account-b-BBBB", {})) as ByokKey;
    expect(ka.keyVersion).toBe(1);
    // A row under a version no longer listed cannot be read: counted, left as it is.
    const lost = await newAccount(1);
    const kl = (await createByok(env.DB, [V3], lost.accountId, "groq", "gsk_lost_LLLL", {})) as ByokKey;

    const ring = [V2, V1];
    const first = await reencryptByok(env.DB, ring, 1);
    expect(first).toMatchObject({ moved: 1 });
    const rest = await reencryptByok(env.DB, ring, 100);
    expect(rest.moved + first.moved).toBe(2);
    expect(rest.unreadable).toBe(1);
    expect(rest.left).toBe(1); // the lost one
    for (const [k, account, provider, plain] of [
      [ka, a.accountId, "groq", "gsk_account_a_AAAA"],
      [kb, b.accountId, "anthropic", "sk-ant-account-b-BBBB"],
    ] as const) {
      const row = (await findByok(env.DB, account, k.id))!;
      expect(row.keyVersion).toBe(2);
      expect(row.ciphertext).not.toBe(k.ciphertext);
      expect(await openCarrierKey([V2], account, provider, sealedOf(row))).toBe(plain);
    }
    expect((await findByok(env.DB, lost.accountId, kl.id))!.keyVersion).toBe(3);
  });

  it("the admin command re-encrypts under the deployment's keyring: rows it cannot read stay, and it is not done while they do", async () => {
    // This file's earlier rows are under versions 2 and 3, which the deployment's keyring (version 1 only) cannot read.
    const res = await admin<{ version: number; moved: number; unreadable: number; left: number; done: boolean }>("/byok/reencrypt", {});
    expect(res).toEqual({ version: 1, moved: 0, unreadable: 3, left: 3, done: false });
  });
});
