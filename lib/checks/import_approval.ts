/**
 * A live paid-items file imported by hand waits for a second admin: it is staged sealed in an
 * approval with a preview of what it would apply, and imported in the approval's unit once
 * approved. Files fetched from the bank's SFTP apply as they come: the bank is the other party.
 */
import { appendAudit } from "../audit/store.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import type { ApprovalKind } from "../operators/rules.ts";
import { payoutRuntime } from "../payouts/runtime.ts";
import { ok } from "../platform/result.ts";
import { importPaidItemsInUnit } from "./paid_import.ts";

/** What a staged paid-items import's approval carries: the file sealed, and its name and hash. */
export interface StagedPaidImport {
  readonly file_name: string;
  readonly sha256: string;
  readonly content_sealed: string;
}

const applyStagedPaidImport: ApprovedAction = async (tx, approval, { deps, actor, now }) => {
  const staged = approval.payload as unknown as StagedPaidImport;
  if (!deps.runtimeSettings) {
    throw new Error("a staged import is approved without runtime settings");
  }
  const companyId = approval.companyId!;
  const content = new TextEncoder().encode(await deps.secretBox.openText(staged.content_sealed));
  const imported = await importPaidItemsInUnit(tx, {
    database: deps.databases.live,
    environment: "live",
    runtime: payoutRuntime("live", deps.runtimeSettings),
  }, {
    companyId,
    content,
    fileName: staged.file_name,
    source: "cli",
    importedBy: approval.requestedBy,
  }, now);
  if (!imported.ok) return imported;
  const report = imported.value;
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "checks:import-paid",
    objectType: "check_paid_import",
    objectId: staged.sha256,
    companyId,
    before: null,
    after: {
      import_id: report.importId,
      file_name: staged.file_name,
      duplicate: report.duplicate,
      matched: report.matched,
      exceptions: report.exceptions,
      requested_by: approval.requestedBy,
      approval_id: approval.id,
    },
  });
  return ok({
    import_id: report.importId,
    duplicate: report.duplicate,
    items: report.items,
    matched: report.matched,
    exceptions: report.exceptions,
  });
};

/** The approved action of a staged paid-items import, for the approvals registry. */
export const paidImportApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "check_paid_import.apply": applyStagedPaidImport,
};
