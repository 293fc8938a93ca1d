/**
 * A live paid-items file imported by hand waits for a second admin: it is staged sealed in an
 * approval with a preview of what it would apply, and imported in the approval's unit once
 * approved (lib/operators/hand_import_approval.ts). Files fetched from the bank's SFTP apply as
 * they come: the bank is the other party.
 */
import {
  approvedImportRuntime,
  handImportApprovedAction,
} from "../operators/hand_import_approval.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import type { ApprovalKind } from "../operators/rules.ts";
import { payoutRuntime } from "../payouts/settings.ts";
import { importPaidItemsInUnit } from "./paid_import.ts";

const applyStagedPaidImport = handImportApprovedAction({
  action: "checks:import-paid",
  objectType: "check_paid_import",
  importInUnit: (tx, approval, context, file) =>
    importPaidItemsInUnit(
      tx,
      {
        database: context.deps.databases.live,
        environment: "live",
        runtime: payoutRuntime("live", approvedImportRuntime(context)),
      },
      { ...file, companyId: approval.companyId! },
      context.now,
    ),
  audited: (report) => ({ matched: report.matched, exceptions: report.exceptions }),
  answer: (report) => ({
    items: report.items,
    matched: report.matched,
    exceptions: report.exceptions,
  }),
});

/** The approved action of a staged paid-items import, for the approvals registry. */
export const paidImportApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "check_paid_import.apply": applyStagedPaidImport,
};
