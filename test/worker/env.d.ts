import type { D1Migration } from "cloudflare:test";
import type { Settings } from "../../src/env";

// The bindings come from worker-configuration.d.ts (`wrangler types`); tests add their settings and migrations.
declare global {
  namespace Cloudflare {
    interface Env extends Settings {
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}
