/**
 * The notification outbox sender: claims due pending live notifications in bounded batches,
 * oldest first, sends each through its channel's transport outside any write unit, and records
 * the outcome in another unit: sent; or pending again after a backoff (1 min, 5 min, 30 min, …);
 * or failed once the schedule is exhausted.
 *
 * Delivery is at least once. A claim moves the message's due time past a lease and only the
 * recorded outcome settles it, so a crash between the provider's acceptance and that record sends
 * the message again after the lease. The message id goes with every send so receivers can drop the
 * duplicate. Test-environment messages are never touched: they were "sent" into the sandbox inbox
 * when queued and must not leave the machine.
 */
import type { Clock } from "../platform/clock.ts";
import type { Environment } from "../platform/config.ts";
import {
  nextNotificationAttemptAt,
  type NotificationChannel,
  type NotificationMessage,
  type NotificationTransports,
  PermanentSendError,
} from "./mod.ts";
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { notifications } from "../../db/schema.ts";
import { WorkerLoop } from "../../db/worker_loop.ts";
import type { Metrics } from "../platform/metrics.ts";

export interface NotificationSenderOptions {
  /** A channel without a transport stays pending. */
  readonly transports: NotificationTransports;
  /** Messages claimed per write unit. */
  readonly batchSize: number;
  /** Sends in flight at once. */
  readonly concurrency: number;
  /** A send not settled by then counts as failed (it may still arrive: at least once). */
  readonly sendTimeoutMs: number;
  /** How long a claim keeps a message from other sweeps; must outlast the batch's sends. */
  readonly leaseMs: number;
  /** Where failed attempts are reported; JSON lines on stderr by default. */
  readonly log?: (entry: Record<string, unknown>) => void;
}

const notification = columnsOf(notifications);
const toClaimed = rowMapper({
  id: notification.id,
  channel: notification.channel,
  to: notification.recipient,
  subject: notification.subject,
  body: notification.body,
  attemptCount: notification.attemptCount,
});

interface ClaimedNotification {
  readonly message: NotificationMessage;
  readonly attemptCount: number;
}

type SendOutcome =
  | { readonly sent: true }
  /** `permanent`: the provider refused the message itself; no attempt can succeed. */
  | { readonly sent: false; readonly error: string; readonly permanent: boolean };

/** How much of a transport's error is kept on the row and in the log. */
const ERROR_CHARACTERS_MAX = 1000;

async function claim(
  tx: WriteTx,
  channels: readonly NotificationChannel[],
  now: number,
  options: NotificationSenderOptions,
): Promise<ClaimedNotification[]> {
  const { rows } = await tx.execute({
    sql: `SELECT id, channel, recipient, subject, body, attempt_count FROM notifications
            WHERE status = 'pending' AND channel IN (${channels.map(() => "?").join(", ")})
              AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
            ORDER BY created_at, rowid LIMIT ?`,
    args: [...channels, now, options.batchSize],
  });
  if (rows.length === 0) return [];
  const claimed = rows.map((row) => {
    const { attemptCount, ...message } = toClaimed(row);
    return { message, attemptCount };
  });
  await tx.execute({
    sql: `UPDATE notifications SET next_attempt_at = ? WHERE id IN (${
      rows.map(() => "?").join(", ")
    })`,
    args: [now + options.leaseMs, ...claimed.map(({ message }) => message.id)],
  });
  return claimed;
}

/** Records one attempt; returns the message's new status. */
async function record(
  tx: WriteTx,
  claimed: ClaimedNotification,
  outcome: SendOutcome,
  now: number,
): Promise<"sent" | "pending" | "failed"> {
  const attempts = claimed.attemptCount + 1;
  if (outcome.sent) {
    await tx.execute({
      sql: `UPDATE notifications SET status = 'sent', sent_at = ?, attempt_count = ?,
              next_attempt_at = NULL, last_error = NULL WHERE id = ? AND status = 'pending'`,
      args: [now, attempts, claimed.message.id],
    });
    return "sent";
  }
  const next = outcome.permanent ? null : nextNotificationAttemptAt(attempts, now);
  const status = next === null ? "failed" : "pending";
  await tx.execute({
    sql:
      `UPDATE notifications SET status = ?, attempt_count = ?, next_attempt_at = ?, last_error = ?
            WHERE id = ? AND status = 'pending'`,
    args: [status, attempts, next, outcome.error, claimed.message.id],
  });
  return status;
}

