import type { D1Migration } from "cloudflare:test";
import type { SettingVars } from "../../src/env";

// The bindings come from worker-configuration.d.ts (`wrangler types`); tests add their settings and migrations.
declare global {
  namespace Cloudflare {
    interface Env extends SettingVars {
      TEST_MIGRATIONS: D1Migration[];
      MIGRATION_DB: D1Database;
      /** The local OTLP receiver (test/global-simulator.ts): where observability tests point their destinations. */
      OTLP_TEST_URL: string;
    }
  }
}
