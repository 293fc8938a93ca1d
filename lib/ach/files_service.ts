/**
 * What operators do with ACH files (CLI and, later, the console): mark a file uploaded by hand as
 * transmitted, void a built file (its entries go back to the queue), resolve an in-doubt file
 * after asking the bank, ask for the release of a live file over the approval limit, and read a
 * file's content. Live changes of `resolve` wait for a second admin (`bank_file.resolve`), as
 * does a release (`bank_file.release`); every call here writes its audit row in its unit.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { batchPayoutMoves, type PayoutRuntime } from "../payouts/jobs.ts";
import { requestApproval } from "../operators/approvals.ts";
import { loadBatch } from "../rails/batch.ts";
import { readBankSettings } from "./bank_store.ts";
import {
  type AchFileRow,
  fileApprovalStatus,
  loadAchFile,
  openFileContent,
} from "./files_store.ts";
import { recordAchFileTransmitted, voidAchBatch } from "./jobs.ts";

export interface AchFileDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  /** Live: the database holding approvals and operators (for dual control). */
  readonly liveDatabase: Database;
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

const fileAudit = (file: { batchId: string; fileName: string }, status: string) => ({
  id: file.batchId,
  file_name: file.fileName,
  status,
});

/**
 * Whether a built live file waits for a second admin before it may go: its total is over the
 * approval limit and its release was not approved yet (`ach:release` asks for it).
 */
export async function awaitsRelease(
  deps: Pick<AchFileDeps, "environment" | "runtime">,
  reader: Pick<WriteTx, "execute">,
  file: AchFileRow,
): Promise<boolean> {
  if (deps.environment === "test") return false;
  const total = file.creditTotalCents + file.debitTotalCents;
  if (total <= deps.runtime.bankFileApprovalLimitCents) return false;
  return await fileApprovalStatus(reader, file.approvalId) !== "approved";
}

/** The file's batch status and file row, inside a unit. */
async function fileInUnit(
  tx: WriteTx,
  fileId: string,
): Promise<{ status: string; file: AchFileRow | null } | null> {
  const batch = await loadBatch(tx, fileId);
  if (!batch || batch.rail !== "ach") return null;
  return { status: batch.status, file: await loadAchFile(tx, fileId) };
}

/** `ach:mark-sent`: a built file without an SFTP target was uploaded by hand; it is transmitted. */
export function markAchFileSent(
  deps: AchFileDeps,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  return deps.database.writer.write(async (tx) => {
    const found = await fileInUnit(tx, fileId);
    if (!found?.file) return tx.abort(notFound(fileId));
    const file = found.file;
    if (found.status !== "built") {
      return tx.abort(refuse(
        "ach_file_not_built",
        `ACH file ${fileId} is ${found.status}; only a built file can be marked sent`,
        { details: { status: found.status } },
      ));
    }
    const settings = await readBankSettings(tx, deps.secretBox, deps.environment, file.companyId);
    if (!settings) throw new Error(`company ${file.companyId} has no bank settings`);
    if (deps.environment === "test" || settings.sftp !== null) {
      return tx.abort(refuse(
        "ach_file_has_sftp_target",
        `ACH file ${fileId} goes to the bank by ${
          deps.environment === "test" ? "the sandbox bank" : "SFTP"
        }; only a file that waits for download is marked sent by hand`,
      ));
    }
    if (await awaitsRelease(deps, tx, file)) {
      return tx.abort(refuse(
        "ach_file_awaits_release",
        `ACH file ${fileId} is over the approval limit and its release is not approved (ach:release)`,
      ));
    }
    await recordAchFileTransmitted(
      tx,
      deps,
      batchPayoutMoves(deps.runtime),
      file,
      settings.timeZone,
      file.fileName,
      now,
    );
    await appendAudit(tx, deps.environment, actor, {
      at: now,
      action: "ach:mark-sent",
      objectType: "ach_file",
      objectId: fileId,
      companyId: file.companyId,
      before: fileAudit(file, "built"),
      after: fileAudit(file, "transmitted"),
    });
    return ok({ fileId, status: "transmitted", approvalId: null });
  });
}

/** `ach:void`: a built file is voided; its entries are queued for the next cutoff. */
export function voidAchFile(
  deps: AchFileDeps,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  return deps.database.writer.write(async (tx) => {
    const found = await fileInUnit(tx, fileId);
    if (!found) return tx.abort(notFound(fileId));
    if (found.status !== "built") {
      return tx.abort(refuse(
        "ach_file_not_built",
        `ACH file ${fileId} is ${found.status}; only a built file can be voided`,
        { details: { status: found.status } },
      ));
    }
    await voidAchBatch(tx, deps, batchPayoutMoves(deps.runtime), fileId, {
      actor,
      action: "ach:void",
      reason: "voided by an operator",
    }, now);
    return ok({ fileId, status: "voided", approvalId: null });
  });
}

/**
 * Resolves an in-doubt file in the caller's unit: the bank has it (transmitted, as if the
 * upload's answer had been recorded) or has not (voided, its entries queued again). Audited.
 */
