import { app } from "./app";

export { LedgerObject } from "./ledger/ledger-object";
export default app;
