import { describe, it, expect } from "vitest";
import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import { drainBody } from "../../src/http/drain-body";
import { newAccount } from "./helpers";

const CHUNK = new Uint8Array(64 * 1024).fill(0x61);

/** A body that never ends; counts what was pulled from it. */
function endless() {
  const counter = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      counter.pulled += CHUNK.byteLength;
      controller.enqueue(CHUNK);
    },
    cancel() {
      counter.cancelled = true;
    },
  });
  return { body, counter };
}

describe("draining an unread request body", () => {
  it("reads a finite body to its end", async () => {
    const body = new Blob([CHUNK, CHUNK, CHUNK]).stream();
    expect(await drainBody(body, 1024 * 1024, 5000)).toBe(true);
  });

  it("stops after the byte bound and cancels the rest", async () => {
    const { body, counter } = endless();
    expect(await drainBody(body, 1024 * 1024, 60_000)).toBe(false);
    expect(counter.pulled).toBeGreaterThan(1024 * 1024);
    expect(counter.pulled).toBeLessThanOrEqual(1024 * 1024 + 2 * CHUNK.byteLength); // one chunk past the bound, one queued
    expect(counter.cancelled).toBe(true);
  });

  it("stops after the time bound when the client sends nothing more", async () => {
    let cancelled = false;
    const silent = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}), cancel: () => void (cancelled = true) });
    expect(await drainBody(silent, 1024 * 1024, 50)).toBe(false);
    expect(cancelled).toBe(true);
  });

  it("an endless oversized body gets the 413 JSON error after at most BODY_DRAIN_MAX_BYTES more are read", async () => {
    const a = await newAccount(1);
    const { body, counter } = endless();
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request("https://switchyard.test/api/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${a.key}`, "content-type": "application/json" },
        body,
      }),
      { ...env, BODY_DRAIN_MAX_BYTES: String(8 * 1024 * 1024) },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: { code: 413, message: "Request body too large: the limit is 4194304 bytes (4 MiB)." } });
    // 4 MiB read for the request, then at most 8 MiB drained (plus the chunks in flight).
    expect(counter.pulled).toBeLessThanOrEqual(12 * 1024 * 1024 + 3 * CHUNK.byteLength);
    expect(counter.pulled).toBeGreaterThan(12 * 1024 * 1024);
    expect(counter.cancelled).toBe(true);
  });
});
