/**
 * Timed rules as due rows (scheduled_jobs): written in the same unit as the change that makes
 * them due, so a restart loses none; each runs in its own unit that also marks it done, so none
 * runs twice.
 */
import type { Client } from "@libsql/client";
import { newId } from "../lib/platform/keys.ts";
import { columnsOf, json, keptText, multiRowInserts, rowMapper } from "./rows.ts";
import { scheduledJobs } from "./schema.ts";
import type { WriteTx } from "./writer.ts";

export interface DueJob {
  readonly id: string;
  readonly companyId: string;
  readonly kind: string;
  readonly subjectId: string;
  readonly dueAt: number;
  readonly payload: Record<string, unknown>;
  /** Runs started before this one, failed ones included. */
  readonly attempts: number;
}

/** A job to schedule. */
export interface NewJob {
  readonly companyId: string;
  readonly kind: string;
  readonly subjectId: string;
  readonly dueAt: number;
  readonly payload?: Record<string, unknown>;
}

export function scheduleJob(tx: WriteTx, job: NewJob, now: number): Promise<string> {
  // Nothing reads the job in the unit that schedules it: it rides with the unit's next round trip.
  return Promise.resolve(scheduleJobs(tx, [job], now)[0]);
}

/** Schedules several jobs as scheduleJob schedules one, in one statement; returns their ids. */
export function scheduleJobs(tx: WriteTx, jobs: readonly NewJob[], now: number): string[] {
  const ids = jobs.map(() => newId("job"));
  for (
    const statement of multiRowInserts(
      "INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, payload, created_at)",
      jobs.map((job, i) => [
        ids[i],
        job.companyId,
        job.kind,
        job.subjectId,
        job.dueAt,
        JSON.stringify(job.payload ?? {}),
        now,
      ]),
    )
  ) tx.defer(statement);
  return ids;
}

const job = columnsOf(scheduledJobs);
const rowToJob: (row: Readonly<Record<string, unknown>>) => DueJob = rowMapper({
  id: job.id,
  companyId: job.companyId,
  kind: job.kind,
  subjectId: job.subjectId,
  dueAt: job.dueAt,
  payload: json<Record<string, unknown>>(job.payload, "object"),
  attempts: job.attempts,
});
const toCompanyDue = rowMapper({ companyId: job.companyId, dueAt: job.dueAt });
const toAttempts = rowMapper({ attempts: job.attempts });
const toCompanyId = rowMapper({ companyId: job.companyId });
const toJobId = rowMapper({ id: job.id });

/**
 * The earliest pending jobs of a company due at or before `until`, in due order, leaving out
 * those claimed until after `realNow` (their run is calling out).
 */
export async function dueJobs(
  client: Client,
  companyId: string,
  until: number,
  limit: number,
  realNow: number,
): Promise<DueJob[]> {
  const { rows } = await client.execute({
    sql: `SELECT id, company_id, kind, subject_id, due_at, payload, attempts FROM scheduled_jobs
          WHERE done_at IS NULL AND company_id = ? AND due_at <= ?
            AND (lease_until IS NULL OR lease_until <= ?)
          ORDER BY due_at, rowid LIMIT ?`,
    args: [companyId, until, realNow, limit],
  });
  return rows.map(rowToJob);
}

/** Whether a job of the company due by `until` is claimed by a run that has not finished it. */
export async function claimedJobsDue(
  client: Client,
  companyId: string,
  until: number,
  realNow: number,
): Promise<boolean> {
  const { rows } = await client.execute({
    sql: `SELECT 1 FROM scheduled_jobs
          WHERE done_at IS NULL AND company_id = ? AND due_at <= ? AND lease_until > ? LIMIT 1`,
    args: [companyId, until, realNow],
  });
  return rows.length > 0;
}

/**
 * Companies with a pending, unclaimed job due at or before `until`, with their earliest one.
 * Reads only the due jobs (the (done_at, due_at) index), not every pending reminder and expiry,
 * which grow with every offered payout.
 */
