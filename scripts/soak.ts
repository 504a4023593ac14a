// `npm run soak [-- --requests N --concurrency C --seconds S --url URL]`: mixed load against 127.0.0.1.
// Without --url it starts its own service (the simulator and the deploy bundle in Miniflare: scripts/worker-bundle.ts) and stops it after.
import { parseArgs } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalService, freePort, DEV_ADMIN_TOKEN } from "./local-service.ts";
import { AdminClient } from "./admin-client.ts";
import { runSoak } from "./soak-run.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "32" },
    seconds: { type: "string", default: "600" },
    url: { type: "string" },
  },
});

const state = values.url ? undefined : mkdtempSync(join(tmpdir(), "switchyard-soak-"));
const service = state
  ? await startLocalService({
      port: await freePort(),
      persistTo: state,
      quiet: !process.env.SOAK_VERBOSE,
      vars: { CARRIER_TIMEOUT_MS: "1000" },
      runtime: "bundle",
    })
  : undefined;
const url = values.url ?? service!.url;
const stop = async () => {
  await service?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
};
process.on("SIGINT", () => void stop().then(() => process.exit(130)));

try {
  const report = await runSoak({
    url,
    admin: new AdminClient(url, process.env.SWITCHYARD_ADMIN_TOKEN ?? DEV_ADMIN_TOKEN),
    requests: Number(values.requests),
    concurrency: Number(values.concurrency),
    accounts: 3,
    timeLimitMs: Number(values.seconds) * 1000,
  });
  console.log(JSON.stringify(report, null, 2));
  process.exitCode = report.invariant_held && report.unexpected.length === 0 && report.unsent === 0 ? 0 : 1;
} finally {
  await stop();
}
