import { describe, it, expect } from "vitest";
import { relayLimits, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_STREAM_BYTES, DEFAULT_MAX_STREAM_MS, DEFAULT_AFTER_DONE_MS } from "../../src/relay/relay-limits";
import type { Env } from "../../src/env";
import { settings } from "../../src/settings";

describe("relay limits from the Worker's vars", () => {
  it("default to 8 MiB per event, 256 MiB and 25 minutes per stream, 1 s for a carrier's body to end after [DONE], 5 s for its usage after the caller left", () => {
    expect(relayLimits(settings({} as Env))).toEqual({
      maxEventBytes: 8 * 1024 * 1024,
      maxStreamBytes: 256 * 1024 * 1024,
      maxStreamMs: 25 * 60_000,
      afterDoneMs: 1000,
      pingMs: 10_000,
      usageWaitMs: 5000,
    });
    expect([DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_STREAM_BYTES, DEFAULT_MAX_STREAM_MS, DEFAULT_AFTER_DONE_MS]).toEqual([8388608, 268435456, 1500000, 1000]);
  });

  it("take positive whole numbers and ignore anything else", () => {
    const env = { RELAY_MAX_EVENT_BYTES: "1000", RELAY_MAX_STREAM_BYTES: "0", RELAY_MAX_STREAM_MS: "1.5", RELAY_AFTER_DONE_MS: "50" } as Env;
    expect(relayLimits(settings(env))).toEqual({
      maxEventBytes: 1000,
      maxStreamBytes: DEFAULT_MAX_STREAM_BYTES,
      maxStreamMs: DEFAULT_MAX_STREAM_MS,
      afterDoneMs: 50,
      pingMs: 10_000,
      usageWaitMs: 5000,
    });
    expect(relayLimits(settings({ RELAY_MAX_EVENT_BYTES: "lots", RELAY_MAX_STREAM_MS: "-5" } as Env))).toMatchObject({
      maxEventBytes: DEFAULT_MAX_EVENT_BYTES,
      maxStreamMs: DEFAULT_MAX_STREAM_MS,
    });
  });
});
