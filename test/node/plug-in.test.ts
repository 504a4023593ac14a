import { describe, it, expect } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { root, sourceFiles } from "./source-files";
import { CALLER_PROTOCOLS, INBOUND_APIS, OWN_PATH_APIS } from "../../src/protocols/inbound";
import { CARRIER_PROTOCOLS, CARRIER_PROTOCOL_NAMES } from "../../src/protocols/outbound";
import { Catalog, unregisteredProtocols } from "../../src/catalog/catalog";
import { catalogSchema } from "../../src/catalog/schema";
import catalogJson from "../../catalog.json";

// A protocol plugs in as its folder plus one registry line (docs/protocols.md, Adding an inbound API and
// Adding a carrier): every folder under src/protocols/inbound|outbound is a registered protocol, and
// nothing else in src/ names one — no route file, no enum, no branch on its name.

const kinds = { inbound: join(root, "src/protocols/inbound"), outbound: join(root, "src/protocols/outbound") };

/** The files allowed to name protocols: the registries. */
const NAMING_FILES = ["src/protocols/inbound/index.ts", "src/protocols/outbound/index.ts"];

const folders = (dir: string) => readdirSync(dir).filter((n) => statSync(join(dir, n)).isDirectory());

/** The folders a registry imports (`import … from "./<folder>"`). */
function registered(dir: string): string[] {
  const text = readFileSync(join(dir, "index.ts"), "utf8");
  return [...text.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"\.\/([a-z0-9-]+)";/gm)].map((m) => m[1]!).filter((f) => folders(dir).includes(f));
}

/**
 * The protocols' names, by kind. Embeddings' registry name is left out: "embeddings" is also a modality and a
 * request path's name (its folder and registry line are held like the others).
 */
const names = {
  inbound: Object.keys(CALLER_PROTOCOLS),
  outbound: Object.keys(CARRIER_PROTOCOLS),
};

/** The code of a file without its comments (which may name a protocol to explain a catalog value). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|\s)\/\/.*$/gm, "$1");

/**
 * Where `file` names a protocol outside its own folder: a quoted string in its code that is a protocol's
 * name (the API names, `chat`, `messages`, `embeddings`, are also field and modality names: the registry's
 * `api` types hold those), or an import from a protocol's folder.
 */
function namings(file: string, source: string): string[] {
  const text = code(source);
  const rel = relative(root, file);
  if (NAMING_FILES.includes(rel)) return [];
  const own = /^src\/protocols\/(inbound|outbound)\/([^/]+)\//.exec(rel);
  const found: string[] = [];
  for (const name of new Set([...names.inbound, ...names.outbound])) {
    if (own && registered(kinds[own[1] as keyof typeof kinds]).includes(own[2]!)) {
      // Inside a protocol's folder: its own name, and any name of the other kind (an inbound protocol may share a carrier's name), are its own business.
      const kind = own[1] as keyof typeof names;
      if (!names[kind].includes(name) || protocolFolder(kind, name) === own[2]) continue;
    }
    if (new RegExp(`["'\`]${name}["'\`]`).test(text)) found.push(`${rel} names ${name}`);
  }
  for (const m of text.matchAll(/from\s+["']([^"']+)["']/g)) {
    const target = relative(root, join(file, "..", m[1]!));
    const into = /^src\/protocols\/(inbound|outbound)\/([^/]+)(\/|$)/.exec(target);
    if (into && folders(kinds[into[1] as keyof typeof kinds]).includes(into[2]!) && !(own && own[1] === into[1] && own[2] === into[2]))
      found.push(`${rel} imports ${target}`);
  }
  return found;
}

/** The folder that holds the protocol `name` of a kind: the registry's import of it. */
function protocolFolder(kind: keyof typeof kinds, name: string): string | undefined {
  const text = readFileSync(join(kinds[kind], "index.ts"), "utf8");
  const entry = new RegExp(`^\\s*"?${name}"?(?::\\s*([A-Za-z]+))?,`, "m").exec(text);
  const symbol = entry?.[1] ?? name;
  return new RegExp(`^import\\s*\\{\\s*${symbol}\\s*\\}\\s*from\\s*"\\./([a-z0-9-]+)";`, "m").exec(text)?.[1];
}

