/**
 * When a failed delivery is tried again (contract §8): roughly 5 s, 30 s, 2 min, 10 min, 30 min, 1
 * h, 3 h, 6 h, 12 h, each with ±10 % jitter so many endpoints do not retry in step; never later
 * than 24 hours after the event. A Retry-After answer is honoured within the schedule's bounds.
 */
export const RETRY_DELAYS_MS = [
  5_000,
  30_000,
  120_000,
  600_000,
  1_800_000,
  3_600_000,
  10_800_000,
  21_600_000,
  43_200_000,
] as const;

export const RETRY_WINDOW_MS = 86_400_000;
const JITTER = 0.1;

/**
 * The time of the next attempt after `attemptsMade` failed attempts, or null when the delivery is
 * to be marked failed (schedule exhausted or past the 24-hour window).
 */
export function nextAttemptAt(input: {
  attemptsMade: number;
  eventCreatedAt: number;
  now: number;
  retryAfterSeconds?: number | null;
  random?: () => number;
}): number | null {
  const base = RETRY_DELAYS_MS[input.attemptsMade - 1];
  if (base === undefined) return null;
  const jitter = 1 + (((input.random ?? Math.random)() * 2) - 1) * JITTER;
  let delay = Math.round(base * jitter);
  if (input.retryAfterSeconds != null && input.retryAfterSeconds > 0) {
    // Honour the receiver's wish, but never sooner than the schedule nor past its next step.
    const ceiling = RETRY_DELAYS_MS[input.attemptsMade] ?? base;
    delay = Math.min(Math.max(delay, input.retryAfterSeconds * 1000), ceiling);
  }
  const at = input.now + delay;
  return at > input.eventCreatedAt + RETRY_WINDOW_MS ? null : at;
}
