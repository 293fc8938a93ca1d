/**
 * What a failed scheduled job deserves: a storage or network failure passes, so the job is
 * retried with backoff; anything else (a programming error, a refused business rule) would fail
 * the same way again, so the job is parked for an operator. Pure: imports nothing from storage.
 */

/**
 * Thrown by a job that called a rail, a bank or a provider and got no usable answer (the network
 * failed, the provider answered 5xx, the call timed out): the job is retried with backoff.
 */
export class TransientJobError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TransientJobError";
  }
}

/** Delays before the 1st, 2nd, 3rd and 4th retries; every later retry waits the last, hourly. */
export const JOB_RETRY_DELAYS_MS: readonly number[] = [5_000, 30_000, 120_000, 600_000, 3_600_000];

/** The writer's error for a group whose transaction could not commit (db/writer.ts). */
const STORAGE_ERROR_NAMES = new Set(["WriteGroupError"]);

/** Names of errors that say the network failed or a call timed out (Web and Deno errors). */
const NETWORK_ERROR_NAMES = new Set([
  "TransientJobError",
  "AbortError",
  "TimeoutError",
  "NetworkError",
  "ConnectionRefused",
  "ConnectionReset",
  "ConnectionAborted",
  "NotConnected",
  "TimedOut",
  "BrokenPipe",
  "Http",
]);

/** Socket error codes (Node style, as npm clients raise them) of a failed connection. */
const NETWORK_ERROR_CODES =
  /\b(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)\b/;

/** fetch rejects with a TypeError when no answer came; other TypeErrors are programming errors. */
const FETCH_FAILURE = /error sending request|fetch failed|failed to fetch|network error/i;

/** How deep a chain of `cause`s is read. */
const CAUSE_DEPTH_MAX = 5;

/** "transient" when the job should be retried later; "permanent" when it should be parked. */
export function classifyJobFailure(error: unknown): "transient" | "permanent" {
  let current: unknown = error;
  for (let depth = 0; depth < CAUSE_DEPTH_MAX && current instanceof Error; depth++) {
    if (STORAGE_ERROR_NAMES.has(current.name) || NETWORK_ERROR_NAMES.has(current.name)) {
      return "transient";
    }
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_ERROR_CODES.test(code)) return "transient";
    if (NETWORK_ERROR_CODES.test(current.message)) return "transient";
    if (current.name === "TypeError" && FETCH_FAILURE.test(current.message)) return "transient";
    current = current.cause;
  }
  return "permanent";
}

/** How long after its failed run a job is retried; `attempts` counts the runs so far (1 or more). */
export function retryDelayMs(attempts: number): number {
  const index = Math.min(Math.max(attempts, 1), JOB_RETRY_DELAYS_MS.length) - 1;
  return JOB_RETRY_DELAYS_MS[index];
}
