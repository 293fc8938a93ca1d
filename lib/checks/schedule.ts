/**
 * The names and the planning of the check rail's jobs. Their kinds are the check rail's own
 * (`check.cutoff`, `check.transmit`), beside ACH's `rail.cutoff` and `rail.transmit`: the job
 * table of an environment is keyed by kind, so two batch rails cannot share one.
 */
import type { WriteTx } from "../../db/writer.ts";
import { ensureCutoffPlanned } from "../rails/cutoff.ts";

/** The rail name of check entries (postal and digital) in rail_batch_entries. */
export const CHECK_RAIL = "check";
/** The rail names of the two files a cutoff builds, in rail_batches. */
export const POSITIVE_PAY_RAIL = "check_positive_pay";
export const PRINT_RAIL = "check_print";

/** Per company: gathers new issues and voids into a positive-pay file (and a print file). */
export const CHECK_CUTOFF_JOB = "check.cutoff";
/** Per file: hands a check file over (a print file only once its positive-pay file was sent). */
export const CHECK_TRANSMIT_JOB = "check.transmit";
/** The engine's jobs of check files: their transmission and the end of their window. */
export const CHECK_BATCH_JOBS = { transmit: CHECK_TRANSMIT_JOB, windowClose: "check.window_close" };
/** Per file: sends the entries of a large transmitted positive-pay file, a bounded number per unit. */
export const CHECK_SEND_JOB = "check.send";
/** Per check: an issued check goes stale after its account's stale days. */
export const CHECK_STALE_JOB = "check.stale";
/** Per company: fails the payouts of voids a paid-items file covered, past one unit's bound. */
export const CHECK_CONFIRM_VOIDS_JOB = "check.confirm_voids";
/** Per positive-pay file, test only: the sandbox bank reports its checks paid (or returned). */
export const CHECK_SANDBOX_PAID_JOB = "check.sandbox_paid";

/** The check rail's cutoff as the engine plans and runs it: entries of checks, positive-pay files. */
export const CHECK_CUTOFF = {
  cutoffJob: CHECK_CUTOFF_JOB,
  entryRail: CHECK_RAIL,
  batchRail: POSITIVE_PAY_RAIL,
  label: "check file",
  jobs: CHECK_BATCH_JOBS,
};

/**
 * Makes sure a cutoff will take the company's new issues and voids: a cutoff job due now without
 * a cutoff finds it when it runs (the schedule is in the sealed bank settings), unless one is
 * pending and not running.
 */
export function ensureCheckCutoffPlanned(
  tx: WriteTx,
  companyId: string,
  now: number,
): Promise<void> {
  return ensureCutoffPlanned(tx, CHECK_CUTOFF, companyId, now);
}
