/**
 * The console's Jobs and notifications page: parked jobs (failed for good, waiting for an
 * operator) and failed notifications of the operator's companies. Reads only; retries run as the
 * CLI's jobs:retry and notifications:retry. A notification's body and links are never read here:
 * they carry the payee's secret portal link.
 */
import type { Client } from "@libsql/client";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export const parkedJobSorts: Sortable = { parked: "j.done_at", kind: "j.kind", due: "j.due_at" };

export interface ParkedJobRow {
  readonly id: string;
  readonly kind: string;
  readonly subjectId: string;
  readonly companyId: string;
  readonly companyName: string;
  readonly dueAt: number;
  readonly parkedAt: number;
  readonly attempts: number;
  readonly error: string;
}

/** A page of the scope's parked jobs. */
export async function listParkedJobs(
  client: Client,
  companyIds: readonly string[] | null,
  request: PageWindow,
): Promise<Page<ParkedJobRow>> {
  const where = allOf([
    { sql: "j.done_at IS NOT NULL AND j.error IS NOT NULL", args: [] },
    scopeCondition("j.company_id", companyIds),
  ]);
  const order = orderAndPage(request, parkedJobSorts, "j.rowid");
  const { rows } = await client.execute({
    sql: `SELECT j.id, j.kind, j.subject_id, j.company_id, c.name AS company_name, j.due_at,
            j.done_at, j.attempts, j.error
          FROM scheduled_jobs j JOIN companies c ON c.id = j.company_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  return pageOf(
    request,
    rows.map((row) => ({
      id: String(row.id),
      kind: String(row.kind),
      subjectId: String(row.subject_id),
      companyId: String(row.company_id),
      companyName: String(row.company_name),
      dueAt: Number(row.due_at),
      parkedAt: Number(row.done_at),
      attempts: Number(row.attempts),
      error: String(row.error),
    })),
  );
}

export const failedNotificationSorts: Sortable = {
  created: "n.created_at",
  channel: "n.channel",
  attempts: "n.attempt_count",
};

export interface FailedNotificationRow {
  readonly id: string;
  readonly companyName: string | null;
  readonly payoutId: string | null;
  readonly channel: "email" | "sms";
  readonly recipient: string;
  readonly subject: string | null;
  readonly attemptCount: number;
  readonly lastError: string | null;
  readonly createdAt: number;
}

/**
 * A page of the scope's failed notifications. A message about no company shows to an operator of
 * every company only.
 */
export async function listFailedNotifications(
  client: Client,
  companyIds: readonly string[] | null,
  request: PageWindow,
): Promise<Page<FailedNotificationRow>> {
  const where = allOf([
    { sql: "n.status = 'failed'", args: [] },
    scopeCondition("n.company_id", companyIds),
  ]);
  const order = orderAndPage(request, failedNotificationSorts, "n.rowid");
  const { rows } = await client.execute({
    sql: `SELECT n.id, c.name AS company_name, n.payout_id, n.channel, n.recipient, n.subject,
            n.attempt_count, n.last_error, n.created_at
          FROM notifications n LEFT JOIN companies c ON c.id = n.company_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  const text = (value: unknown) => value === null ? null : String(value);
  return pageOf(
    request,
    rows.map((row) => ({
      id: String(row.id),
      companyName: text(row.company_name),
      payoutId: text(row.payout_id),
      channel: String(row.channel) as "email" | "sms",
      recipient: String(row.recipient),
      subject: text(row.subject),
      attemptCount: Number(row.attempt_count),
      lastError: text(row.last_error),
      createdAt: Number(row.created_at),
    })),
  );
}
