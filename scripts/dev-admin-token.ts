// Its own module so that `npm run admin` (which needs only this) does not load Miniflare and the simulators with local-service.ts.
/** The admin token of a local service (`npm start`, the tests); never a deployment's: `cloudflare:setup` makes that one. */
export const DEV_ADMIN_TOKEN = "dev-admin-token";
