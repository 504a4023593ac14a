import { between, count } from "./spec";

/** Members of an account (docs/teams.md, "Members and roles"): invitations and the audit log. */
export const MEMBER_SETTINGS = {
  MEMBER_INVITE_TTL_HOURS: between(
    1,
    720,
    count(72, "an invitation to join an account (made on the console's Members page) works once, within this many hours"),
  ),
  MEMBERS_PER_ACCOUNT: between(
    1,
    10_000,
    count(100, "most members and open invitations one account may have together (the Members page refuses another invitation with a 400)"),
  ),
  AUDIT_LOG_KEEP_DAYS: between(1, 3_650, count(365, "the audit log keeps an administrative action this many days; the Cron Trigger deletes older entries")),
};
