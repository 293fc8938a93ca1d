/**
 * What operators do with check files (CLI and console), on the rail engine's batch actions
 * (lib/rails/batches_service.ts) under the check rail's names: mark a live file uploaded or
 * printed by hand as sent, ask for the release of a positive-pay file over the approval limit,
 * resolve an in-doubt file, and read a file's content for a download. A print file is neither
 * marked sent nor handed out before its positive-pay file was sent: checks never exist on paper
 * before the bank knows them; a file whose release waits is not handed out either.
 */
import type { AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import {
  type BatchActionResult,
  type BatchServiceDeps,
  markBatchSent,
  recordBatchDownload,
  requestBatchRelease,
  resolveBatch,
} from "../rails/batches_service.ts";
import type { InDoubtAnswer } from "../rails/engine.ts";
import { type CheckFile, loadCheckFile, openCheckFileAsBuilt } from "./files_store.ts";
import { printReleasable } from "./jobs.ts";
import { printHeldBy } from "./rail.ts";
import { openedForDownload } from "../rails/kept_file.ts";

export type { InDoubtAnswer } from "../rails/engine.ts";

/** The environment's batch rails and databases, as the composition root gives them. */
export interface CheckFileDeps extends BatchServiceDeps {
  readonly environment: Environment;
}

export type CheckFileRefusal =
  | "check_file_not_found"
  | "check_file_not_built"
  | "check_file_uploads"
  | "check_file_awaits_release"
  | "check_file_not_in_doubt"
  | "check_file_corrupt"
  | "positive_pay_not_sent";

const notFound = (fileId: string) =>
  refuse("check_file_not_found", `no check file ${fileId}`, { field: "file" });

/** The engine's refusal codes under the check rail's names. */
const CHECK_CODES: Readonly<Record<string, CheckFileRefusal>> = {
  batch_not_found: "check_file_not_found",
  batch_not_built: "check_file_not_built",
  batch_not_in_doubt: "check_file_not_in_doubt",
  batch_uploads: "check_file_uploads",
  batch_awaits_release: "check_file_awaits_release",
  batch_held: "positive_pay_not_sent",
};

/** An engine action on a check file, answered in the check rail's codes. */
async function onCheckFile(
  deps: CheckFileDeps,
  fileId: string,
  action: () => Promise<Result<BatchActionResult, string>>,
): Promise<
  Result<{ fileId: string; status: string; approvalId: string | null }, CheckFileRefusal>
> {
  if (!await loadCheckFile(deps.database.readClient, fileId)) return notFound(fileId);
  const done = await action();
  if (done.ok) {
    return ok({ fileId, status: done.value.status, approvalId: done.value.approvalId });
  }
  const code = CHECK_CODES[done.code];
  // An approval already pending is an operator's race, as before: loud.
  if (code === undefined) throw new Error(done.message);
  return { ...done, code };
}

/**
 * `checks:mark-sent`: a built live file without an SFTP target was uploaded to the bank (a
 * positive-pay file) or printed (a print file) by hand; it is transmitted, with what follows
 * (payouts sent, voids' payouts re-offered, the print file released).
 */
export function markCheckFileSent(
  deps: CheckFileDeps,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<{ fileId: string; status: string }, CheckFileRefusal>> {
  return onCheckFile(deps, fileId, () => markBatchSent(deps, actor, fileId, now));
}

/**
 * A check file's plain bytes for a download (audited by the caller's command): a print file only
 * once its positive-pay file was sent, a file over the approval limit only once released. A built
 * file downloaded counts as possibly sent from then on.
 */
export async function readCheckFileContent(
  deps: CheckFileDeps,
  fileId: string,
  now: number,
): Promise<Result<{ file: CheckFile; content: Uint8Array }, CheckFileRefusal>> {
  const file = await loadCheckFile(deps.database.readClient, fileId);
  if (!file) return notFound(fileId);
  if (!await printReleasable(deps.database.readClient, file)) {
    return refuse("positive_pay_not_sent", printHeldBy(file), {
      field: "file",
      details: { positive_pay_file_id: file.positivePayFileId },
    });
  }
  // Only the file as built is handed out, and a download of one that is not is never recorded.
  const opened = await openedForDownload(
    () => openCheckFileAsBuilt(deps.secretBox, file),
    "check_file_corrupt",
  );
  if (!opened.ok) return opened;
  const downloaded = await recordBatchDownload(deps, fileId, now);
  if (!downloaded.ok) return { ...downloaded, code: CHECK_CODES[downloaded.code] };
  return ok({ file, content: opened.value });
}

/**
 * `checks:release`: a built live positive-pay file over the approval limit waits for a second
 * admin (`bank_file.release`, as ACH files do); this asks for it.
 */
export async function requestCheckFileRelease(
  deps: CheckFileDeps,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<{ fileId: string; status: string; approvalId: string }, CheckFileRefusal>> {
  const requested = await onCheckFile(
    deps,
    fileId,
    () => requestBatchRelease(deps, actor, fileId, now),
  );
  return requested.ok
    ? ok({ ...requested.value, approvalId: requested.value.approvalId! })
    : requested;
}

/**
 * `checks:resolve`: an in-doubt check file was (not) received by the bank; at once in test, in
 * live once a second admin approves (`bank_file.resolve`, as for every rail).
 */
export function resolveCheckFile(
  deps: CheckFileDeps,
  actor: AuditActor,
  fileId: string,
  as: InDoubtAnswer,
  now: number,
): Promise<
  Result<{ fileId: string; status: string; approvalId: string | null }, CheckFileRefusal>
> {
  return onCheckFile(deps, fileId, () => resolveBatch(deps, actor, fileId, as, now));
}
