/**
 * What an insurer owes by a date, decided without storage: a payout's `pay_by` (given, or the
 * company's default from create), when its offer falls due, the reminders that escalate as the
 * date nears, and what an expired offer becomes under the company's setting. lib/obligations/
 * service.ts and lib/payouts/jobs.ts apply these decisions.
 */

const DAY_MS = 86_400_000;

/** What happens to an offer nobody answered by its deadline (a company setting). */
export const offerExpiryActions = ["cancel", "fallback", "hold"] as const;
export type OfferExpiryAction = (typeof offerExpiryActions)[number];

/** What company:create gives a new company; rows older than the setting keep `cancel`. */
export const NEW_COMPANY_OFFER_EXPIRY_ACTION: OfferExpiryAction = "fallback";
/** Days from create to pay_by for a new company (prompt-payment rules run 15 to 30 days). */
export const NEW_COMPANY_PAY_BY_DAYS = 30;
export const PAY_BY_DAYS_MIN = 1;
export const PAY_BY_DAYS_MAX = 365;

/** A company's deadline settings. */
export interface DeadlineSettings {
  readonly offerExpiryAction: OfferExpiryAction;
  /** Days from create to the default pay_by; null: no default, the offer's own expiry applies. */
  readonly payByDays: number | null;
}

/**
 * Reminders of a pay_by deadline, this long before it. The last ones escalate: they go on every
 * channel the payee has an address for, not only the one they asked for.
 */
export const DEADLINE_REMINDERS_BEFORE_MS: readonly number[] = [
  14 * DAY_MS,
  7 * DAY_MS,
  3 * DAY_MS,
  DAY_MS,
];
/** A reminder this close to the deadline, or closer, escalates to every channel. */
export const DEADLINE_ESCALATES_WITHIN_MS = 3 * DAY_MS;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** 00:00 UTC of a YYYY-MM-DD date, or null when it is no calendar date. */
export function dateStart(date: string): number | null {
  const match = DATE.exec(date);
  if (!match) return null;
  const at = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  // Date.UTC rolls 2026-02-30 over into March: such a date is refused.
  return new Date(at).toISOString().slice(0, 10) === date ? at : null;
}

/** The UTC date of a time, as YYYY-MM-DD. */
export function utcDate(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * The moment a pay_by date falls due: 00:00 UTC that day, so that the fallback's check is
 * printed and mailed on the date itself (a payee who chooses before it is mailed still wins).
 */
export function deadlineOf(payBy: string): number {
  const at = dateStart(payBy);
  if (at === null) throw new Error(`pay_by ${JSON.stringify(payBy)} is no YYYY-MM-DD date`);
  return at;
}

export type PayByRefusal = "invalid_pay_by";

/**
 * Checks a requested pay_by against `now`: a calendar date after today (UTC) and at most
 * PAY_BY_DAYS_MAX days ahead. Returns the sentence of the refusal, or null when it is valid.
 */
export function payByProblem(payBy: string, now: number): string | null {
  const at = dateStart(payBy);
  if (at === null) return `pay_by must be a date YYYY-MM-DD, got ${JSON.stringify(payBy)}`;
  if (at <= now) {
    return `pay_by must be after today (${utcDate(now)}); got ${payBy}`;
  }
  if (at > now + PAY_BY_DAYS_MAX * DAY_MS) {
    return `pay_by is at most ${PAY_BY_DAYS_MAX} days ahead (${
      utcDate(now + PAY_BY_DAYS_MAX * DAY_MS)
    }); got ${payBy}`;
  }
  return null;
}

/** The payout's pay_by: the one requested, else the company's default from create, else null. */
export function payByFor(
  requested: string | null | undefined,
  settings: DeadlineSettings,
  createdAt: number,
): string | null {
  if (requested) return requested;
  if (settings.payByDays === null) return null;
  return utcDate(createdAt + settings.payByDays * DAY_MS);
}

/** When an offer made at `offeredAt` falls due, and whether that is a pay_by deadline. */
export interface OfferDeadline {
  readonly expiresAt: number;
  readonly payBy: boolean;
}

/**
 * The offer's deadline: its pay_by when that is still ahead; otherwise (no pay_by, or a re-offer
 * after the date passed) the offer's own expiry, `offerTtlMs` after it was made.
 */
export function offerDeadline(
  payBy: string | null,
  offeredAt: number,
  offerTtlMs: number,
): OfferDeadline {
  if (payBy !== null && deadlineOf(payBy) > offeredAt) {
    return { expiresAt: deadlineOf(payBy), payBy: true };
  }
  return { expiresAt: offeredAt + offerTtlMs, payBy: false };
}

/** Whether a reminder due at `dueAt` of a deadline at `expiresAt` goes on every channel. */
export function reminderEscalates(expiresAt: number, dueAt: number): boolean {
  return expiresAt - dueAt <= DEADLINE_ESCALATES_WITHIN_MS;
}

/** What an expired offer becomes. */
export type ExpiryDecision = "cancel" | "fallback" | "hold";

/**
 * What an offer that expired unchosen becomes under the company's setting. A payout falls back
 * once: an offer made again after its fallback check came back (stale, voided, returned) is kept
 * owed instead of mailing another check, and so counts toward unclaimed property.
 */
export function expiryDecision(
  action: OfferExpiryAction,
  options: { readonly fellBackBefore: boolean },
): ExpiryDecision {
  if (action === "fallback" && options.fellBackBefore) return "hold";
  return action;
}