export async function resolveInDoubtFile(
  tx: WriteTx,
  deps: Pick<AchFileDeps, "environment" | "secretBox" | "runtime">,
  actor: AuditActor,
  fileId: string,
  as: "transmitted" | "voided",
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  const found = await fileInUnit(tx, fileId);
  if (!found?.file) return notFound(fileId);
  if (found.status !== "in_doubt") {
    return refuse(
      "ach_file_not_in_doubt",
      `ACH file ${fileId} is ${found.status}; only an in-doubt file is resolved`,
      { details: { status: found.status } },
    );
  }
  const file = found.file;
  const moves = batchPayoutMoves(deps.runtime);
  if (as === "voided") {
    await voidAchBatch(tx, deps, moves, fileId, {
      actor,
      action: "ach:resolve",
      reason: "the bank did not receive the file",
    }, now);
    return ok({ fileId, status: "voided", approvalId: null });
  }
  const settings = await readBankSettings(tx, deps.secretBox, deps.environment, file.companyId);
  if (!settings) throw new Error(`company ${file.companyId} has no bank settings`);
  await recordAchFileTransmitted(tx, deps, moves, file, settings.timeZone, file.fileName, now);
  await appendAudit(tx, deps.environment, actor, {
    at: now,
    action: "ach:resolve",
    objectType: "ach_file",
    objectId: fileId,
    companyId: file.companyId,
    before: fileAudit(file, "in_doubt"),
    after: fileAudit(file, "transmitted"),
  });
  return ok({ fileId, status: "transmitted", approvalId: null });
}

/** The operator of a live request, who dual control needs; a live command always has one. */
function signedIn(actor: AuditActor): AuditActor & { operator: { id: string; email: string } } {
  if (actor.operator === null) throw new Error("a live ACH file action needs a signed-in operator");
  return actor as AuditActor & { operator: { id: string; email: string } };
}

const operatorDeps = (deps: AchFileDeps) => ({
  databases: { test: deps.database, live: deps.liveDatabase },
  secretBox: deps.secretBox,
  dev: false,
});

/** `ach:resolve`: an in-doubt file was (not) received by the bank; live waits for a second admin. */
export async function resolveAchFile(
  deps: AchFileDeps,
  actor: AuditActor,
  fileId: string,
  as: "transmitted" | "voided",
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  if (deps.environment === "test") {
    return await deps.database.writer.write(async (tx) => {
      const resolved = await resolveInDoubtFile(tx, deps, actor, fileId, as, now);
      return resolved.ok ? resolved : tx.abort(resolved);
    });
  }
  const batch = await loadBatch({ db: deps.database.read }, fileId);
  if (!batch || batch.rail !== "ach") return notFound(fileId);
  if (batch.status !== "in_doubt") {
    return refuse(
      "ach_file_not_in_doubt",
      `ACH file ${fileId} is ${batch.status}; only an in-doubt file is resolved`,
      { details: { status: batch.status } },
    );
  }
  const requested = await requestApproval(operatorDeps(deps), signedIn(actor), {
    kind: "bank_file.resolve",
    environment: "live",
    companyId: batch.companyId,
    objectId: fileId,
    summary: `mark in-doubt ACH file ${fileId} ${as}`,
    payload: { as },
  }, now);
  if (!requested.ok) throw new Error(requested.message);
  return ok({ fileId, status: batch.status, approvalId: requested.value.id });
}

/**
 * `ach:release`: a built live file over the approval limit waits for a second admin; this asks
 * for it. Approved, the file is transmitted at once (lib/ach/file_approvals.ts).
 */
export async function requestAchFileRelease(
  deps: AchFileDeps,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  const batch = await loadBatch({ db: deps.database.read }, fileId);
  const file = await loadAchFile(deps.database.readClient, fileId);
  if (!batch || !file) return notFound(fileId);
  if (batch.status !== "built") {
    return refuse(
      "ach_file_not_built",
      `ACH file ${fileId} is ${batch.status}; only a built file is released`,
      { details: { status: batch.status } },
    );
  }
  if (!await awaitsRelease(deps, deps.database.readClient, file)) {
    return refuse(
      "ach_file_awaits_release",
      `ACH file ${fileId} needs no release: it is within the approval limit, in test, or approved`,
    );
  }
  const requested = await requestApproval(operatorDeps(deps), signedIn(actor), {
    kind: "bank_file.release",
    environment: "live",
    companyId: file.companyId,
    objectId: fileId,
    summary: `release ACH file ${file.fileName} (${
      file.creditTotalCents + file.debitTotalCents
    } cents)`,
    payload: {},
  }, now);
  if (!requested.ok) throw new Error(requested.message);
  return ok({ fileId, status: "built", approvalId: requested.value.id });
}

/** `ach:download` / `ach:show`: the file's plain content (audited by the caller's command). */
export async function readAchFileContent(
  deps: AchFileDeps,
  fileId: string,
): Promise<Result<{ readonly content: string; readonly sha256: string }, "ach_file_not_found">> {
  const file = await loadAchFile(deps.database.readClient, fileId);
  if (!file) return notFound(fileId);
  return ok({
    content: await openFileContent(deps.secretBox, file.contentSealed),
    sha256: file.sha256,
  });
}
