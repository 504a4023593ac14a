import { describe, it, expect } from "vitest";
import { env } from "cloudflare:test";
import { admin, recorded } from "./helpers";
import { createKeyViaConsole, signUp, textOf } from "./console-helpers";
import { post } from "./preset-helpers";
import { simRequests, uniqueTag } from "./sim";

// The console's Presets page: list, create, edit (a new version), every version, delete; validated on the
// server (a problem named by its field, nothing saved), CSRF on every form, scoped to the session's account.
const LLAMA = "meta-llama/llama-3.1-8b-instruct";
const presetCount = async (accountId: string) =>
  (await env.DB.prepare("SELECT COUNT(*) AS n FROM presets WHERE account_id = ?").bind(accountId).first<{ n: number }>())!.n;

describe("/settings/presets", () => {
  it("creates a preset, saves a new version, shows every version; a key of the account uses the latest", async () => {
    const { client, accountId } = await signUp();
    const list = await client.page("/settings/presets");
    expect(list.status).toBe(200);
    expect(textOf(list.html)).toContain("You have no presets yet");
    expect(list.html).toContain('href="/settings/presets" aria-current="page"'); // in the navigation

    const created = await client.post(
      "/settings/presets",
      { slug: "writer", name: "Writer", description: "", config: JSON.stringify({ model: LLAMA, temperature: 0.4 }), system_prompt: "Write plainly." },
      { from: "/settings/presets" },
    );
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe("/settings/presets/writer?done=created");
    const page = await client.page(created.headers.get("location")!);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain("Preset created: version 1.");
    expect(textOf(page.html)).toContain("Save as version 2");

    const saved = await client.post("/settings/presets/writer", {
      name: "Writer",
      config: JSON.stringify({ model: LLAMA, temperature: 0.6 }),
      system_prompt: "",
    });
    expect(saved.status).toBe(303);
    const after = textOf((await client.page("/settings/presets/writer")).html);
    expect(after).toContain("Version 2");
    expect(after).toContain("Version 1");
    expect(after).toContain('"temperature": 0.6');
    expect(after).toContain('"temperature": 0.4');
    expect(textOf((await client.page("/settings/presets")).html)).toMatch(/writer Writer 2/);

    await admin(`/accounts/${accountId}/credits`, { usd: 1 });
    const { key } = await createKeyViaConsole(client, "preset user");
    const tag = uniqueTag();
    const res = await post("/chat/completions", key, { model: "@preset/writer", messages: [{ role: "user", content: `x [sim tokens=1 tag=${tag}]` }] });
    expect(res.status, await res.clone().text()).toBe(200);
    const [sent] = await simRequests(tag);
    expect(sent!.body.temperature).toBe(0.6);
    expect(sent!.body.messages).toHaveLength(1); // version 2 has no system prompt
    await recorded(accountId, 1);
    expect(textOf((await client.page("/activity")).html)).toContain(`${LLAMA} chat @preset/writer@2`); // the activity names preset and version
  });

  it("refuses a bad form with the problem named by its field, and saves nothing", async () => {
    const { client, accountId } = await signUp();
    const cases: [Record<string, string>, RegExp][] = [
      [{ slug: "ok", config: "{not json" }, /The config is not valid JSON/],
      [{ slug: "ok", config: JSON.stringify({ temperature: 5 }) }, /config\.temperature: must be at most 2/],
      [{ slug: "ok", config: JSON.stringify({ model: LLAMA, colour: "red" }) }, /config: Unrecognized key: "colour"/],
      [{ slug: "Not Ok", config: "{}" }, /A slug is 1 to 64 lowercase letters/],
    ];
    for (const [fields, message] of cases) {
      const res = await client.post("/settings/presets", fields, { from: "/settings/presets" });
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(textOf(html)).toMatch(message);
      expect(html).toContain('aria-invalid="true"');
    }
    expect(await presetCount(accountId)).toBe(0);
    expect((await client.post("/settings/presets", { slug: "dup", config: "{}" }, { from: "/settings/presets" })).status).toBe(303);
    const dup = await client.post("/settings/presets", { slug: "dup", config: "{}" }, { from: "/settings/presets" });
    expect(dup.status).toBe(400);
    expect(textOf(await dup.text())).toContain("You have a preset “dup” already");
    const badEdit = await client.post("/settings/presets/dup", { config: JSON.stringify({ top_k: 0.5 }) });
    expect(badEdit.status).toBe(400);
    expect(textOf(await badEdit.text())).toMatch(/config\.top_k/);
    const versions = await env.DB.prepare("SELECT COUNT(*) AS n FROM preset_versions v JOIN presets p ON p.id = v.preset_id WHERE p.account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(versions!.n).toBe(1);
  });

  it("every form needs the session's CSRF token; another account's preset is a 404 that changes nothing; delete removes it", async () => {
    const owner = await signUp();
    expect((await owner.client.post("/settings/presets", { slug: "team", config: "{}" }, { from: "/settings/presets" })).status).toBe(303);
    for (const [path, fields] of [
      ["/settings/presets", { slug: "forged", config: "{}" }],
      ["/settings/presets/team", { config: JSON.stringify({ temperature: 1 }) }],
      ["/settings/presets/team/delete", {}],
    ] as const)
      expect((await owner.client.post(path, fields, { csrf: null })).status, path).toBe(403);
    expect(await presetCount(owner.accountId)).toBe(1);

    const other = await signUp();
    expect((await other.client.page("/settings/presets/team")).status).toBe(404);
    expect((await other.client.post("/settings/presets/team", { config: "{}" }, { from: "/settings/presets" })).status).toBe(404);
    expect((await other.client.post("/settings/presets/team/delete", {}, { from: "/settings/presets" })).status).toBe(404);
    const row = await env.DB.prepare("SELECT latest_version FROM presets WHERE account_id = ? AND slug = 'team'")
      .bind(owner.accountId)
      .first<{ latest_version: number }>();
    expect(row!.latest_version).toBe(1);

    const deleted = await owner.client.post("/settings/presets/team/delete", {}, { from: "/settings/presets/team" });
    expect(deleted.status).toBe(303);
    expect(textOf((await owner.client.page("/settings/presets?done=deleted")).html)).toContain("Preset deleted.");
    expect((await owner.client.page("/settings/presets/team")).status).toBe(404);
    expect(await presetCount(owner.accountId)).toBe(0);
  });
});
