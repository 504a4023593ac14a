import * as z from "zod";

// Budget alerts (docs/teams.md, "Budget alerts"): the events the account's ledger fires when a settle
// crosses a threshold, and the messages that carry them through the alerts queue to webhook endpoints.

/** Thresholds of one account, as its ledger keeps them: percents of each key's limit, and balance amounts. */
export type AlertRules = {
  /** Fire when the balance (credits − usage) falls below each of these, nano-USD. */
  balanceBelowNano: number[];
  /** Per key hash: fire when the key's usage in its limit's window reaches each of these percents of its limit. */
  keyPercents: Record<string, number[]>;
};

const usd = z.number().finite();
const base = { id: z.string().min(1).max(100), created: z.number().int().nonnegative(), account_id: z.string().min(1).max(100) };

export const alertEventSchema = z.discriminatedUnion("type", [
  z.object({
    ...base,
    type: z.literal("key.budget_threshold"),
    data: z.object({
      key_hash: z.string().max(100),
      key_name: z.string().max(200).nullable().optional(),
      key_label: z.string().max(200).nullable().optional(),
      threshold_percent: z.number().int(),
      limit_usd: usd,
      usage_usd: usd,
      limit_reset: z.enum(["daily", "weekly", "monthly"]).nullable(),
      window_start: z.string().max(10).nullable(),
    }),
  }),
  z.object({ ...base, type: z.literal("account.balance_below"), data: z.object({ threshold_usd: usd, balance_usd: usd }) }),
  z.object({ ...base, type: z.literal("test"), data: z.object({ message: z.string().max(500) }) }),
]);
/** One alert as its webhook body carries it (`created` in Unix seconds). */
export type AlertEvent = z.infer<typeof alertEventSchema>;

/** The alerts queue's messages: an event fired by a ledger (fanned out to the account's endpoints), or one delivery to one endpoint. */
export const alertMessageSchema = z.discriminatedUnion("kind", [
  z.object({ v: z.literal(1), kind: z.literal("event"), event: alertEventSchema }),
  z.object({ v: z.literal(1), kind: z.literal("deliver"), endpointId: z.string().min(1).max(100), event: alertEventSchema }),
]);
export type AlertMessage = z.infer<typeof alertMessageSchema>;

/** A fired alert as the ledger lists it: the event, and when it left for the queue (null: not yet). */
export type FiredAlert = { event: AlertEvent; sentAt: number | null };

/** The event "Send test event" delivers: signed and logged as any other, so a receiver can check its verification. */
export function testEvent(accountId: string, now: number): AlertEvent {
  return {
    id: "alrt_" + crypto.randomUUID().replaceAll("-", ""),
    created: Math.floor(now / 1000),
    account_id: accountId,
    type: "test",
    data: { message: "A test event from Switchyard: your endpoint receives and verifies budget alerts." },
  };
}
