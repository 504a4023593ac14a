import type { ChatRequest } from "./chat-request";

/** Image parts of the request's messages (`type: "image_url"`, also `input_image`): each is billed as many tokens. */
export function countImages(body: ChatRequest): number {
  let n = 0;
  for (const m of body.messages) if (Array.isArray(m.content)) for (const part of m.content) if (part.type === "image_url" || part.type === "input_image") n++;
  return n;
}
