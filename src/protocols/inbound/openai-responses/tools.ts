import { isObj, refuse, type Obj } from "../request-checks";

/**
 * The caller's tools as carriers take them, and the way back. The Responses API has tools no carrier's
 * chat shape has: `namespace` tools (the caller's own function and custom tools grouped under a name, run
 * by the caller), `custom` tools (free-form text input, optionally following a grammar) and hosted tools
 * (run on OpenAI's servers); and tools declared inside the conversation (`additional_tools` items).
 *
 * - Every tool becomes a function tool, in order: the top-level `tools`, then each `additional_tools`
 *   item's in the order of `input` (every carrier takes tools only up front, so tools declared at a point
 *   of the conversation count from its start).
 * - A namespaced tool gets a name every carrier accepts (Anthropic's and OpenAI's `^[a-zA-Z0-9_-]{1,64}$`,
 *   and Gemini's, which must start with a letter or an underscore): `<namespace>__<name>`, cleaned, cut and
 *   numbered until unique. The map from carrier names back to the caller's tools is built from the request
 *   (never parsed back out of a name), and carried to the answer in the echo (`tool_names`).
 * - A custom tool becomes a function with one string argument, `input`; its grammar goes into the
 *   description, where the model sees it. Its calls come back as `custom_tool_call` items.
 * - Hosted tools no carrier here runs are dropped and named in the answer (`x-switchyard-dropped-tools`,
 *   the routing metadata's `params.dropped_tools`); with `provider.require_parameters: true` they are refused.
 */

/** What a carrier's tool name stands for: the caller's function or custom tool, and its namespace, if any. */
export type ToolOrigin = { kind: "function" | "custom"; name: string; namespace?: string };

/** The request's tools as carriers take them, the map back, and the hosted tools left out (their types). */
export type CarrierTools = { tools: Obj[]; names: ToolNames; dropped: string[] };

/** Tool types that run on OpenAI's servers: no carrier here runs them. */
const HOSTED = new Set([
  "web_search",
  "web_search_preview",
  "web_search_preview_2025_03_11",
  "web_search_2025_08_26",
  "file_search",
  "code_interpreter",
  "image_generation",
  "computer_use",
  "computer_use_preview",
  "mcp",
  "tool_search",
]);

/** A name every carrier accepts. */
const CARRIER_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
const MAX_NAME = 64;

/** The argument a custom tool's free-form input travels in. */
const INPUT = "input";

/**
 * The request's tools (top-level `tools`, then `additional_tools` items of `input`, in order) as chat
 * function tools, with the map back. `strict`: `provider.require_parameters: true`, which refuses a
 * hosted tool rather than dropping it. `functionTool` translates one function tool (its name is then
 * replaced by its carrier name).
 */
