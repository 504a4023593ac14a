import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { Miniflare } from "miniflare";

// workerd (what `npm start` and the tests' services run on) closes a keep-alive connection after 5 s idle.
// A test process stalled past that — a loaded CI machine — must not send its next request on that socket
// (test/no-keep-alive.ts): before it, this failed with "fetch failed: other side closed".
let mf: Miniflare;
let url: URL;
beforeAll(async () => {
  mf = new Miniflare({ modules: true, script: "export default { fetch: () => new Response('ok') }", host: "127.0.0.1", port: 0 });
  url = await mf.ready;
});
afterAll(() => mf?.dispose());

/** Holds the event loop, as a busy machine does to a test process (no timer of the client's can fire). */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("the tests' HTTP client against workerd", () => {
  it("a request after the process stalled past workerd's keep-alive does not reuse the closed connection", async () => {
    expect(await (await fetch(url)).text()).toBe("ok");
    stall(6_000);
    expect(await (await fetch(url)).text()).toBe("ok");
  });
});