export async function companiesWithDueJobs(
  client: Client,
  until: number,
  realNow: number,
): Promise<{ companyId: string; dueAt: number }[]> {
  const { rows } = await client.execute({
    sql: `SELECT company_id, min(due_at) AS due_at FROM scheduled_jobs
          WHERE done_at IS NULL AND due_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
          GROUP BY company_id`,
    args: [until, realNow],
  });
  return rows.map(toCompanyDue);
}

/**
 * Deletes at most `limit` jobs that ran without an error at or before `doneBy`; returns how
 * many. Parked jobs (done with an error) and pending retries (not done) stay.
 */
export async function purgeDoneJobs(tx: WriteTx, doneBy: number, limit: number): Promise<number> {
  const result = await tx.execute({
    sql: `DELETE FROM scheduled_jobs WHERE rowid IN
            (SELECT rowid FROM scheduled_jobs
              WHERE done_at IS NOT NULL AND done_at <= ? AND error IS NULL LIMIT ?)`,
    args: [doneBy, limit],
  });
  return result.rowsAffected;
}

/** The id of a job of `kind` on `subjectId` still pending or parked (not done cleanly), or null. */
export async function findOpenJob(
  tx: WriteTx,
  job: { companyId: string; kind: string; subjectId: string },
): Promise<string | null> {
  const { rows } = await tx.execute({
    sql: `SELECT id FROM scheduled_jobs
          WHERE company_id = ? AND kind = ? AND subject_id = ? AND (done_at IS NULL OR error IS NOT NULL)
          LIMIT 1`,
    args: [job.companyId, job.kind, job.subjectId],
  });
  return rows[0] ? String(rows[0].id) : null;
}

/**
 * Marks a job done inside the unit that runs it, counting the run and clearing an earlier
 * failure; false when another run already did.
 */
export async function markJobDone(tx: WriteTx, jobId: string, doneAt: number): Promise<boolean> {
  const result = await tx.execute({
    sql: `UPDATE scheduled_jobs SET done_at = ?, error = NULL, attempts = attempts + 1
          WHERE id = ? AND done_at IS NULL`,
    args: [doneAt, jobId],
  });
  return result.rowsAffected === 1;
}

/** Of these jobs, those no run has done yet. */
export async function openJobIds(tx: WriteTx, jobIds: readonly string[]): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const { rows } = await tx.execute({
    sql: keptText(
      OPEN_JOBS,
      jobIds.length,
      () => `${OPEN_JOBS} (${jobIds.map(() => "?").join(", ")})`,
    ),
    args: [...jobIds],
  });
  return new Set(rows.map((row) => String(row.id)));
}

// `+done_at`: with ten or more ids and no statistics, SQLite would otherwise search the
// (done_at, due_at) index and read every open job; a backlog of 25,000 open offers made each of
// these statements take 3 ms instead of a few primary-key reads.
const OPEN_JOBS = "SELECT id FROM scheduled_jobs WHERE +done_at IS NULL AND id IN";

/** Marks open jobs done as markJobDone marks one (each at its due time), in one statement. */
export async function markJobsDone(
  tx: WriteTx,
  jobs: readonly { readonly id: string; readonly dueAt: number }[],
): Promise<void> {
  if (jobs.length === 0) return;
  const result = await tx.execute({
    sql: keptText(
      MARK_JOBS_DONE,
      jobs.length,
      () =>
        `${MARK_JOBS_DONE} ${jobs.map(() => "WHEN ? THEN ?").join(" ")} END,
           error = NULL, attempts = attempts + 1
         WHERE +done_at IS NULL AND id IN (${jobs.map(() => "?").join(", ")})`,
    ),
    args: [...jobs.flatMap((job) => [job.id, job.dueAt]), ...jobs.map((job) => job.id)],
  });
  // The unit read them open: none can have been done since.
  if (result.rowsAffected !== jobs.length) {
    throw new Error(
      `${jobs.length - result.rowsAffected} of ${jobs.length} jobs were done already`,
    );
  }
}

