import { describe, it, expect } from "vitest";
import { newWebhookSecret, signature, signatureHeader, verifySignature } from "../../src/webhooks/sign";
import { secretBox } from "../../src/webhooks/secret-box";

// src/webhooks/sign.ts and secret-box.ts on their own: Stripe's scheme, and secrets sealed so only the deployment opens them.

describe("webhook signatures", () => {
  it("sign HMAC-SHA256 over `<timestamp>.<body>` (a known vector) and verify only the same secret, body and a fresh timestamp", async () => {
    // HMAC-SHA256 keyed "whsec_test" of `1700000000.{"a":1}`, computed independently with Node's crypto.
    expect(await signature("whsec_test", 1_700_000_000, '{"a":1}')).toBe("38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789");
    const header = await signatureHeader("whsec_test", 1_700_000_000, '{"a":1}');
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(await verifySignature("whsec_test", header, '{"a":1}', 1_700_000_100)).toBe(true);
    expect(await verifySignature("whsec_test", header, '{"a":1}', 1_699_999_800)).toBe(true); // a receiver's clock behind, within 5 minutes
    expect(await verifySignature("whsec_test", header, '{"a":1}', 1_700_000_301)).toBe(false); // replayed too late
    expect(await verifySignature("whsec_other", header, '{"a":1}', 1_700_000_000)).toBe(false);
    expect(await verifySignature("whsec_test", header, '{"a":2}', 1_700_000_000)).toBe(false);
    expect(await verifySignature("whsec_test", header.replace("t=1700000000", "t=1700000001"), '{"a":1}', 1_700_000_000)).toBe(false);
    expect(await verifySignature("whsec_test", `${header},v1=${"0".repeat(64)}`, '{"a":1}', 1_700_000_000)).toBe(true); // any v1 may match
    for (const bad of ["", "v1=abc", "t=x,v1=abc", `t=1700000000`]) expect(await verifySignature("whsec_test", bad, '{"a":1}', 1_700_000_000)).toBe(false);
  });

  it("new secrets are random; a sealed secret opens only under the deployment's key and for its own endpoint, and under an earlier key kept for rotation", async () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(newWebhookSecret()).not.toBe(a);
    const key1 = "k".repeat(32);
    const key2 = "n".repeat(32);
    const sealed = await secretBox([key1])!.seal(a, "we_1");
    expect(sealed).not.toContain(a.slice(6));
    expect(await secretBox([key1])!.open(sealed, "we_1")).toBe(a);
    expect(await secretBox([key1])!.open(sealed, "we_2")).toBeNull(); // bound to its endpoint
    expect(await secretBox([key2])!.open(sealed, "we_1")).toBeNull();
    expect(await secretBox([key2, key1])!.open(sealed, "we_1")).toBe(a); // rotation: the earlier key still opens it
    expect(await secretBox([key1])!.open("not base64!", "we_1")).toBeNull();
    expect(secretBox([])).toBeNull();
  });
});
