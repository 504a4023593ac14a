import { count } from "./spec";

/** Observability (docs/observability.md): destinations per account, each export's time, the delivery log kept. */
export const OBSERVABILITY_SETTINGS = {
  OBSERVABILITY_DESTINATIONS_PER_ACCOUNT: count(
    5,
    "most observability destinations one account may have (`POST /observability/destinations` refuses another with a 400)",
  ),
  OBSERVABILITY_EXPORT_TIMEOUT_MS: count(10_000, "how long one export to a destination may take, ms; longer is a failed attempt, retried by the traces queue"),
  OBSERVABILITY_DELIVERY_LOG_ROWS: count(200, "delivery attempts kept per account in the delivery log (the newest; older rows are deleted as new ones come)"),
};