// Searched by primary key, as OPEN_JOBS is.
const MARK_JOBS_DONE = "UPDATE scheduled_jobs SET done_at = CASE id";

/**
 * Claims a job that calls out until `leaseUntil` (real time) for `holder` (the node's id, or null),
 * counting the run; false when it is done or another run holds an unexpired claim.
 */
export async function claimJob(
  tx: WriteTx,
  jobId: string,
  claim: { readonly realNow: number; readonly leaseUntil: number; readonly holder: string | null },
): Promise<boolean> {
  const result = await tx.execute({
    sql: `UPDATE scheduled_jobs SET lease_until = ?, lease_holder = ?, attempts = attempts + 1
          WHERE id = ? AND done_at IS NULL AND (lease_until IS NULL OR lease_until <= ?)`,
    args: [claim.leaseUntil, claim.holder, jobId, claim.realNow],
  });
  return result.rowsAffected === 1;
}

/**
 * Ends the claims `holder` still holds: its process stopped in the middle of them (the node holds
 * its DATA_DIR's lock again, so no run of it is alive). The jobs run again at once instead of
 * after their leases. Answers how many.
 */
export async function releaseHolderClaims(tx: WriteTx, holder: string): Promise<number> {
  const result = await tx.execute({
    sql: `UPDATE scheduled_jobs SET lease_until = NULL, lease_holder = NULL
          WHERE lease_holder = ? AND done_at IS NULL AND lease_until IS NOT NULL`,
    args: [holder],
  });
  return result.rowsAffected;
}

/** Marks a claimed job done; false when the claim is no longer this run's. */
export async function finishClaimedJob(
  tx: WriteTx,
  jobId: string,
  doneAt: number,
  leaseUntil: number,
): Promise<boolean> {
  const result = await tx.execute({
    sql: `UPDATE scheduled_jobs SET done_at = ?, error = NULL, lease_until = NULL
          WHERE id = ? AND done_at IS NULL AND lease_until = ?`,
    args: [doneAt, jobId, leaseUntil],
  });
  return result.rowsAffected === 1;
}

/**
 * Which run a failure belongs to: a claim of this run (the claim counted the run), or a unit
 * that rolled back (its count with it).
 */
export type FailedRun = { readonly leaseUntil: number } | { readonly leaseUntil: null };

function failedRunMatch(run: FailedRun): { count: number; where: string; args: number[] } {
  return run.leaseUntil === null
    ? { count: 1, where: "done_at IS NULL", args: [] }
    : { count: 0, where: "done_at IS NULL AND lease_until = ?", args: [run.leaseUntil] };
}

/**
 * Leaves a failed job pending with its error, due `delayMs(attempts)` after `from`; returns the
 * runs counted and the new due time, or null when another run took the job meanwhile.
 */
export async function scheduleJobRetry(
  tx: WriteTx,
  jobId: string,
  failure: { error: string; from: number; delayMs: (attempts: number) => number; run: FailedRun },
): Promise<{ attempts: number; dueAt: number } | null> {
  const match = failedRunMatch(failure.run);
  const { rows } = await tx.execute({
    sql: `UPDATE scheduled_jobs SET error = ?, lease_until = NULL, attempts = attempts + ?
          WHERE id = ? AND ${match.where} RETURNING attempts`,
    args: [failure.error, match.count, jobId, ...match.args],
  });
  if (!rows[0]) return null;
  const { attempts } = toAttempts(rows[0]);
  const dueAt = failure.from + failure.delayMs(attempts);
  await tx.execute({
    sql: "UPDATE scheduled_jobs SET due_at = ? WHERE id = ?",
    args: [dueAt, jobId],
  });
  return { attempts, dueAt };
}

