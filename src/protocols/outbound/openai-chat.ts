import type { CarrierProtocol } from "./carrier-protocol";
import { carrierView } from "../../request/router-fields";

/**
 * The OpenAI Chat Completions protocol (`POST {base}/chat/completions`, a Bearer key), which most carriers
 * speak. The canonical request and answer are its own shapes, so the request goes as the caller sent it
 * (less the router's fields, `user` hashed, usage asked for on streams) and the answer comes back as is.
 */
export const openAiChat: CarrierProtocol = {
  name: "openai-chat",
  basePath: "/v1",
  defaultAuth: "bearer",

  bodies(body, stream, userHash) {
    const { model: _requested, ...rest } = carrierView(body, userHash);
    if (stream) {
      const options = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
      rest.stream_options = { ...options, include_usage: true };
    }
    const fields = JSON.stringify(rest); // "{…}"; a chat request always has messages, so never "{}"
    return (endpoint) => `{"model":${JSON.stringify(endpoint.upstream_model)},${fields.slice(1)}`;
  },

  url(base) {
    return `${base.replace(/\/$/, "")}/chat/completions`;
  },

  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },

  answer(json) {
    if (typeof json !== "object" || json === null || !Array.isArray((json as { choices?: unknown }).choices))
      return { unusable: "the carrier's answer is not a chat completion" };
    return { answer: json as { choices: unknown[] } };
  },

  isEventStream(contentType) {
    return contentType.includes("text/event-stream");
  },

  streamDecoder() {
    return null; // OpenAI chat completion chunks are the canonical events
  },
};
