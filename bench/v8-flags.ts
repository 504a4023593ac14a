// V8 flags for the workerd processes a bench script starts from now on (diagnostics only: production
// cannot set them). Miniflare has no option for them and workerd reads them only from its config, so
// Miniflare is pointed (MINIFLARE_WORKERD_PATH) at a small bash wrapper that execs the real workerd — same
// pid, same arguments and control descriptor — with its config on stdin passed through
// bench/v8-flags-patch.mjs, which sets Config.v8Flags.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export function useV8Flags(flags: readonly string[], dir: string): void {
  for (const flag of flags) if (!/^--[a-z0-9-]+(=[\w.,-]+)?$/.test(flag)) throw new Error(`not a V8 flag: ${flag}`);
  // The workerd Miniflare itself runs (its own dependency), not whichever one another package hoisted to the root.
  const fromMiniflare = createRequire(createRequire(import.meta.url).resolve("miniflare"));
  const workerd = (fromMiniflare("workerd") as { default: string }).default;
  const patch = fileURLToPath(new URL("./v8-flags-patch.mjs", import.meta.url));
  mkdirSync(dir, { recursive: true });
  const wrapper = join(dir, "workerd-with-v8-flags");
  const args = [process.execPath, patch, ...flags].map(quote).join(" ");
  // Line-buffered where stdbuf exists, so a trace arrives as it is printed, not a pipe buffer later.
  const run = `$(command -v stdbuf >/dev/null && echo "stdbuf -oL") ${quote(workerd)}`;
  writeFileSync(wrapper, `#!/usr/bin/env bash\nexec ${run} "$@" < <(${args})\n`);
  chmodSync(wrapper, 0o755);
  process.env.MINIFLARE_WORKERD_PATH = wrapper;
}