/**
 * Parks a failed job: done with its error, for an operator to read and retry; returns the runs
 * counted, or null when another run took the job meanwhile.
 */
export async function parkJob(
  tx: WriteTx,
  jobId: string,
  failure: { error: string; doneAt: number; run: FailedRun },
): Promise<number | null> {
  const match = failedRunMatch(failure.run);
  const { rows } = await tx.execute({
    sql: `UPDATE scheduled_jobs SET done_at = ?, error = ?, lease_until = NULL,
            attempts = attempts + ?
          WHERE id = ? AND ${match.where} RETURNING attempts`,
    args: [failure.doneAt, failure.error, match.count, jobId, ...match.args],
  });
  return rows[0] ? toAttempts(rows[0]).attempts : null;
}

/** A scheduled job as an operator sees it. */
export interface JobListing {
  readonly id: string;
  readonly companyId: string;
  readonly kind: string;
  readonly subjectId: string;
  readonly dueAt: number;
  readonly doneAt: number | null;
  readonly attempts: number;
  readonly error: string | null;
}

const JOB_LISTING_COLUMNS = "id, company_id, kind, subject_id, due_at, done_at, attempts, error";

const rowToListing: (row: Readonly<Record<string, unknown>>) => JobListing = rowMapper({
  id: job.id,
  companyId: job.companyId,
  kind: job.kind,
  subjectId: job.subjectId,
  dueAt: job.dueAt,
  doneAt: job.doneAt,
  attempts: job.attempts,
  error: job.error,
});

export async function findJob(client: Client, jobId: string): Promise<JobListing | null> {
  const { rows } = await client.execute({
    sql: `SELECT ${JOB_LISTING_COLUMNS} FROM scheduled_jobs WHERE id = ?`,
    args: [jobId],
  });
  return rows[0] ? rowToListing(rows[0]) : null;
}

/**
 * At most `limit` parked jobs, latest parked first, or pending jobs (retries waiting included),
 * earliest due first.
 */
export async function listJobs(
  client: Client,
  query: { parked: boolean; limit: number },
): Promise<JobListing[]> {
  const { rows } = await client.execute({
    sql: query.parked
      ? `SELECT ${JOB_LISTING_COLUMNS} FROM scheduled_jobs
          WHERE done_at IS NOT NULL AND error IS NOT NULL ORDER BY done_at DESC, rowid DESC LIMIT ?`
      : `SELECT ${JOB_LISTING_COLUMNS} FROM scheduled_jobs
          WHERE done_at IS NULL ORDER BY due_at, rowid LIMIT ?`,
    args: [query.limit],
  });
  return rows.map(rowToListing);
}

/** Companies that have a parked job. */
export async function companiesWithParkedJobs(client: Client): Promise<string[]> {
  const { rows } = await client.execute(
    "SELECT DISTINCT company_id FROM scheduled_jobs WHERE done_at IS NOT NULL AND error IS NOT NULL",
  );
  return rows.map((row) => toCompanyId(row).companyId);
}

/**
 * Puts a company's parked jobs (or the one named) back in the queue, due at `dueAt` or their own
 * due time if later; each keeps its error until a run succeeds. Returns the ids re-queued.
 */
export async function requeueParkedJobs(
  tx: WriteTx,
  target: { companyId: string; jobId?: string },
  dueAt: number,
): Promise<string[]> {
  const { rows } = await tx.execute({
    sql: `UPDATE scheduled_jobs SET done_at = NULL, lease_until = NULL, due_at = max(due_at, ?)
          WHERE company_id = ? AND done_at IS NOT NULL AND error IS NOT NULL
            AND (? IS NULL OR id = ?)
          RETURNING id`,
    args: [dueAt, target.companyId, target.jobId ?? null, target.jobId ?? null],
  });
  return rows.map((row) => toJobId(row).id);
}
