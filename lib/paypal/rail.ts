/**
 * The PayPal rail (issue 19): PayPal and Venmo payouts through PayPal's Payouts API, in both
 * environments, for a company whose PayPal settings are stored (a test company without them is
 * paid through the sandbox's PayPal, lib/paypal/simulator.ts, as its `paypal` reach says; in live,
 * PayPal and Venmo are then not offered). Payouts queue as
 * entries, a batch per company every five minutes goes to PayPal under sender_batch_id = the
 * batch's id, and outcomes come from PayPal when asked (polls, and verified webhooks): see
 * lib/paypal/jobs.ts.
 */
import type { WriteTx } from "../../db/writer.ts";
import type { BatchRail, NewBatchEntry } from "../rails/batch.ts";
import { paypalAdapter, paypalJobHandlers, type PaypalRailDeps } from "./jobs.ts";
import { PAYPAL_RAIL, queuePaypalEntry } from "./store.ts";

export type { PaypalRailDeps } from "./jobs.ts";

/** The PayPal rail of one environment's database. */
export function paypalRail(deps: PaypalRailDeps): BatchRail {
  return {
    shape: "batch",
    name: PAYPAL_RAIL,
    policy: deps.policy,
    configured: (tx: WriteTx, companyId: string) => deps.paypal.serves(tx, companyId),
    queue: (tx: WriteTx, entry: NewBatchEntry, now: number) => queuePaypalEntry(tx, entry, now),
    jobHandlers: (moves) => paypalJobHandlers(deps, moves),
    adapters: (moves) => [paypalAdapter(deps, moves)],
  };
}
