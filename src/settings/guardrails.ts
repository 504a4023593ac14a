import { between, count } from "./spec";

/** Bounds of the guardrails an account keeps (docs/teams.md). */
export const GUARDRAIL_SETTINGS = {
  GUARDRAILS_PER_ACCOUNT: between(1, 10_000, count(100, "most guardrails one account may have (`POST /guardrails` and the console answer 400 beyond)")),
  GUARDRAIL_LIST_ITEMS: between(
    1,
    1_000,
    count(
      100,
      "most entries in one guardrail list (`allowed_models`, `ignored_models`, `allowed_providers`, `ignored_providers`) and most `key_hashes` in one assignment call; 400 beyond",
    ),
  ),
};