describe("a protocol is its folder plus one registry line", () => {
  it.each(Object.keys(kinds) as Array<keyof typeof kinds>)(
    "every folder under src/protocols/%s is a protocol its registry imports, and every protocol has its folder",
    (kind) => {
      const dir = kinds[kind];
      expect(registered(dir).sort()).toEqual(folders(dir).sort());
      for (const name of names[kind]) expect(protocolFolder(kind, name), `${kind} ${name}`).toBeDefined();
    },
  );

  it("each registry entry is the protocol of its name, and each inbound API records a name of its own", () => {
    for (const [name, p] of Object.entries(CARRIER_PROTOCOLS)) expect(p.name).toBe(name);
    for (const [name, p] of Object.entries({ ...CALLER_PROTOCOLS, ...OWN_PATH_APIS })) expect(p.name).toBe(name);
    expect(protocolFolder("inbound", "embeddings")).toBe("embeddings");
    const apis = INBOUND_APIS.map((a) => a.api);
    expect(new Set(apis).size).toBe(apis.length);
    expect(apis.sort()).toEqual(["chat", "embeddings", "messages", "responses"]);
  });

  it("the catalog names only registered carrier protocols, and a catalog that names another is refused", () => {
    expect(unregisteredProtocols(catalogSchema.parse(catalogJson), CARRIER_PROTOCOL_NAMES)).toEqual([]);
    const json = structuredClone(catalogJson) as { providers: Array<{ protocol?: string }> };
    json.providers[0]!.protocol = "carrier-pigeon";
    expect(unregisteredProtocols(catalogSchema.parse(json), CARRIER_PROTOCOL_NAMES)).toEqual([{ path: ["providers", 0, "protocol"], name: "carrier-pigeon" }]);
    expect(() => Catalog.parse(json, undefined, CARRIER_PROTOCOL_NAMES)).toThrow(
      /providers\.0\.protocol names the carrier protocol "carrier-pigeon", which is not registered/,
    );
    expect([...CARRIER_PROTOCOL_NAMES].sort()).toEqual(Object.keys(CARRIER_PROTOCOLS).sort());
  });

  it("every inbound API's routes are its own: no two APIs declare one path", () => {
    const paths = INBOUND_APIS.flatMap((a) => a.routes.map((r) => `${r.method} ${r.path}`));
    expect(new Set(paths).size).toBe(paths.length);
    // The first route is the API's main one, its first segment the API's own (a wrong path holding it is answered in its style).
    const segments = INBOUND_APIS.map((a) => a.routes[0]!.path.split("/")[1]);
    expect(new Set(segments).size).toBe(segments.length);
  });

  it("nothing in src/ outside a protocol's folder and the registries names a protocol", () => {
    const found = sourceFiles(join(root, "src")).flatMap((f) => namings(f, readFileSync(f, "utf8")));
    expect(found).toEqual([]);
  });

  it("catches a protocol named outside its folder (a route file, a branch, an import)", () => {
    const at = (path: string) => join(root, path);
    expect(namings(at("src/api/chat-routes.ts"), `serveRequest(c, CALLER_PROTOCOLS["openai-chat"])`)).toEqual(["src/api/chat-routes.ts names openai-chat"]);
    expect(namings(at("src/api/present-catalog.ts"), `e.providerEntry.protocol !== 'anthropic-messages'`)).toEqual([
      "src/api/present-catalog.ts names anthropic-messages",
    ]);
    expect(namings(at("src/api/error-body.ts"), `import { openAiChat } from "../protocols/inbound/openai-chat";`)).toEqual([
      "src/api/error-body.ts imports src/protocols/inbound/openai-chat",
    ]);
    // One protocol's folder reaching into another's.
    expect(namings(at("src/protocols/outbound/gemini/index.ts"), `import { x } from "../anthropic/answer";`)).toEqual([
      "src/protocols/outbound/gemini/index.ts imports src/protocols/outbound/anthropic/answer",
    ]);
    // Its own name inside its own folder is its business.
    expect(namings(at("src/protocols/outbound/gemini/index.ts"), `name: "gemini"`)).toEqual([]);
    expect(namings(at("src/protocols/outbound/index.ts"), `"gemini": gemini`)).toEqual([]);
  });
});
