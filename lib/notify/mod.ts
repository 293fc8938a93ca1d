/**
 * Payee notifications leaving the machine: the message a transport sends, the transport interface
 * shared by e-mail (`smtp.ts`) and SMS (`sms.ts`), and the retry schedule of a failed send. Only
 * live messages are sent; test-environment ones stay in the sandbox inbox.
 */

export type NotificationChannel = "email" | "sms";

/** One queued notification as a transport sees it. */
export interface NotificationMessage {
  /** The outbox row id (`ntf_…`); stable across resends, so receivers can deduplicate. */
  readonly id: string;
  readonly channel: NotificationChannel;
  /** An e-mail address or a phone number, per channel. */
  readonly to: string;
  /** E-mail only. */
  readonly subject: string | null;
  readonly body: string;
}

/**
 * The provider refused this message itself for good (no such mailbox, an invalid number):
 * sending it again cannot succeed, so it is marked failed at once. Refusals that fixing the
 * service's settings would cure (credentials, quotas) are ordinary errors and are retried.
 */
export class PermanentSendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentSendError";
  }
}

/** Sends one message; resolves once the provider accepted it, rejects with the reason otherwise. */
export interface NotificationTransport {
  send(message: NotificationMessage): Promise<void>;
}

export type NotificationTransports = Readonly<
  Partial<Record<NotificationChannel, NotificationTransport>>
>;

/**
 * Waits after the 1st, 2nd, … failed attempt: 1 min, 5 min, 30 min, 2 h, 6 h. A message is
 * marked failed after the attempt that finds no further step (6 attempts within about 9 hours).
 */
export const NOTIFICATION_RETRY_DELAYS_MS = [
  60_000,
  300_000,
  1_800_000,
  7_200_000,
  21_600_000,
] as const;

export const NOTIFICATION_ATTEMPTS_MAX = NOTIFICATION_RETRY_DELAYS_MS.length + 1;

/** When to try again after `attemptsMade` failed attempts, or null: give up, mark it failed. */
export function nextNotificationAttemptAt(attemptsMade: number, now: number): number | null {
  const delay = NOTIFICATION_RETRY_DELAYS_MS[attemptsMade - 1];
  return delay === undefined ? null : now + delay;
}
