import { app } from "./app";

export { LedgerObject } from "./ledger/ledger-object";
export { RateLimiterObject } from "./console/auth/rate-limiter-object";
export default app;
