/**
 * The two live reconciliation changes a second admin decides: a statement file imported by hand
 * (staged sealed, never one fetched from the bank's SFTP, where the bank is the other party) and
 * an exception resolved with an adjusting entry. Each runs in the approval's unit; the import is
 * every hand import's one path (lib/operators/hand_import_approval.ts).
 */
import type { ApprovedAction } from "../operators/approvals.ts";
import { handImportApprovedAction } from "../operators/hand_import_approval.ts";
import type { ApprovalKind } from "../operators/rules.ts";
import { ok } from "../platform/result.ts";
import { resolveReconExceptionInUnit } from "./exceptions.ts";
import { importStatementInUnit } from "./service.ts";

const applyStagedStatement = handImportApprovedAction({
  action: "recon:import",
  objectType: "statement_import",
  importInUnit: (tx, approval, { deps, now }, file) =>
    importStatementInUnit(
      tx,
      {
        database: deps.databases.live,
        environment: "live",
        secretBox: deps.secretBox,
      },
      { ...file, companyId: approval.companyId! },
      now,
    ),
  audited: (report) => ({ matched: report.matched, exceptions: report.exceptions }),
  answer: (report) => ({ matched: report.matched, exceptions: report.exceptions }),
});

/** What an adjusting resolution's approval carries. */
export interface StagedAdjustment {
  readonly exception_id: string;
  readonly note: string;
  readonly adjust_line: string;
}

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
