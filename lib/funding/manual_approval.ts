/**
 * The live fundings an operator records by hand (a wire received, an ACH funding returned), run
 * once a second admin approves, in the approval's unit, with their audit row.
 */
import { appendAudit } from "../audit/store.ts";
import type { ApprovedAction, ApprovedActions } from "../operators/approvals.ts";
import { ok } from "../platform/result.ts";
import { type ManualFundingMove, recordManualFundingMove } from "./service.ts";

/** The approved action of a manual funding move. */
function fundingAction(move: ManualFundingMove): ApprovedAction {
  return async (tx, approval, { actor, now }) => {
    const moved = await recordManualFundingMove(tx, move, approval.objectId, now);
    if (!moved.ok) return moved;
    const { before, after } = moved.value;
    await appendAudit(tx, "live", actor, {
      at: now,
      action: move,
      objectType: "funding",
      objectId: after.id,
      companyId: after.companyId,
      before: fundingAuditView(before),
      after: { ...fundingAuditView(after), approval_id: approval.id },
    });
    return ok({ funding_id: after.id, status: after.status });
  };
}

/** A funding as an audit row shows it. */
export function fundingAuditView(
  funding: { id: string; status: string; paymentMethod: string; amountCents: number },
) {
  return {
    id: funding.id,
    status: funding.status,
    payment_method: funding.paymentMethod,
    amount_cents: funding.amountCents,
  };
}

/** The approved actions of manual funding moves, for the approvals registry. */
export const fundingApprovedActions: ApprovedActions = {
  "wire.receive": fundingAction("wire:receive"),
  "funding.return": fundingAction("funding:return"),
};