export function carrierTools(json: Obj, strict: boolean, functionTool: (t: Obj) => Obj): CarrierTools {
  const declared: Array<{ tool: unknown; at: string }> = [];
  if (json.tools !== undefined && json.tools !== null) {
    if (!Array.isArray(json.tools)) refuse("tools: must be an array.");
    (json.tools as unknown[]).forEach((tool, i) => declared.push({ tool, at: `tools.${i}` }));
  }
  if (Array.isArray(json.input))
    (json.input as unknown[]).forEach((item, i) => {
      if (!isObj(item) || item.type !== "additional_tools") return;
      if (!Array.isArray(item.tools)) refuse(`input.${i}.tools: an additional_tools item needs an array of tools.`);
      (item.tools as unknown[]).forEach((tool, j) => declared.push({ tool, at: `input.${i}.tools.${j}` }));
    });

  const leaves: Array<{ tool: Obj; at: string; namespace?: string }> = [];
  const dropped: string[] = [];
  for (const { tool, at } of declared) {
    if (!isObj(tool)) refuse(`${at}: must be an object.`);
    if (tool.type === "namespace") {
      if (typeof tool.name !== "string" || tool.name === "") refuse(`${at}.name: a namespace tool needs a name.`);
      if (!Array.isArray(tool.tools)) refuse(`${at}.tools: a namespace tool needs an array of tools.`);
      (tool.tools as unknown[]).forEach((inner, k) => {
        const innerAt = `${at}.tools.${k}`;
        if (!isObj(inner) || (inner.type !== "function" && inner.type !== "custom")) refuse(`${innerAt}: a namespace groups function and custom tools only.`);
        leaves.push({ tool: inner, at: innerAt, namespace: tool.name as string });
      });
    } else if (tool.type === "function" || tool.type === "custom") leaves.push({ tool, at });
    else if (typeof tool.type === "string" && HOSTED.has(tool.type)) {
      if (strict)
        refuse(
          `${at}: ${tool.type} tools run on OpenAI's servers, which this router does not call, and provider.require_parameters is true, so the request is refused rather than served without it. Leave the tool out (or require_parameters off: it is then dropped and named in the x-switchyard-dropped-tools header).`,
        );
      if (!dropped.includes(tool.type)) dropped.push(tool.type);
    } else
      refuse(
        `${at}: ${String(tool.type)} tools have no equivalent here (function, custom and namespace tools are accepted; hosted tools such as web_search are dropped).`,
      );
  }

  const names = new ToolNames();
  // Plain tools keep their names when every carrier accepts them; the rest are named after them.
  for (const leaf of leaves) if (typeof leaf.tool.name !== "string" || leaf.tool.name === "") refuse(`${leaf.at}.name: Field required.`);
  for (const leaf of leaves) if (!leaf.namespace) names.reserve(leaf.tool.name as string);
  const tools = leaves.map(({ tool, namespace }) => {
    const origin: ToolOrigin = { kind: tool.type === "custom" ? "custom" : "function", name: tool.name as string, ...(namespace ? { namespace } : {}) };
    const name = names.add(origin);
    if (tool.type === "custom") return customFunction(name, tool);
    const fn = functionTool(tool);
    return { ...fn, function: { ...(fn.function as Obj), name } };
  });
  return { tools, names, dropped };
}

/**
 * The carrier names of one request's tools: each of the caller's tools (namespace and name) gets one,
 * unique, and every name that is not the caller's own plain function name maps back to its tool.
 */
export class ToolNames {
  private readonly back = new Map<string, ToolOrigin>();
  private readonly taken = new Set<string>();
  private readonly given = new Map<string, string>();

  /** A plain tool's own name, kept when every carrier accepts it: no namespaced tool may take it. */
  reserve(name: string): void {
    if (CARRIER_NAME.test(name)) this.taken.add(name);
  }

  /** The carrier name of the caller's tool (the same one each time it is asked). */
  add(origin: ToolOrigin): string {
    const key = JSON.stringify([origin.namespace ?? null, origin.name]);
    const known = this.given.get(key);
    if (known !== undefined) return known;
    const name = !origin.namespace && CARRIER_NAME.test(origin.name) ? origin.name : this.fresh(origin);
    this.taken.add(name);
    this.given.set(key, name);
    if (name !== origin.name || origin.namespace || origin.kind === "custom") this.back.set(name, origin);
    return name;
  }

  /** The caller's tool a carrier's call names (a plain function when the request did not rename it). */
  origin(carrier: string): ToolOrigin {
    return this.back.get(carrier) ?? { kind: "function", name: carrier };
  }

  /** Whether any carrier name stands for something other than a plain function of that name. */
  get renames(): boolean {
    return this.back.size > 0;
  }

