/**
 * What happens to a payout over time, decided without storage: whether a failure is retried on
 * the same method or offered to the payee again, and when an offer's reminders and expiry fall
 * due. lib/payouts/jobs.ts applies these decisions; this file is where they are made.
 */

const DAY_MS = 86_400_000;

/** Reminders go out this long before an offer expires (contract §4: reminders before). */
export const OFFER_REMINDERS_BEFORE_MS: readonly number[] = [7 * DAY_MS, DAY_MS];

/** A company's automatic retry policy (companies.retry_max and retry_reasons). */
export interface RetryPolicy {
  readonly retryMax: number;
  readonly retryReasons: readonly string[];
}

/** The failure of a payout an operator rejected after sanctions screening held it. */
export const SANCTIONS_REVIEW_FAILURE = "sanctions_review";

/**
 * Failures that end the payout's attempts: never retried, never offered again, whatever the
 * company's policy lists. A sanctions rejection stays failed with its money held until the
 * company cancels it; paying the same payee by another method would defeat the screening.
 */
const FINAL_FAILURES: ReadonlySet<string> = new Set([SANCTIONS_REVIEW_FAILURE]);

/** Whether a payout that failed for `reason` may be retried or offered to its payee again. */
export function mayTryAgainAfter(reason: string | null): boolean {
  return reason === null || !FINAL_FAILURES.has(reason);
}

/** Whether the company's retry policy allows another automatic attempt after `reason`. */
export function retryAllowed(policy: RetryPolicy, reason: string, retriesSoFar: number): boolean {
  return mayTryAgainAfter(reason) && retriesSoFar < policy.retryMax &&
    policy.retryReasons.includes(reason);
}

/**
 * What follows a failure (a rail's refusal before sending, or a failure or return after): another
 * automatic attempt on the same method when the policy allows it for this reason, otherwise the
 * payee is offered the methods again. A re-offer that needs more than available covers waits for
 * the next credit of the line (the state machine refuses it until then). A final failure
 * (`sanctions_review`) stays failed.
 */
export function afterFailure(
  policy: RetryPolicy,
  reason: string,
  retriesSoFar: number,
): "retry" | "reoffer" | "stay_failed" {
  if (!mayTryAgainAfter(reason)) return "stay_failed";
  return retryAllowed(policy, reason, retriesSoFar) ? "retry" : "reoffer";
}

/** The next timed step of an offer: a reminder, or the expiry once no reminder is left. */
export type OfferStep =
  | { readonly kind: "remind"; readonly dueAt: number }
  | { readonly kind: "expire"; readonly dueAt: number };

/**
 * The offer's first reminder due after `after`, or its expiry when every reminder has passed.
 * `remindersBeforeMs` are the offer's reminders (a pay_by deadline has its own, more of them).
 */
export function nextOfferStep(
  expiresAt: number,
  after: number,
  remindersBeforeMs: readonly number[] = OFFER_REMINDERS_BEFORE_MS,
): OfferStep {
  const reminderAt = remindersBeforeMs.map((before) => expiresAt - before)
    .find((dueAt) => dueAt > after);
  return reminderAt === undefined
    ? { kind: "expire", dueAt: expiresAt }
    : { kind: "remind", dueAt: reminderAt };
}
