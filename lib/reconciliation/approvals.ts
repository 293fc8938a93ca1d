/**
 * The two live reconciliation changes a second admin decides: a statement file imported by hand
 * (staged sealed, never one fetched from the bank's SFTP, where the bank is the other party) and
 * an exception resolved with an adjusting entry. Each runs in the approval's unit.
 */
import { appendAudit } from "../audit/store.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import type { ApprovalKind } from "../operators/rules.ts";
import { ok } from "../platform/result.ts";
import { resolveReconExceptionInUnit } from "./exceptions.ts";
import { importStatementInUnit } from "./service.ts";

/** What a staged statement import's approval carries: the file sealed, its name and hash. */
export interface StagedStatementImport {
  readonly file_name: string;
  readonly sha256: string;
  readonly content_sealed: string;
}

/** What an adjusting resolution's approval carries. */
export interface StagedAdjustment {
  readonly exception_id: string;
  readonly note: string;
  readonly adjust_line: string;
}

const applyStagedStatement: ApprovedAction = async (tx, approval, { deps, actor, now }) => {
  const staged = approval.payload as unknown as StagedStatementImport;
  const content = new TextEncoder().encode(await deps.secretBox.openText(staged.content_sealed));
  const imported = await importStatementInUnit(tx, {
    database: deps.databases.live,
    environment: "live",
    secretBox: deps.secretBox,
  }, {
    companyId: approval.companyId!,
    content,
    fileName: staged.file_name,
    source: "cli",
    importedBy: approval.requestedBy,
  }, now);
  if (!imported.ok) return imported;
  const report = imported.value;
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "recon:import",
    objectType: "statement_import",
    objectId: staged.sha256,
    companyId: approval.companyId,
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
    matched: report.matched,
    exceptions: report.exceptions,
  });
};

const applyAdjustment: ApprovedAction = async (tx, approval, { actor, now }) => {
  const staged = approval.payload as unknown as StagedAdjustment;
  const resolved = await resolveReconExceptionInUnit(tx, "live", actor, {
    exceptionId: staged.exception_id,
    note: staged.note,
    adjustLine: staged.adjust_line,
    companyIds: null,
  }, now);
  if (!resolved.ok) return resolved;
  return ok({
    exception_id: resolved.value.exception.id,
    ledger_transaction_id: resolved.value.exception.ledgerTransactionId,
  });
};

/** The approved actions of reconciliation, for the approvals registry. */
export const reconciliationApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "statement_import.apply": applyStagedStatement,
  "recon_exception.adjust": applyAdjustment,
};
