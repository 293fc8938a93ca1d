/**
 * A live hand import waits for a second admin: the file imported by hand (never one fetched from
 * the bank's SFTP, where the bank is the other party) is staged sealed in an approval, with a
 * preview of what it would apply; approving imports it in the approval's unit.
 */
import { appendAudit } from "../audit/store.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import type { ApprovalKind } from "../operators/rules.ts";
import { composeRails } from "../payouts/runtime.ts";
import { ok } from "../platform/result.ts";
import { importAchFileInUnit } from "./imports.ts";

/** What a staged import's approval carries: the file sealed, and what the approver reads. */
export interface StagedAchImport {
  readonly file_name: string;
  readonly sha256: string;
  readonly content_sealed: string;
}

const applyStagedImport: ApprovedAction = async (tx, approval, { deps, actor, now }) => {
  const staged = approval.payload as unknown as StagedAchImport;
  if (!deps.runtimeSettings) {
    throw new Error("a staged import is approved without runtime settings");
  }
  const content = new TextEncoder().encode(await deps.secretBox.openText(staged.content_sealed));
  const rails = composeRails("live", deps.runtimeSettings, deps.databases.live, deps.secretBox);
  const imported = await importAchFileInUnit(
    tx,
    {
      database: deps.databases.live,
      environment: "live",
      secretBox: deps.secretBox,
      runtime: rails.runtime,
      rails: rails.batch.rails,
    },
    { content, fileName: staged.file_name, source: "cli", importedBy: approval.requestedBy },
    now,
  );
  if (!imported.ok) return imported;
  const report = imported.value;
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "ach:import",
    objectType: "ach_import",
    objectId: staged.sha256,
    companyId: null,
    before: null,
    after: {
      import_id: report.importId,
      file_name: staged.file_name,
      duplicate: report.duplicate,
      applied: report.applied,
      not_applied: report.notApplied.length,
      requested_by: approval.requestedBy,
      approval_id: approval.id,
    },
  });
  return ok({
    import_id: report.importId,
    duplicate: report.duplicate,
    returns: report.returns,
    corrections: report.corrections,
    applied: report.applied,
  });
};

/** The approved action of a staged hand import, for the approvals registry. */
export const achImportApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "ach_import.apply": applyStagedImport,
};
