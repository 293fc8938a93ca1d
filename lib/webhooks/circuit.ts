/**
 * The circuit breaker of a webhook endpoint (pure policy). An endpoint whose every attempt has
 * failed for an hour is open: it gets one attempt at a time, the probe, at most one per five
 * minutes, whatever its deliveries' own schedules say. After five days of only failures it is
 * disabled until someone re-enables it. Any successful attempt closes the circuit; a 410 Gone
 * disables the endpoint at once (the receiver asked to stop).
 */

/** Only failures for this long open the circuit. */
export const CIRCUIT_OPENS_AFTER_FAILING_MS = 3_600_000;
/** While the circuit is open, at most one attempt (the probe) per this interval. */
export const CIRCUIT_PROBE_INTERVAL_MS = 300_000;
/** Only failures for this long disable the endpoint. */
export const ENDPOINT_DISABLED_AFTER_FAILING_MS = 5 * 86_400_000;

/** How an attempt ended, for the breaker. */
export type AttemptAnswer = "succeeded" | "failed" | "gone";

export type Circuit = "closed" | "open";

/** The endpoint's circuit at `now`, from the start of its unbroken run of failures. */
export function circuitAt(failingSince: number | null, now: number): Circuit {
  return failingSince !== null && now - failingSince >= CIRCUIT_OPENS_AFTER_FAILING_MS
    ? "open"
    : "closed";
}

export interface CircuitAfter {
  /** The start of the unbroken run of failures, or null when the last answer succeeded. */
  readonly failingSince: number | null;
  /** Open: no attempt to the endpoint before this time. Null when closed. */
  readonly probeNotBefore: number | null;
  /** Why the endpoint is disabled now, or null when it stays enabled. */
  readonly disabledReason: string | null;
}

const DAY_MS = 86_400_000;

/**
 * The endpoint's circuit after `answers` (in the order the attempts ended), all recorded at `now`.
 */
export function circuitAfterAttempts(input: {
  failingSince: number | null;
  now: number;
  answers: readonly AttemptAnswer[];
}): CircuitAfter {
  let failingSince = input.failingSince;
  for (const answer of input.answers) {
    failingSince = answer === "succeeded" ? null : failingSince ?? input.now;
  }
  const failingMs = failingSince === null ? 0 : input.now - failingSince;
  let disabledReason: string | null = null;
  if (input.answers.includes("gone")) disabledReason = "the receiver answered 410 Gone";
  else if (failingSince !== null && failingMs >= ENDPOINT_DISABLED_AFTER_FAILING_MS) {
    disabledReason = `every attempt failed for ${
      ENDPOINT_DISABLED_AFTER_FAILING_MS / DAY_MS
    } days, since ${new Date(failingSince).toISOString()}`;
  }
  return {
    failingSince,
    probeNotBefore: circuitAt(failingSince, input.now) === "open"
      ? input.now + CIRCUIT_PROBE_INTERVAL_MS
      : null,
    disabledReason,
  };
}
