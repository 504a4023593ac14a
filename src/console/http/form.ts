import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";

/** Console forms are small: anything larger is refused before it is read. */
export const FORM_MAX_BYTES = 16 * 1024;

export const formBodyLimit = bodyLimit({
  maxSize: FORM_MAX_BYTES,
  onError: (c) => c.text("Form too large", 413),
});

/** The submitted form's text fields (files and repeated fields are ignored). Parsed once per request. */
export async function readForm(c: Context): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === "string") out[k] = v;
  return out;
}