function withTimeout(promise: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer from the transport within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

const logToStderr = (entry: Record<string, unknown>) => console.error(JSON.stringify(entry));

/** The sender's name in worker logs and metrics. */
export const NOTIFICATION_WORKER = "notifications";

export class NotificationSender {
  #loop: WorkerLoop | null = null;
  #sweeping: Promise<number> | null = null;
  #stopping = false;
  readonly #channels: NotificationChannel[];
  readonly #log: (entry: Record<string, unknown>) => void;

  constructor(
    private readonly databases: Readonly<Record<Environment, Database>>,
    private readonly clock: Clock,
    private readonly options: NotificationSenderOptions,
  ) {
    this.#channels = (Object.keys(options.transports) as NotificationChannel[])
      .filter((channel) => options.transports[channel] !== undefined);
    if (this.#channels.length === 0) throw new Error("NotificationSender needs a transport");
    const batchMs = Math.ceil(options.batchSize / options.concurrency) * options.sendTimeoutMs;
    if (options.leaseMs <= batchMs) {
      throw new Error(
        `leaseMs ${options.leaseMs} must exceed a batch's longest send time, ${batchMs} ms`,
      );
    }
    this.#log = options.log ?? logToStderr;
  }

  /** Sends every live notification due now; returns the attempts made. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweepLive().finally(() => {
      this.#sweeping = null;
    });
    return this.#sweeping;
  }

  async #sweepLive(): Promise<number> {
    // Only the live database: test-environment messages never leave the machine.
    const database = this.databases.live;
    let attempts = 0;
    // A stop ends the sweep after the batch in flight; the rest stays pending for the next start.
    while (!this.#stopping) {
      const now = this.clock.now();
      const claimed = await database.writer.write((tx) =>
        claim(tx, this.#channels, now, this.options)
      );
      if (claimed.length === 0) break;
      attempts += await this.#sendAll(database, claimed);
    }
    return attempts;
  }

  async #sendAll(database: Database, claimed: ClaimedNotification[]): Promise<number> {
    const queue = [...claimed];
    // Outcomes are recorded while the next send runs; all are durable before the sweep goes on.
    const recording: Promise<void>[] = [];
    // Held, not left rejected, so a failed record cannot surface as an unhandled rejection.
    const recordErrors: unknown[] = [];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const notification = next;
        const outcome = await this.#send(notification.message);
        recording.push(
          database.writer.write((tx) => record(tx, notification, outcome, this.clock.now()))
            .then(
              (status) => {
                if (!outcome.sent) {
                  this.#reportFailure(notification, outcome.error, outcome.permanent, status);
                }
              },
              (error) => void recordErrors.push(error),
            ),
        );
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(this.options.concurrency, claimed.length) }, worker),
    );
    await Promise.all(recording);
    // Unrecorded messages stay claimed until their lease ends, then are sent again.
    if (recordErrors.length > 0) throw recordErrors[0];
    return claimed.length;
  }

  async #send(message: NotificationMessage): Promise<SendOutcome> {
    try {
      // Claims name only channels that have a transport.
      const transport = this.options.transports[message.channel]!;
      await withTimeout(transport.send(message), this.options.sendTimeoutMs);
      return { sent: true };
    } catch (error) {
      const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return {
        sent: false,
        error: text.slice(0, ERROR_CHARACTERS_MAX),
        permanent: error instanceof PermanentSendError,
      };
    }
  }

  #reportFailure(
    claimed: ClaimedNotification,
    error: string,
    permanent: boolean,
    status: string,
  ): void {
    this.#log({
      level: status === "failed" ? "error" : "warn",
      msg: status === "pending"
        ? "notification not sent, will retry"
        : permanent
        ? "notification failed: the provider refused it for good"
        : "notification failed: no attempts left",
      notification_id: claimed.message.id,
      channel: claimed.message.channel,
      attempt: claimed.attemptCount + 1,
      error,
    });
  }

  /**
   * Sweeps on the worker loop every `intervalMs`, and each minute from Deno.cron when available;
   * a sweep that throws (the database unreachable, say) is logged and the next one tries again.
   */
  start(intervalMs: number, metrics?: Metrics): void {
    this.#stopping = false;
    this.#loop = new WorkerLoop({
      name: NOTIFICATION_WORKER,
      sweep: () => this.sweep(),
      intervalMs,
      metrics,
      log: this.#log,
    });
    this.#loop.start();
  }

  /** Stops sweeping and waits for the sends in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#loop?.stop();
    this.#loop = null;
    if (this.#sweeping) await this.#sweeping.catch(() => {});
  }
}
