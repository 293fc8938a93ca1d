/**
 * A company's due-diligence sweep, scheduled: on its own so that what makes money owed (an offer
 * falling due, a late return) can ask for the sweep without importing unclaimed property's use
 * cases, which import the payouts' store.
 */
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";

/** A company's due-diligence sweep: one pending job, due at its next notice. */
export const UNCLAIMED_SWEEP_JOB = "unclaimed.sweep";

/**
 * Makes sure the company's due-diligence sweep runs by `dueAt`: a pending one due later does not
 * do (it stays, and finds nothing new when it runs).
 */
export async function ensureSweep(
  tx: WriteTx,
  companyId: string,
  dueAt: number,
  now: number,
): Promise<void> {
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM scheduled_jobs WHERE company_id = ? AND kind = ? AND done_at IS NULL
            AND lease_until IS NULL AND due_at <= ? LIMIT 1`,
    args: [companyId, UNCLAIMED_SWEEP_JOB, dueAt],
  });
  if (rows.length > 0) return;
  await scheduleJob(tx, { companyId, kind: UNCLAIMED_SWEEP_JOB, subjectId: companyId, dueAt }, now);
}
