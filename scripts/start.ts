// `npm start`: the whole service on http://127.0.0.1:8787, offline, with a demo account and key.
import { startLocalService, DEV_ADMIN_TOKEN } from "./local-service.ts";
import { AdminClient } from "./admin-client.ts";
import { ensureDemoAccount, DEMO_KEY_FILE } from "./demo-account.ts";

const port = Number(process.env.PORT ?? 8787);
const service = await startLocalService({ port, simulatorPort: Number(process.env.SIM_PORT ?? 8788) });
const { key, created } = await ensureDemoAccount(new AdminClient(service.url, DEV_ADMIN_TOKEN), service.url);

console.log(`
Switchyard is running.
  Web console    ${service.url}/  (sign up there; test-card payments are on locally)
  API base URL   ${service.url}/api/v1
  Carriers       simulated at ${service.simulator.url}
  Demo key       ${key}  (${created ? "new, " : ""}saved in ${DEMO_KEY_FILE})
  Admin          npm run admin -- <command>   (local admin token: ${DEV_ADMIN_TOKEN})

Try it:
  curl ${service.url}/api/v1/chat/completions -H "Authorization: Bearer $(cat ${DEMO_KEY_FILE})" \\
    -H "Content-Type: application/json" -d '{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"Hello"}]}'
`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    service.stop().then(() => process.exit(0));
  });
