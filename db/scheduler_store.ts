/**
 * Timed rules as due rows (scheduled_jobs): written in the same unit as the change that makes
 * them due, so a restart loses none; each runs in its own unit that also marks it done, so none
 * runs twice.
 */
import type { Client } from "@libsql/client";
import { newId } from "../lib/platform/keys.ts";
import type { WriteTx } from "./writer.ts";

export interface DueJob {
  readonly id: string;
  readonly companyId: string;
  readonly kind: string;
  readonly subjectId: string;
  readonly dueAt: number;
  readonly payload: Record<string, unknown>;
}

export async function scheduleJob(
  tx: WriteTx,
  job: {
    companyId: string;
    kind: string;
    subjectId: string;
    dueAt: number;
    payload?: Record<string, unknown>;
  },
  now: number,
): Promise<string> {
  const id = newId("job");
  await tx.execute({
    sql: `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, payload, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?)`,
    args: [
      id,
      job.companyId,
      job.kind,
      job.subjectId,
      job.dueAt,
      JSON.stringify(job.payload ?? {}),
      now,
    ],
  });
  return id;
}

const rowToJob = (row: Record<string, unknown>): DueJob => ({
  id: String(row.id),
  companyId: String(row.company_id),
  kind: String(row.kind),
  subjectId: String(row.subject_id),
  dueAt: Number(row.due_at),
  payload: JSON.parse(String(row.payload)) as Record<string, unknown>,
});

/** The earliest pending jobs of a company due at or before `until`, in due order. */
export async function dueJobs(
  client: Client,
  companyId: string,
  until: number,
  limit: number,
): Promise<DueJob[]> {
  const { rows } = await client.execute({
    sql: `SELECT id, company_id, kind, subject_id, due_at, payload FROM scheduled_jobs
          WHERE done_at IS NULL AND company_id = ? AND due_at <= ? ORDER BY due_at, rowid LIMIT ?`,
    args: [companyId, until, limit],
  });
  return rows.map(rowToJob);
}

/**
 * Companies with a pending job due at or before `until`, with their earliest one. Reads only the
 * due jobs (the (done_at, due_at) index), not every pending reminder and expiry, which grow with
 * every offered payout.
 */
export async function companiesWithDueJobs(
  client: Client,
  until: number,
): Promise<{ companyId: string; dueAt: number }[]> {
  const { rows } = await client.execute({
    sql: `SELECT company_id, min(due_at) AS due_at FROM scheduled_jobs
          WHERE done_at IS NULL AND due_at <= ? GROUP BY company_id`,
    args: [until],
  });
  return rows.map((row) => ({ companyId: String(row.company_id), dueAt: Number(row.due_at) }));
}

/** Marks a job done inside the unit that ran it; false when another run already did. */
/** Deletes at most `limit` jobs that ran without an error at or before `doneBy`; returns how many. */
export async function purgeDoneJobs(tx: WriteTx, doneBy: number, limit: number): Promise<number> {
  const result = await tx.execute({
    sql: `DELETE FROM scheduled_jobs WHERE rowid IN
            (SELECT rowid FROM scheduled_jobs WHERE done_at <= ? AND error IS NULL LIMIT ?)`,
    args: [doneBy, limit],
  });
  return result.rowsAffected;
}

export async function markJobDone(tx: WriteTx, jobId: string, now: number): Promise<boolean> {
  const result = await tx.execute({
    sql: "UPDATE scheduled_jobs SET done_at = ? WHERE id = ? AND done_at IS NULL",
    args: [now, jobId],
  });
  return result.rowsAffected === 1;
}
