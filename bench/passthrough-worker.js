// The bare pass-through Worker of `npm run bench`: the best any router on Workers can do. It forwards
// the request (method, headers, body — streamed) to the carrier simulator and returns the simulator's
// response unchanged (streamed). No parsing, no auth, no storage.
//   env.UPSTREAM       the simulator's origin, e.g. http://127.0.0.1:40123
//   env.CARRIER_PATH   where the router would send a chat completion, e.g. /groq/v1/chat/completions

export default {
  /**
   * @param {Request} request
   * @param {{ UPSTREAM: string, CARRIER_PATH: string }} env
   */
  fetch(request, env) {
    const url = new URL(request.url);
    const path = url.pathname === "/api/v1/chat/completions" ? env.CARRIER_PATH : url.pathname + url.search;
    return fetch(new Request(env.UPSTREAM + path, request));
  },
};
