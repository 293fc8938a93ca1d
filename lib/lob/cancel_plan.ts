/**
 * Planning the cancel at Lob of a check we voided, in the void's own unit (the job itself is
 * lib/lob/cancel.ts). Kept apart so that the check register, which every void goes through, plans
 * it without importing the job's rules.
 */
import type { WriteTx } from "../../db/writer.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { lobMails } from "./store.ts";

/** The job that cancels at Lob a check we voided. */
export const LOB_CANCEL_JOB = "lob.cancel";

/** The print file states in which Lob may hold the file's checks. */
const HANDED_OVER = ["transmitting", "in_doubt", "transmitted"];

/**
 * In the unit of a void: plans the cancel at Lob of a check whose print file Lob may have taken
 * (the company's checks are mailed by Lob). A check still in a file not handed over is never
 * created at Lob: only issued checks are.
 */
export async function planLobCancel(
  tx: WriteTx,
  check: { readonly id: string; readonly companyId: string; readonly printFileId: string | null },
  now: number,
): Promise<void> {
  if (check.printFileId === null || !(await lobMails(tx, check.companyId))) return;
  const { rows } = await tx.execute({
    sql: "SELECT status FROM rail_batches WHERE id = ?",
    args: [check.printFileId],
  });
  if (!HANDED_OVER.includes(String(rows[0]?.status))) return;
  await scheduleJob(tx, {
    companyId: check.companyId,
    kind: LOB_CANCEL_JOB,
    subjectId: check.id,
    dueAt: now,
  }, now);
}
