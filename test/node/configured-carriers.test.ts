import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import catalogJson from "../../catalog.json";
import { Catalog } from "../../src/catalog/catalog";
import { carrierSecretName } from "../../src/catalog/carrier-secret";
import { configuredCarriers, realStripe } from "../../scripts/dev-vars.ts";
import { startServiceFixture, newAccount, postChat, waitForGeneration, type ServiceFixture } from "./service-fixture";

// Only carriers with a key serve: a model none of whose carriers is configured is not listed (API, console,
// endpoints) and a request for it is a 503 that charges nothing; an unconfigured carrier is never tried.
const CONFIGURED = ["groq", "anthropic"];
const catalog = Catalog.parse(catalogJson, (slug) => CONFIGURED.includes(slug));

describe("the catalog with some carriers configured", () => {
  it("lists the models some configured carrier serves, each with only those carriers; knows the others", () => {
    const served = catalogJson.models.filter((m) => m.endpoints.some((e) => CONFIGURED.includes(e.provider))).map((m) => m.id);
    expect(catalog.models.map((m) => m.id)).toEqual(served);
    expect(served).toContain("anthropic/claude-haiku-4.5");
    expect(served).not.toContain("google/gemini-2.5-flash");
    for (const id of served) for (const e of catalog.endpoints(id)) expect(CONFIGURED).toContain(e.provider);
    expect(catalog.endpoints("google/gemini-2.5-flash")).toEqual([]);
    expect(catalog.model("google/gemini-2.5-flash")).toBeDefined();
  });

  it(".dev.vars.example names every carrier's key, and configuredCarriers reads the ones set", () => {
    const example = readFileSync(".dev.vars.example", "utf8");
    const keys = [...example.matchAll(/^(CARRIER_KEY_[A-Z0-9_]+)=$/gm)].map((m) => m[1]);
    expect(keys).toEqual(catalogJson.providers.map((p) => carrierSecretName(p.slug)));
    const dir = mkdtempSync(join(tmpdir(), "dev-vars-"));
    try {
      const file = join(dir, ".dev.vars");
      writeFileSync(file, `${example}\nCARRIER_KEY_GROQ=gsk_x\nCARRIER_KEY_ANTHROPIC="sk-ant-y"\nCARRIER_KEY_OPENAI=\n`);
      expect(configuredCarriers(file, "catalog.json")).toEqual(["groq", "anthropic"]);
      expect(configuredCarriers(join(dir, "missing"), "catalog.json")).toEqual([]);
      // Stripe: real only with both of its secrets set; the example's empty lines leave the simulator.
      expect(realStripe(file)).toBe(false);
      writeFileSync(file, `${example}\nSTRIPE_SECRET_KEY=sk_test_x\n`);
      expect(realStripe(file)).toBe(false);
      writeFileSync(file, `${example}\nSTRIPE_SECRET_KEY=sk_test_x\nSTRIPE_WEBHOOK_SECRET="whsec_y"\n`);
      expect(realStripe(file)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a service with only Groq and Anthropic keys", () => {
  let f: ServiceFixture;
  beforeAll(async () => {
    f = await startServiceFixture("configured", { carrierKeys: Object.fromEntries(CONFIGURED.map((s) => [carrierSecretName(s), `sim-key-${s}`])) });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it("GET /models, the endpoints and the console list only what a configured carrier serves", async () => {
    const models = (await (await fetch(`${f.url}/api/v1/models`)).json()) as { data: Array<{ id: string }> };
    const listed = models.data.map((m) => m.id);
    expect(listed).toContain("anthropic/claude-haiku-4.5");
    expect(listed).toContain("meta-llama/llama-3.1-8b-instruct");
    expect(listed).not.toContain("google/gemini-2.5-flash");
    expect((await fetch(`${f.url}/api/v1/models/google/gemini-2.5-flash/endpoints`)).status).toBe(404);
    const llama = (await (await fetch(`${f.url}/api/v1/models/meta-llama/llama-3.1-8b-instruct/endpoints`)).json()) as {
      data: { endpoints: Array<{ tag: string }> };
    };
    expect(llama.data.endpoints.map((e) => e.tag)).toEqual(["groq"]);
    const page = await (await fetch(`${f.url}/models`)).text();
    expect(page).toContain("anthropic/claude-haiku-4.5");
    expect(page).not.toContain("google/gemini-2.5-flash");
    expect((await fetch(`${f.url}/models/google/gemini-2.5-flash`)).status).toBe(404);
  });

  it("a request for a model no configured carrier serves: 503, nothing charged, recorded at cost 0", async () => {
    const account = await newAccount(f, 1);
    const res = await postChat(f, account.key, { model: "google/gemini-2.5-flash", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/No carrier can serve model google\/gemini-2\.5-flash now/);
    const record = (await (await waitForGeneration(f, account.key, res.headers.get("x-generation-id")!)).json()) as { data: Record<string, unknown> };
    expect(record.data).toMatchObject({ status: 503, total_cost: 0, provider_responses: null }); // no carrier was tried
    const served = await postChat(f, account.key, { model: "meta-llama/llama-3.1-8b-instruct", messages: [{ role: "user", content: "hi [sim tokens=2]" }] });
    expect(served.status).toBe(200);
    expect(((await served.json()) as { provider: string }).provider).toBe("Groq");
  });
});
