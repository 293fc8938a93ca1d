/**
 * The live remittance of an unclaimed-property report a second admin decides: the report's
 * payouts move to `escheated` and their money to `unclaimed_remitted` in the approval's unit.
 */
import { appendAudit } from "../audit/store.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import type { ApprovalKind } from "../operators/rules.ts";
import { ok } from "../platform/result.ts";
import { remitUnclaimedReport } from "./unclaimed.ts";

/** What a remittance's approval carries. */
export interface StagedRemittance {
  readonly report_id: string;
}

const remitReport: ApprovedAction = async (tx, approval, { actor, now }) => {
  const staged = approval.payload as unknown as StagedRemittance;
  const remitted = await remitUnclaimedReport(tx, "live", staged.report_id, now);
  if (!remitted.ok) return remitted;
  const { report, escheated, totalCents } = remitted.value;
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "unclaimed:remit",
    objectType: "unclaimed_report",
    objectId: report.id,
    companyId: report.companyId,
    before: { status: "written" },
    after: {
      status: report.status,
      state: report.state,
      report_year: report.reportYear,
      escheated,
      total_cents: totalCents,
      requested_by: approval.requestedBy,
      approval_id: approval.id,
    },
  });
  return ok({ report_id: report.id, escheated, total_cents: totalCents });
};

/** The approved actions of unclaimed property. */
export const unclaimedApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "unclaimed_report.remit": remitReport,
};
