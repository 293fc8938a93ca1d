/**
 * What operators do with check files (CLI, and later the console): mark a live file uploaded or
 * printed by hand as sent, and read a file's content for a download. A print file is neither
 * marked sent nor handed out before its positive-pay file was sent: checks never exist on paper
 * before the bank knows them. Every change writes its audit row in its unit.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { batchPayoutMoves, type PayoutRuntime } from "../payouts/jobs.ts";
import { type CheckFile, loadCheckFile, openCheckFile } from "./files_store.ts";
import {
  awaitsCheckFileRelease,
  checkFilesUpload,
  printReleasable,
  recordCheckFileTransmitted,
} from "./jobs.ts";
import { scheduleCheckTransmit } from "./schedule.ts";
import { transmissionFailed } from "../rails/batch.ts";
import { requestApproval } from "../operators/approvals.ts";
import { readCheckSettings } from "./settings_store.ts";

export interface CheckFileDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
}

export type CheckFileRefusal =
  | "check_file_not_found"
  | "check_file_not_built"
  | "check_file_uploads"
  | "check_file_awaits_release"
  | "check_file_not_in_doubt"
  | "positive_pay_not_sent";

const notFound = (fileId: string) =>
  refuse("check_file_not_found", `no check file ${fileId}`, { field: "file" });

const heldPrint = (file: CheckFile) =>
  refuse(
    "positive_pay_not_sent",
    `print file ${file.batchId} is held until its positive-pay file ${file.positivePayFileId} was transmitted or marked sent: checks never exist on paper before the bank knows them`,
    { field: "file", details: { positive_pay_file_id: file.positivePayFileId } },
  );

const fileAudit = (file: CheckFile, status: string) => ({
  id: file.batchId,
  kind: file.kind,
  file_name: file.fileName,
  sha256: file.sha256,
  status,
});

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
  return deps.database.writer.write(async (tx: WriteTx) => {
    const file = await loadCheckFile(tx, fileId);
    if (!file) return tx.abort(notFound(fileId));
    if (file.status !== "built") {
      return tx.abort(refuse(
        "check_file_not_built",
        `check file ${fileId} is ${file.status}; only a built file can be marked sent`,
        { field: "file", details: { status: file.status } },
      ));
    }
    const settings = await readCheckSettings(
      tx,
      deps.secretBox,
      deps.environment,
      file.companyId,
    );
    if (!settings) throw new Error(`company ${file.companyId} has no check account`);
    if (checkFilesUpload(deps, settings)) {
      return tx.abort(refuse(
        "check_file_uploads",
        `check file ${fileId} goes by ${
          deps.environment === "test" ? "the sandbox bank" : "SFTP"
        }; only a file that waits for download is marked sent by hand`,
        { field: "file" },
      ));
    }
    if (!await printReleasable(tx, file)) return tx.abort(heldPrint(file));
    if (await awaitsCheckFileRelease(deps, tx, file)) {
      return tx.abort(refuse(
        "check_file_awaits_release",
        `check file ${fileId} is over the approval limit and its release is not approved (checks:release)`,
        { field: "file" },
      ));
    }
    await recordCheckFileTransmitted(
      tx,
      deps,
      batchPayoutMoves(deps.runtime),
      fileId,
      file.fileName,
      now,
    );
    await appendAudit(tx, deps.environment, actor, {
      at: now,
      action: "checks:mark-sent",
      objectType: "check_file",
      objectId: fileId,
      companyId: file.companyId,
      before: fileAudit(file, "built"),
      after: fileAudit(file, "transmitted"),
    });
    return ok({ fileId, status: "transmitted" });
  });
}

/**
 * A check file's plain bytes for a download (audited by the caller's command); a print file only
 * once its positive-pay file was sent.
 */
export async function readCheckFileContent(
  deps: Pick<CheckFileDeps, "database" | "secretBox">,
  fileId: string,
): Promise<Result<{ file: CheckFile; content: Uint8Array }, CheckFileRefusal>> {
  const file = await loadCheckFile(deps.database.readClient, fileId);
  if (!file) return notFound(fileId);
  if (!await printReleasable(deps.database.readClient, file)) return heldPrint(file);
  return ok({ file, content: await openCheckFile(deps.secretBox, file.contentSealed) });
}

/**
 * `checks:release`: a built live positive-pay file over the approval limit waits for a second
 * admin (`bank_file.release`, as ACH files do); this asks for it. Approved, the file goes by SFTP
 * at once or may be marked sent (`releaseApprovedCheckFile`).
 */
