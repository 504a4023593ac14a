import { env, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app";
import { ORIGIN } from "./helpers";

/**
 * A chat request served with extra Worker vars (e.g. small relay limits), through the app's own fetch
 * handler; `settled()` waits for its waitUntil work (the settle) to end.
 */
export async function chatWithVars(vars: Record<string, string>, key: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const ctx = createExecutionContext();
  // `signal` stands for the caller's connection: the harness does not turn a cancelled read into one.
  const req = new Request(ORIGIN + "/api/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  const res = await app.fetch(req, { ...env, ...vars }, ctx);
  return { res, settled: () => waitOnExecutionContext(ctx) };
}
