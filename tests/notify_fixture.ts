/**
 * Temporary test and live databases holding one company, line and disbursement, for the
 * notification outbox tests: payouts whose payee is notified the way the payout jobs do it, and
 * outbox rows inserted directly where a test needs exact control.
 */
import { notifyPayee, type PayeeNotice } from "../lib/notify/store.ts";
import { NotificationSender, type NotificationSenderOptions } from "../lib/notify/outbox.ts";
import type { Database } from "../db/client.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import type { Environment } from "../lib/platform/config.ts";
import { newId } from "../lib/platform/keys.ts";
import type { NotificationChannel } from "../lib/notify/mod.ts";
import { openTempDatabase } from "./helpers.ts";

export const BASE_URL = "https://pay.example.test";
const COMPANY_ID = "co_notify";
const LINE_ID = "line_notify";
const DISBURSEMENT_ID = "dsb_notify";

export interface NotifyFixture {
  readonly databases: Record<Environment, Database>;
  readonly clock: FakeClock;
  /** A new payout for this payee, notified of its offer as the payout jobs do. */
  notifyNewPayee(
    environment: Environment,
    payee: { email?: string; phone?: string; firstName?: string },
  ): Promise<PayeeNotice>;
  /** One pending outbox row, queued at the current time unless told otherwise. */
  insertPending(
    environment: Environment,
    row: { channel: NotificationChannel; recipient: string; createdAt?: number },
  ): Promise<string>;
  notification(environment: Environment, id: string): Promise<Record<string, unknown>>;
  notifications(environment: Environment): Promise<Record<string, unknown>[]>;
  sender(options: Partial<NotificationSenderOptions>): NotificationSender;
  /** Opens a database the test closed again from its file, as a restarted process would. */
  reopen(environment: Environment): Promise<void>;
  close(): Promise<void>;
}

export async function openNotifyFixture(): Promise<NotifyFixture> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-notify-" });
  const databases = {
    test: await openTempDatabase(dir, "test"),
    live: await openTempDatabase(dir, "live"),
  };
  const clock = new FakeClock();
  for (const database of Object.values(databases)) {
    await database.writer.write(async (tx) => {
      await tx.execute({
        sql:
          "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Acme Mutual', '123456789', ?)",
        args: [COMPANY_ID, clock.now()],
      });
      await tx.execute({
        sql:
          "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'auto', ?)",
        args: [LINE_ID, COMPANY_ID, clock.now()],
      });
      await tx.execute({
        sql: `INSERT INTO disbursements (id, company_id, line_id, kind, external_uuid,
                request_fingerprint, created_at) VALUES (?, ?, ?, 'disbursement', 'd1', 'x', ?)`,
        args: [DISBURSEMENT_ID, COMPANY_ID, LINE_ID, clock.now()],
      });
    });
  }
  const read = async (environment: Environment, sql: string, args: string[] = []) =>
    (await databases[environment].readClient.execute({ sql, args })).rows.map((row) => ({
      ...row,
    }));
  return {
    databases,
    clock,
    notifyNewPayee(environment, payee) {
      const payoutId = newId("po");
      const now = clock.now();
      return databases[environment].writer.write(async (tx) => {
        await tx.execute({
          sql:
            `INSERT INTO payouts (id, disbursement_id, company_id, line_id, payee_uuid, first_name,
                  email, phone, delivery_options, amount_cents, status, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 12345, 'created', ?, ?)`,
          args: [
            payoutId,
            DISBURSEMENT_ID,
            COMPANY_ID,
            LINE_ID,
            payoutId,
            payee.firstName ?? null,
            payee.email ?? null,
            payee.phone ?? null,
            JSON.stringify({ email: payee.email !== undefined, sms: payee.phone !== undefined }),
            now,
            now,
          ],
        });
        return notifyPayee(
          tx,
          { environment, baseUrl: BASE_URL, linkTtlMs: 30 * 86_400_000, resendsPerHourMax: 5 },
          payoutId,
          "offer",
          now,
        );
      });
    },
    async insertPending(environment, row) {
      const id = newId("ntf");
      await databases[environment].writer.write((tx) =>
        tx.execute({
          sql: `INSERT INTO notifications (id, company_id, channel, recipient, subject, body, links,
                  status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
          args: [
            id,
            COMPANY_ID,
            row.channel,
            row.recipient,
            row.channel === "email" ? "Acme Mutual has a payment for you" : null,
            `Choose how to be paid: ${BASE_URL}/portal/${id}`,
            JSON.stringify([`${BASE_URL}/portal/${id}`]),
            row.createdAt ?? clock.now(),
          ],
        })
      );
      return id;
    },
    async notification(environment, id) {
      const [row] = await read(environment, "SELECT * FROM notifications WHERE id = ?", [id]);
      if (!row) throw new Error(`no notification ${id}`);
      return row;
    },
    notifications: (environment) =>
      read(environment, "SELECT * FROM notifications ORDER BY created_at, rowid"),
    sender: (options) =>
      new NotificationSender(databases, clock, {
        transports: {},
        batchSize: 10,
        concurrency: 2,
        sendTimeoutMs: 2_000,
        leaseMs: 60_000,
        log: () => {},
        ...options,
      }),
    async reopen(environment) {
      databases[environment] = await openTempDatabase(dir, environment);
    },
    async close() {
      await databases.test.close();
      await databases.live.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