export async function requestCheckFileRelease(
  deps: CheckFileDeps & { readonly liveDatabase: Database },
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<{ fileId: string; status: string; approvalId: string }, CheckFileRefusal>> {
  const file = await loadCheckFile(deps.database.readClient, fileId);
  if (!file) return notFound(fileId);
  if (file.status !== "built") {
    return refuse(
      "check_file_not_built",
      `check file ${fileId} is ${file.status}; only a built file is released`,
      { field: "file", details: { status: file.status } },
    );
  }
  if (!await awaitsCheckFileRelease(deps, deps.database.readClient, file)) {
    return refuse(
      "check_file_awaits_release",
      `check file ${fileId} needs no release: it is within the approval limit, in test, a print file, or approved`,
      { field: "file" },
    );
  }
  if (actor.operator === null) throw new Error("a live check file release needs an operator");
  const requested = await requestApproval(
    {
      databases: { test: deps.database, live: deps.liveDatabase },
      secretBox: deps.secretBox,
      dev: false,
    },
    actor as AuditActor & { operator: { id: string; email: string } },
    {
      kind: "bank_file.release",
      environment: "live",
      companyId: file.companyId,
      objectId: fileId,
      summary: `release check file ${file.fileName} (${file.totalCents} cents)`,
      payload: {},
    },
    now,
  );
  if (!requested.ok) throw new Error(requested.message);
  return ok({ fileId, status: file.status, approvalId: requested.value.id });
}

/**
 * What an approved `bank_file.release` of a check file runs in the approval's unit: the release is
 * audited and the file's transmission scheduled (SFTP takes it; without a target it may now be
 * marked sent).
 */
export async function releaseApprovedCheckFile(
  tx: WriteTx,
  actor: AuditActor,
  fileId: string,
  now: number,
): Promise<Result<Record<string, unknown>, CheckFileRefusal>> {
  const file = await loadCheckFile(tx, fileId);
  if (!file) return notFound(fileId);
  if (file.status !== "built") {
    return refuse(
      "check_file_not_built",
      `check file ${fileId} is ${file.status}; only a built file is released`,
    );
  }
  await scheduleCheckTransmit(tx, file.companyId, fileId, now, 1);
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "checks:release",
    objectType: "check_file",
    objectId: fileId,
    companyId: file.companyId,
    before: fileAudit(file, "built"),
    after: { ...fileAudit(file, "built"), released: true },
  });
  return ok({ file_id: fileId, status: "built", released: true });
}

/** What an operator learned from the bank of an in-doubt file. */
export type InDoubtAnswer = "transmitted" | "not_received";

/**
 * Resolves an in-doubt check file in the caller's unit: the bank has it (transmitted, with what
 * follows) or has not (built again, and transmitted again: a check file has no window to miss and
 * its numbers stay its own). Audited.
 */
export async function resolveInDoubtCheckFile(
  tx: WriteTx,
  deps: Pick<CheckFileDeps, "environment" | "secretBox" | "runtime">,
  actor: AuditActor,
  fileId: string,
  as: InDoubtAnswer,
  now: number,
): Promise<Result<{ fileId: string; status: string }, CheckFileRefusal>> {
  const file = await loadCheckFile(tx, fileId);
  if (!file) return notFound(fileId);
  if (file.status !== "in_doubt") {
    return refuse(
      "check_file_not_in_doubt",
      `check file ${fileId} is ${file.status}; only an in-doubt file is resolved`,
      { field: "file", details: { status: file.status } },
    );
  }
  if (as === "transmitted") {
    await recordCheckFileTransmitted(
      tx,
      deps,
      batchPayoutMoves(deps.runtime),
      fileId,
      file.fileName,
      now,
    );
  } else {
    await transmissionFailed(tx, fileId, "the bank did not receive the file");
    await scheduleCheckTransmit(tx, file.companyId, fileId, now, 1);
  }
  const status = as === "transmitted" ? "transmitted" : "built";
  await appendAudit(tx, deps.environment, actor, {
    at: now,
    action: "checks:resolve",
    objectType: "check_file",
    objectId: fileId,
    companyId: file.companyId,
    before: fileAudit(file, "in_doubt"),
    after: { ...fileAudit(file, status), bank_answer: as },
  });
  return ok({ fileId, status });
}

/**
 * `checks:resolve`: an in-doubt check file was (not) received by the bank; in test at once, in
 * live once a second admin approves (`bank_file.resolve`, as for ACH files).
 */
export async function resolveCheckFile(
  deps: CheckFileDeps & { readonly liveDatabase: Database },
  actor: AuditActor,
  fileId: string,
  as: InDoubtAnswer,
  now: number,
): Promise<
  Result<{ fileId: string; status: string; approvalId: string | null }, CheckFileRefusal>
> {
  if (deps.environment === "test") {
    return await deps.database.writer.write(async (tx) => {
      const resolved = await resolveInDoubtCheckFile(tx, deps, actor, fileId, as, now);
      return resolved.ok ? ok({ ...resolved.value, approvalId: null }) : tx.abort(resolved);
    });
  }
  const file = await loadCheckFile(deps.database.readClient, fileId);
  if (!file) return notFound(fileId);
  if (file.status !== "in_doubt") {
    return refuse(
      "check_file_not_in_doubt",
      `check file ${fileId} is ${file.status}; only an in-doubt file is resolved`,
      { field: "file", details: { status: file.status } },
    );
  }
  if (actor.operator === null) throw new Error("a live check file resolution needs an operator");
  const requested = await requestApproval(
    {
      databases: { test: deps.database, live: deps.liveDatabase },
      secretBox: deps.secretBox,
      dev: false,
    },
    actor as AuditActor & { operator: { id: string; email: string } },
    {
      kind: "bank_file.resolve",
      environment: "live",
      companyId: file.companyId,
      objectId: fileId,
      summary: `mark in-doubt check file ${fileId} ${as}`,
      payload: { as },
    },
    now,
  );
  if (!requested.ok) throw new Error(requested.message);
  return ok({ fileId, status: file.status, approvalId: requested.value.id });
}
