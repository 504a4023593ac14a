import type { ChatRequest } from "../api/chat-request";

/** Rough token count of text (≈4 bytes per token), used only when a carrier reports no usage. */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(new TextEncoder().encode(text).byteLength / 4);
}

/** The text of every message, for prompt estimates. */
export function promptText(body: ChatRequest): string {
  let text = "";
  for (const m of body.messages) {
    if (typeof m.content === "string") text += m.content + "\n";
    else if (Array.isArray(m.content)) for (const part of m.content) if (typeof part.text === "string") text += part.text + "\n";
  }
  return text;
}
