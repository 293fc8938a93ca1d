/**
 * The PayPal rail's rules, pure: what a payout item's state (as PayPal reports it when asked, never
 * as a webhook body says) does to its payout, when open batches are asked again, how a batch is
 * timed, and how old a batch may be and still be sent again.
 */
import { decimalAmount } from "../platform/money.ts";

/** Items wait for a batch this long at most: a company's cutoff runs every five minutes. */
export const PAYPAL_BATCH_INTERVAL_MS = 5 * 60_000;

/**
 * PayPal remembers a sender_batch_id for 30 days: a batch whose first transmission started longer
 * ago than that is never sent again, since PayPal could take it as new and pay twice.
 */
export const PAYPAL_RESUBMIT_AGE_MAX_MS = 30 * 86_400_000;

/** Delays between the polls of an open batch, the last repeated until every item is settled. */
export const PAYPAL_POLL_DELAYS_MS: readonly number[] = [
  60_000,
  5 * 60_000,
  15 * 60_000,
  3_600_000,
  6 * 3_600_000,
  86_400_000,
];

/** After the insurer's PayPal balance fell short, its item is sent again this much later. */
export const PAYPAL_FUNDS_RETRY_MS = 3_600_000;

/** PayPal's error of a payout the insurer's PayPal balance could not cover. */
export const INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS";

/** The failure reason of an unclaimed item an operator had PayPal cancel. */
export const UNCLAIMED_CANCELED = "unclaimed_canceled";
/** The failure reason of an item nobody claimed in 30 days (PayPal returned the money). */
export const UNCLAIMED_RETURNED = "unclaimed_returned";
/**
 * The failure reason of every item of a batch PayPal denied: "Your payout requests were denied, so
 * they were not processed" (developer.paypal.com, Payouts API, batch_status DENIED).
 */
export const PAYPAL_BATCH_DENIED = "paypal_batch_denied";

/**
 * A PayPal batch goes within this long of its cutoff: one not sent by then (its release not
 * approved, PayPal refusing it) is voided and its items go in the next cutoff's batch.
 */
export const PAYPAL_TRANSMIT_WINDOW_MS = 86_400_000;

/** The next cutoff time at or after `now`: the next five-minute boundary. */
export function nextPaypalCutoff(now: number): number {
  return Math.ceil(now / PAYPAL_BATCH_INTERVAL_MS) * PAYPAL_BATCH_INTERVAL_MS;
}

/** The cutoff at or after `now`, with its window. */
export function paypalCutoff(now: number): { at: number; windowEndsAt: number } {
  const at = nextPaypalCutoff(now);
  return { at, windowEndsAt: at + PAYPAL_TRANSMIT_WINDOW_MS };
}

/** How long after its `attempt`-th poll (1 or more) an open batch is polled again. */
export function pollDelayMs(attempt: number): number {
  const index = Math.min(Math.max(attempt, 1), PAYPAL_POLL_DELAYS_MS.length) - 1;
  return PAYPAL_POLL_DELAYS_MS[index];
}

/** Where our entry of the item stands: sent and waiting, or settled one way or the other. */
export type EntryState = "sent" | "completed" | "failed" | "other";

/** What an item's state does. */
export type ItemAction =
  | { readonly kind: "complete" }
  | { readonly kind: "fail"; readonly reason: string }
  /** Completed stays terminal: the money back is posted, the payout stays completed. */
  | { readonly kind: "late_return" }
  /** Not the payee's failure: an operator is alerted and the item sent again. */
  | { readonly kind: "retry_for_funds" }
  | { readonly kind: "wait" };

/** States PayPal may still move (the item is neither paid nor given up). */
const WAITING = new Set(["NEW", "PENDING", "HELD", "ONHOLD", "UNCLAIMED"]);
/**
 * States that fail the payout with PayPal's error name. BLOCKED is final: PayPal documents no move
 * out of it (transaction_status: "PayPal blocks the payout request"; no webhook follows
 * PAYMENT.PAYOUTS-ITEM.BLOCKED, and only an UNCLAIMED item can be cancelled), unlike ONHOLD, which
 * PayPal reviews and which its webhook PAYMENT.PAYOUTS-ITEM.HELD announces as temporary.
 */
const FAILING = new Set(["FAILED", "BLOCKED", "DENIED"]);

/**
 * The table: SUCCESS completes; UNCLAIMED waits (the payee may still claim it for 30
 * days, so a re-offer now could pay twice); RETURNED fails; FAILED, BLOCKED and DENIED fail with
 * PayPal's error name, but INSUFFICIENT_FUNDS (the insurer's balance) is retried; HELD, PENDING,
 * ONHOLD wait; REFUNDED after SUCCESS is a late return. Anything about an entry already settled
 * the same way is nothing new.
 */
export function itemAction(
  status: string,
  errorName: string | null,
  entry: EntryState,
): ItemAction {
  if (entry === "completed") {
    return status === "REFUNDED" ? { kind: "late_return" } : { kind: "wait" };
  }
  if (entry !== "sent") return { kind: "wait" };
  if (status === "SUCCESS") return { kind: "complete" };
  if (WAITING.has(status)) return { kind: "wait" };
  if (status === "RETURNED") return { kind: "fail", reason: UNCLAIMED_RETURNED };
  if (FAILING.has(status)) {
    if (errorName === INSUFFICIENT_FUNDS) return { kind: "retry_for_funds" };
    return { kind: "fail", reason: errorName ?? status.toLowerCase() };
  }
  // REFUNDED or REVERSED before we saw SUCCESS: the payee did not keep the money.
  return { kind: "fail", reason: errorName ?? status.toLowerCase() };
}

/**
 * What a batch PayPal denied does to one of its items, whatever the item says of itself (PayPal
 * reports them FAILED with no error of their own): none was paid, so an entry still sent fails.
 */
export function deniedItemAction(entry: EntryState): ItemAction {
  return entry === "sent" ? { kind: "fail", reason: PAYPAL_BATCH_DENIED } : { kind: "wait" };
}

/** Whether an item may still change in a way polling must see (a refund comes by webhook). */
export function itemOpen(status: string | null): boolean {
  return status === null || WAITING.has(status);
}

/** PayPal's amount value of cents: 123450 → "1234.50". */
export function paypalAmountValue(cents: number): string {
  return decimalAmount(cents, "a PayPal item amount");
}
