/**
 * Polling the live SFTP inbound directory for return and notice-of-change files: a job per company
 * with an SFTP target, every ACH_INBOUND_POLL_MINUTES, that downloads new files, imports each
 * (lib/ach/imports.ts) and moves it to `processed/`. CONTRACT STUB: owned by the imports/SFTP helper.
 */
import type { JobHandler } from "../../db/scheduler.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { AchImportDeps } from "./imports.ts";

export const INBOUND_POLL_JOB = "ach.poll_inbound";

/** Schedules the company's inbound polling unless it is already scheduled (bank:set calls it). */
export function ensureInboundPolling(
  _tx: WriteTx,
  _companyId: string,
  _now: number,
): Promise<void> {
  throw new Error("not built yet");
}

/** The handler of `ach.poll_inbound` (subject: the company id); it schedules the next poll. */
export function inboundPollJob(_deps: AchImportDeps): JobHandler {
  throw new Error("not built yet");
}
