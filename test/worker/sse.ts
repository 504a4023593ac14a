/** Reads a whole SSE response into its `data:` payloads (parsed JSON, and the literal "[DONE]"). */
export async function readSse(res: Response): Promise<Array<Record<string, any> | "[DONE]">> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((e) => e.startsWith("data: "))
    .map((e) => (e === "data: [DONE]" ? "[DONE]" : (JSON.parse(e.slice(6)) as Record<string, any>)));
}
