/**
 * What operators do with ACH files (CLI and console), on the rail engine's batch actions
 * (lib/rails/batches_service.ts) under ACH's names: mark a file uploaded by hand as transmitted,
 * void a built file (its entries go back to the queue; a downloaded one goes in doubt), resolve an
 * in-doubt file after asking the bank, ask for the release of a file over the approval limit, and
 * read a file's content for a download (refused until its release is approved).
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
  voidBuiltBatch,
} from "../rails/batches_service.ts";
import { ACH_RAIL, loadAchFile } from "./files_store.ts";
import { openKeptText } from "./file_build.ts";
import { loadBatch } from "../rails/batch.ts";
import { openedForDownload } from "../rails/kept_file.ts";

/** The environment's batch rails and databases, as the composition root gives them. */
export interface AchFileDeps extends BatchServiceDeps {
  readonly environment: Environment;
}

/** Why an operator's file action was refused. */
export type AchFileRefusal =
  | "ach_file_not_found"
  | "ach_file_not_built"
  | "ach_file_not_in_doubt"
  | "ach_file_has_sftp_target"
  | "ach_file_awaits_release";

/** The outcome of an action: the file's status after it, or the approval it waits for. */
export interface AchFileActionResult {
  readonly fileId: string;
  readonly status: string;
  readonly approvalId: string | null;
}

const notFound = (fileId: string) =>
  refuse("ach_file_not_found", `no ACH file ${fileId}`, { field: "file" });

/** The engine's refusal codes under ACH's names. */
const ACH_CODES: Readonly<Record<string, AchFileRefusal>> = {
  batch_not_found: "ach_file_not_found",
  batch_not_built: "ach_file_not_built",
  batch_not_in_doubt: "ach_file_not_in_doubt",
  batch_uploads: "ach_file_has_sftp_target",
  batch_awaits_release: "ach_file_awaits_release",
};

/** An engine action on an ACH file, answered in ACH's codes; another rail's batch is not found. */
async function onAchFile(
  deps: AchFileDeps,
  fileId: string,
  action: () => Promise<Result<BatchActionResult, string>>,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  const batch = await loadBatch(deps.database.readClient, fileId);
  if (batch?.rail !== ACH_RAIL) return notFound(fileId);
  const done = await action();
  if (done.ok) {
    return ok({ fileId, status: done.value.status, approvalId: done.value.approvalId });
  }
  const code = ACH_CODES[done.code];
  // An approval already pending is an operator's race, as before: loud.
  if (code === undefined) throw new Error(done.message);
  return code === "ach_file_not_found" ? notFound(fileId) : { ...done, code };
}

/** `ach:mark-sent`: a built file without an SFTP target was uploaded by hand; it is transmitted. */
export function markAchFileSent(
  deps: AchFileDeps,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  return onAchFile(deps, fileId, () => markBatchSent(deps, actor, fileId, now));
}

/**
 * `ach:void`: a built file is voided and its entries queued for the next cutoff; a file that was
 * downloaded and not marked sent goes in doubt instead (`ach:resolve` decides).
 */
export function voidAchFile(
  deps: AchFileDeps,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  return onAchFile(deps, fileId, () => voidBuiltBatch(deps, actor, fileId, now));
}

/** `ach:resolve`: an in-doubt file was (not) received by the bank; live waits for a second admin. */
export function resolveAchFile(
  deps: AchFileDeps,
  actor: AuditActor,
  fileId: string,
  as: "transmitted" | "voided",
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  const answer = as === "voided" ? "not_received" : "transmitted";
  return onAchFile(
    deps,
    fileId,
    () => resolveBatch(deps, actor, fileId, answer, now),
  );
}

/**
 * `ach:release`: a built live file over the approval limit waits for a second admin; this asks
 * for it. Approved, the file is transmitted at once.
 */
export function requestAchFileRelease(
  deps: AchFileDeps,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  return onAchFile(
    deps,
    fileId,
    () => requestBatchRelease(deps, actor, fileId, now),
  );
}

/**
 * `ach:download` / `ach:show`: the file's plain content (audited by the caller's command). A file
 * waiting for its release is refused; a built file downloaded counts as possibly sent from then on.
 */
export async function readAchFileContent(
  deps: AchFileDeps,
  fileId: string,
  now: number,
): Promise<
  Result<
    { readonly content: string; readonly sha256: string },
    "ach_file_not_found" | "ach_file_awaits_release" | "ach_file_corrupt"
  >
> {
  const file = await loadAchFile(deps.database.readClient, fileId);
  if (!file) return notFound(fileId);
  // Only the file as built is handed out, and a download of one that is not is never recorded:
  // recorded, a void would put the file in doubt though nobody had it.
  const opened = await openedForDownload(
    () => openKeptText(deps.secretBox, file),
    "ach_file_corrupt",
  );
  if (!opened.ok) return opened;
  const downloaded = await recordBatchDownload(deps, fileId, now);
  if (!downloaded.ok) {
    return downloaded.code === "batch_awaits_release"
      ? { ...downloaded, code: "ach_file_awaits_release" }
      : notFound(fileId);
  }
  return ok({ content: opened.value, sha256: file.sha256 });
}
