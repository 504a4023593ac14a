import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { createServer, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";

// The tests' HTTP client (test/short-keep-alive.ts) against a server that counts its connections: an
// idle connection is dropped by the client long before a server's 5 s, and a busy one is kept.
let server: Server;
let url: string;
let connections = 0;
beforeAll(async () => {
  server = createServer((_req, res) => res.end("ok"));
  server.on("connection", () => connections++);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("the tests' HTTP client", () => {
  it("keeps a connection between requests that follow each other (a cut body stays an error)", async () => {
    const before = connections;
    for (let i = 0; i < 10; i++) expect(await (await fetch(url)).text()).toBe("ok");
    // Reused (a connection freed as its answer ends may still be settling when the next request goes out:
    // one more may open); without keep-alive it would be ten.
    expect(connections - before).toBeLessThanOrEqual(2);
  });

  it("opens a new connection after 2.5 s idle: half the servers' 5 s, past its own 1 s", async () => {
    expect(await (await fetch(url)).text()).toBe("ok");
    const before = connections;
    // The idle time is what is tested. Timers run in order of expiry, so a late wake-up still finds the
    // client's keep-alive timer (due first) run.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await (await fetch(url)).text()).toBe("ok");
    expect(connections - before).toBe(1);
  });
});
