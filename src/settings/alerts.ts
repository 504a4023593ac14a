import { between, count } from "./spec";

/** Budget alerts (docs/teams.md, "Budget alerts"): how many thresholds and endpoints, how deliveries are tried and logged. */
export const ALERT_SETTINGS = {
  ALERT_THRESHOLDS_PER_RULE: between(
    1,
    100,
    count(
      10,
      "most thresholds a key (percents of its limit) or the account (balance amounts) may have; the console and `PUT /alerts/rules` refuse more with a 400",
    ),
  ),
  ALERT_ENDPOINTS_PER_ACCOUNT: between(1, 100, count(10, "most webhook endpoints an account may have for its alerts (a 400 past it)")),
  ALERT_DELIVERY_LOG_ROWS: between(
    1,
    10_000,
    count(200, "delivery attempts kept per account in the alerts' delivery log (D1 `alert_deliveries`): older ones are deleted as new ones are written"),
  ),
  ALERT_WEBHOOK_TIMEOUT_MS: between(
    100,
    30_000,
    count(10_000, "how long one webhook delivery waits for the endpoint's answer, ms; past it the attempt failed and is retried"),
  ),
  ALERT_RETRY_BASE_S: between(
    1,
    3_600,
    count(
      30,
      "the first retry of a failed webhook delivery waits this many seconds, each next one twice as long, at most an hour (8 attempts in all, then the dead-letter queue)",
    ),
  ),
};
