// Stripe's request encoding: application/x-www-form-urlencoded with bracket notation, as the SDKs
// send it (`line_items[0][price_data][unit_amount]=500`, `metadata[k]=v`, `expand[]=x`).
// Parsed into nested hashes; arrays stay hashes keyed "0", "1", … until a reader asks for a list.

export type FormValue = string | FormValue[] | Form;
export type Form = { [key: string]: FormValue };

export class FormError extends Error {}

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    throw new FormError(`Invalid URL encoding: ${part}`);
  }
}

/** A null-prototype hash, so keys such as `__proto__` are plain data. */
function hash(): Form {
  return Object.create(null) as Form;
}

function setPath(root: Form, name: string, path: string[], value: string): void {
  let node: Form | FormValue[] = root;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i]!;
    const last = i === path.length - 1;
    const nextIsAppend = path[i + 1] === "";
    if (Array.isArray(node)) {
      // `a[]` appends: the segment after an append always starts a new element.
      if (seg !== "") throw new FormError(`Invalid array: ${name}`);
      if (last) node.push(value);
      else {
        const child: Form | FormValue[] = nextIsAppend ? [] : hash();
        node.push(child);
        node = child;
      }
      continue;
    }
    if (seg === "") throw new FormError(`Invalid hash: ${name}`);
    const existing: FormValue | undefined = node[seg];
    if (last) {
      if (existing !== undefined && typeof existing !== "string") throw new FormError(`Invalid hash: ${name}`);
      node[seg] = value;
      return;
    }
    if (existing === undefined) {
      const child: Form | FormValue[] = nextIsAppend ? [] : hash();
      node[seg] = child;
      node = child;
    } else if (typeof existing === "string") throw new FormError(`Invalid hash: ${name}`);
    else node = existing;
  }
}

/** Parses a form body or query string; throws FormError on a malformed one. Later duplicates win. */
export function parseForm(text: string): Form {
  const root = hash();
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? "" : decode(pair.slice(eq + 1));
    const m = KEY.exec(name);
    if (!m) throw new FormError(`Invalid parameter name: ${name}`);
    const segments = m[2] ? m[2].slice(1, -1).split("][") : [];
    setPath(root, name, [m[1]!, ...segments], value);
  }
  return root;
}

/** The same params in any order give the same text: what idempotency compares. */
export function canonical(value: FormValue): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k]!)}`).join(",")}}`;
}
