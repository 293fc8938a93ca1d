/**
 * Settlement waits for the outcomes read before it. A rail settles an entry by time (an ACH
 * entry with no return when its return window closes); its returns arrive by jobs that read them
 * from outside (the bank's inbound files, the sandbox bank's return file). A return read before
 * the settlement time must fail its payout, whatever order the jobs happen to commit in: when a
 * reader due at or before the settlement is still calling out (its claim runs), the settlement
 * is not applied now. It is scheduled again, held by a lease as long as the reader's claim, and
 * the reader releases it when it records its answer (or the lease ends, after a crash); the
 * settlement then applies only to the entries still without a return.
 */
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { RunningJob } from "../../db/scheduler.ts";
import type { WriteTx } from "../../db/writer.ts";

/** A reader of outcomes whose call is under way. */
interface ReaderInFlight {
  readonly id: string;
  readonly kind: string;
  readonly leaseUntil: number;
}

/**
 * A reader of `readerKinds` of the settlement job's company due no later than it and still
 * calling out, or null: while one is, no entry of the settlement may be applied.
 */
async function readerInFlight(
  tx: WriteTx,
  job: RunningJob,
  readerKinds: readonly string[],
): Promise<ReaderInFlight | null> {
  const { rows } = await tx.execute({
    sql: `SELECT id, kind, lease_until FROM scheduled_jobs
          WHERE company_id = ? AND done_at IS NULL AND due_at <= ? AND lease_until > ?
            AND kind IN (SELECT value FROM json_each(?))
          ORDER BY lease_until DESC LIMIT 1`,
    args: [job.companyId, job.dueAt, job.realNow, JSON.stringify(readerKinds)],
  });
  if (!rows[0]) return null;
  return {
    id: String(rows[0].id),
    kind: String(rows[0].kind),
    leaseUntil: Number(rows[0].lease_until),
  };
}

/**
 * Whether a unit of a settlement taken in several units may apply its entries: false while a
 * reader it must wait for is calling out (the settlement stops, and its job is held behind it).
 */
export async function outcomeReadersIdle(
  tx: WriteTx,
  job: RunningJob,
  readerKinds: readonly string[],
): Promise<boolean> {
  return await readerInFlight(tx, job, readerKinds) === null;
}

/**
 * Holds the settlement job `job` behind a reader of `readerKinds` of its company that is due no
 * later and still calling out: the job is scheduled again, held until that reader is done. True
 * when it was held (the caller applies nothing now).
 */
export async function holdBehindOutcomeReaders(
  tx: WriteTx,
  job: RunningJob,
  readerKinds: readonly string[],
): Promise<boolean> {
  const reader = await readerInFlight(tx, job, readerKinds);
  if (reader === null) return false;
  const heldId = await scheduleJob(tx, {
    companyId: job.companyId,
    kind: job.kind,
    subjectId: job.subjectId,
    dueAt: job.dueAt,
    payload: { ...job.payload, held_behind: reader.id },
  }, job.dueAt);
  tx.defer({
    sql: "UPDATE scheduled_jobs SET lease_until = ? WHERE id = ?",
    args: [reader.leaseUntil, heldId],
  });
  return true;
}

/**
 * A reader of outcomes recorded its answer: the settlements of its company held behind it may
 * run (each checks again for other readers still calling out).
 */
export async function releaseHeldSettlements(
  tx: WriteTx,
  companyId: string,
  readerJobId: string,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE scheduled_jobs SET lease_until = NULL
          WHERE company_id = ? AND done_at IS NULL AND lease_until IS NOT NULL
            AND payload ->> '$.held_behind' = ?`,
    args: [companyId, readerJobId],
  });
}