  /** `<namespace>__<name>` cleaned to what every carrier accepts, cut to length and numbered until unique. */
  private fresh(origin: ToolOrigin): string {
    const joined = (origin.namespace ? `${origin.namespace}__${origin.name}` : origin.name).replace(/[^a-zA-Z0-9_-]/g, "_");
    const base = (/^[a-zA-Z_]/.test(joined) ? joined : `_${joined}`).slice(0, MAX_NAME);
    if (!this.taken.has(base)) return base;
    for (let n = 2; ; n++) {
      const suffix = `_${n}`;
      const name = base.slice(0, MAX_NAME - suffix.length) + suffix;
      if (!this.taken.has(name)) return name;
    }
  }
}

/** A custom tool as a function of one string, its format (a grammar, if any) told in the description. */
function customFunction(name: string, t: Obj): Obj {
  const parts = typeof t.description === "string" && t.description !== "" ? [t.description] : [];
  const format = t.format;
  if (isObj(format) && format.type === "grammar") {
    const syntax = typeof format.syntax === "string" ? format.syntax : "given";
    parts.push(`The \`${INPUT}\` argument is raw text (not JSON) that must follow this ${syntax} grammar:\n${String(format.definition ?? "")}`);
  } else parts.push(`The \`${INPUT}\` argument is free-form raw text.`);
  return {
    type: "function",
    function: {
      name,
      description: parts.join("\n\n"),
      parameters: { type: "object", properties: { [INPUT]: { type: "string" } }, required: [INPUT] },
    },
  };
}

/** The carrier name of a call in the caller's history (a `function_call` with its namespace, a `custom_tool_call`); a tool no longer declared is named as it would have been. */
export function carrierName(names: ToolNames, kind: ToolOrigin["kind"], name: string, namespace: unknown): string {
  return names.add({ kind, name, ...(typeof namespace === "string" && namespace !== "" ? { namespace } : {}) });
}

/** A `custom_tool_call` of the caller's history as a chat tool call's arguments. */
export function customArguments(input: unknown): string {
  return JSON.stringify({ [INPUT]: typeof input === "string" ? input : "" });
}

/** A carrier's arguments for a custom tool as its free-form input: the `input` string (or the one string given), else the text as it came. */
export function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (isObj(parsed)) {
      if (typeof parsed[INPUT] === "string") return parsed[INPUT];
      const strings = Object.values(parsed).filter((v): v is string => typeof v === "string");
      if (strings.length === 1) return strings[0]!;
    }
  } catch {
    // Not JSON: the carrier sent the text itself.
  }
  return args;
}

/** The map an answer carries in its echo (set by the request's read); none when the request renamed nothing. */
export function echoedToolNames(echo: Obj): ToolNames | null {
  return echo.tool_names instanceof ToolNames && echo.tool_names.renames ? echo.tool_names : null;
}

/** A carrier's tool call as the caller's output item: `function_call` (with its `namespace`) or `custom_tool_call`. */
export function callerCallItem(id: string, callId: string, origin: ToolOrigin, args: string, status = "completed"): Obj {
  const ns = origin.namespace ? { namespace: origin.namespace } : {};
  if (origin.kind === "custom") return { type: "custom_tool_call", id, call_id: callId, ...ns, name: origin.name, input: customInput(args), status };
  return { type: "function_call", id, call_id: callId, ...ns, name: origin.name, arguments: args, status };
}

/** Output items with the carriers' function calls named back as the caller's tools. */
export function callerCallItems(items: Obj[], names: ToolNames | null): Obj[] {
  if (!names) return items;
  return items.map((item) =>
    item.type === "function_call" && typeof item.name === "string"
      ? callerCallItem(String(item.id), String(item.call_id), names.origin(item.name), String(item.arguments ?? ""), String(item.status ?? "completed"))
      : item,
  );
}

/** `tool_choice` naming one tool (`{type: "function", name, namespace?}` or `{type: "custom", name}`): the carrier's function. */
export function carrierToolChoice(choice: Obj, names: ToolNames): Obj | null {
  if ((choice.type !== "function" && choice.type !== "custom") || typeof choice.name !== "string") return null;
  return { type: "function", function: { name: carrierName(names, choice.type, choice.name, choice.namespace) } };
}
