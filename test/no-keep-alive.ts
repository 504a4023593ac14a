import { Agent, setGlobalDispatcher } from "undici";

// The tests' own HTTP (fetch, and the SDKs on it) opens a connection per request. workerd closes a
// keep-alive connection idle for 5 s; a test process whose event loop stalls that long on a loaded
// machine would send its next request on a socket the server is closing, and fail with "other side
// closed" (test/node/keep-alive.test.ts). Localhost connections cost nothing to open.
setGlobalDispatcher(new Agent({ pipelining: 0 }));
