/** The OpenAI/OpenRouter error body: `{"error":{"code":status,"message":…}}`, `code` equal to the HTTP status. */
export function errorBody(status: number, message: string, metadata?: Record<string, unknown>) {
  return { error: metadata ? { code: status, message, metadata } : { code: status, message } };
}
