import { describe, it, expect, vi, afterEach } from "vitest";
import { chat, newAccount, settled, user } from "./helpers";
import { simRequests, uniqueTag } from "./sim";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";

const catalog = Catalog.parse(catalogJson);
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const [FIRST, SECOND, THIRD] = catalog.endpoints(LLAMA);

afterEach(() => vi.restoreAllMocks());

describe("the body sent to carriers", () => {
  it("is serialized once per request, however many carriers are tried; each gets its own model id", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const content = `${"long prompt ".repeat(1000)} [sim carrier=${FIRST!.provider} status=503] [sim carrier=${SECOND!.provider} status=502] [sim tag=${tag}]`;
    const stringify = vi.spyOn(JSON, "stringify");
    const res = await chat(a.key, { model: LLAMA, temperature: 0.5, ...user(content) });
    const serializations = stringify.mock.calls.filter(([v]) => typeof v === "object" && v !== null && "messages" in v).length;
    stringify.mockRestore();
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const seen = await simRequests(tag);
    expect(seen.map((r) => [r.carrier, r.body.model])).toEqual([FIRST, SECOND, THIRD].map((e) => [e!.provider, e!.upstream_model]));
    for (const r of seen) expect(r.body).toEqual({ model: r.body.model, temperature: 0.5, messages: [{ role: "user", content }] });
    // The test's own request body is one of them.
    expect(serializations).toBe(2);
    await settled(a.accountId);
  });

  it("asks for usage on streams, keeping the caller's other stream options", async () => {
    const a = await newAccount(10);
    const tag = uniqueTag();
    const res = await chat(a.key, { model: LLAMA, stream: true, stream_options: { include_usage: false, extra: 1 }, ...user(`x [sim tokens=2 tag=${tag}]`) });
    await res.arrayBuffer();
    expect((await simRequests(tag))[0]!.body).toMatchObject({ model: FIRST!.upstream_model, stream: true, stream_options: { include_usage: true, extra: 1 } });
    await settled(a.accountId);
  });
});
