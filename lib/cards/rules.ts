/**
 * The virtual card rail's rules, pure: the single-use card a payout's submission asks Lithic for
 * (spend limit = the net amount, an expiry, merchant category limits), what a card's state as
 * Lithic reports it does to its payout, and what comes back of a card at its close.
 *
 * | Lithic card state                     | payout                                               |
 * | ------------------------------------- | ---------------------------------------------------- |
 * | OPEN at issue                         | completed (issued, its spend limit funded)           |
 * | PAUSED, PENDING_* at issue            | sent; completed once Lithic reports it OPEN          |
 * | refused at issue (4xx)                | failed `card_not_issued`, offered again              |
 * | OPEN past its expiry                  | stays completed; the card is closed                  |
 * | CLOSED, no transaction pending        | stays completed; limit − settled spend comes back    |
 * |                                       | as a late return (`card_unspent`) when above zero    |
 */

const DAY_MS = 86_400_000;

/** The late return reason of a card's unspent balance reclaimed at its close. */
export const CARD_UNSPENT = "card_unspent";

/** What a submission asks Lithic for (the SDK's CardCreateParams fields we use). */
export interface CardRequest {
  readonly type: "SINGLE_USE";
  readonly spend_limit: number;
  readonly spend_limit_duration: "FOREVER";
  readonly state: "OPEN";
  /** The submission's reference, so the card names the payout it pays. */
  readonly memo: string;
  readonly exp_month: string;
  readonly exp_year: string;
}

/**
 * When the card of a submission first attempted at `now` expires, valid `validDays` days. It is
 * decided once, at the first attempt, and every attempt asks for that expiry: the same
 * idempotency key with another body would be refused by Lithic or answered with the first card.
 */
export function cardExpiry(now: number, validDays: number): number {
  return now + validDays * DAY_MS;
}

/** The card of a submission of `netCents` that expires at `expiresAt` (`cardExpiry`). */
export function cardRequest(reference: string, netCents: number, expiresAt: number): CardRequest {
  if (!Number.isSafeInteger(netCents) || netCents <= 0) {
    throw new Error(`a card's spend limit must be positive whole cents, got ${netCents}`);
  }
  const expiry = new Date(expiresAt);
  return {
    type: "SINGLE_USE",
    spend_limit: netCents,
    spend_limit_duration: "FOREVER",
    state: "OPEN",
    memo: reference,
    // Lithic's card stays valid to the end of that month; we close it at `expiresAt`.
    exp_month: String(expiry.getUTCMonth() + 1).padStart(2, "0"),
    exp_year: String(expiry.getUTCFullYear()),
  };
}

/** A card's transaction as Lithic reports it (the fields the rules read). */
export interface CardTransaction {
  readonly status: "DECLINED" | "EXPIRED" | "PENDING" | "SETTLED" | "VOIDED";
  readonly settled_amount: number;
}

/** What a card's check does. */
export type CardAction =
  | { readonly kind: "wait" }
  /** Issued and OPEN: a payout still sent completes. */
  | { readonly kind: "complete" }
  /** Past its expiry and still open: Lithic is asked to close it. */
  | { readonly kind: "close" }
  /** Closed and settled: `unspentCents` came back (0: it was all spent). */
  | { readonly kind: "reclaim"; readonly unspentCents: number };

/**
 * What a card's state does, given the payout's side (`sent`: not completed yet; `completed`;
 * `reclaimed`: its balance already came back) and its transactions.
 */
export function cardAction(
  card: { readonly state: string; readonly spendLimitCents: number; readonly expiresAt: number },
  payout: "sent" | "completed" | "reclaimed",
  transactions: readonly CardTransaction[],
  now: number,
): CardAction {
  if (payout === "reclaimed") return { kind: "wait" };
  if (payout === "sent") return card.state === "OPEN" ? { kind: "complete" } : { kind: "wait" };
  if (card.state !== "CLOSED") return now >= card.expiresAt ? { kind: "close" } : { kind: "wait" };
  // A pending authorization may still settle: the balance is known only once none is left.
  if (transactions.some((t) => t.status === "PENDING")) return { kind: "wait" };
  const spent = transactions.filter((t) => t.status === "SETTLED")
    .reduce((sum, t) => sum + t.settled_amount, 0);
  return { kind: "reclaim", unspentCents: Math.max(card.spendLimitCents - spent, 0) };
}

/** How long after a wait a card is checked again (polling, besides Lithic's webhooks). */
export const CARD_RECHECK_MS = DAY_MS;
