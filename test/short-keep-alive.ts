import { Agent, setGlobalDispatcher } from "undici";

// The tests' own HTTP (fetch, and the SDKs on it) drops an idle keep-alive connection after 1 s. workerd
// and Node's servers close one idle for 5 s; with the client's default of 4 s, a test process whose
// timers ran a second late on a loaded machine sent its next request on a socket the server was closing,
// and failed with "other side closed". Keep-alive stays on otherwise (test/node/keep-alive.test.ts):
// without it undici reads a connection that ends mid-body as a whole answer, and tests of cut streams
// would pass on a cut they cannot see.
setGlobalDispatcher(new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 }));
