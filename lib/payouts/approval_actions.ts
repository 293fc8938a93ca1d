/**
 * What live payout approvals run once a second admin approves, in the approval's unit with their
 * audit row: a late return recorded by hand, and a payment approval rule set or removed.
 */
import { appendAudit } from "../audit/store.ts";
import type { ApprovedAction, ApprovedActions } from "../operators/approvals.ts";
import { ok } from "../platform/result.ts";
import { deleteRule, putRule, ruleOfScope } from "./approval_rules.ts";
import { loadPayout, recordLateReturn } from "./store.ts";

/** Money of a completed live payout that came back, recorded once a second admin approves. */
const lateReturnAction: ApprovedAction = async (tx, approval, { actor, now }) => {
  const reason = String(approval.payload.reason);
  const before = await loadPayout(tx, approval.objectId);
  const returned = await recordLateReturn(tx, approval.objectId, reason, now);
  if (!returned.ok) return returned;
  const { payout, returnedCents, ledgerTransactionId } = returned.value;
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "payout:late-return",
    objectType: "payout",
    objectId: payout.id,
    companyId: payout.companyId,
    before: before && payoutAuditView(before),
    after: {
      ...payoutAuditView(payout),
      reason,
      returned_cents: returnedCents,
      ledger_transaction_id: ledgerTransactionId,
      approval_id: approval.id,
    },
  });
  return ok({ payout_id: payout.id, status: payout.status, returned_cents: returnedCents });
};

/** A payout as an audit row shows it. */
export function payoutAuditView(
  payout: { id: string; status: string; amountCents: number; payeeFeeCents: number },
) {
  return {
    id: payout.id,
    status: payout.status,
    amount_cents: payout.amountCents,
    payee_fee_cents: payout.payeeFeeCents,
  };
}

/** A live payment approval rule set or removed once a second admin approves. */
const changePaymentRule: ApprovedAction = async (tx, approval, { actor, now }) => {
  const payload = approval.payload as unknown as PaymentRuleChange;
  const scope = {
    companyId: approval.companyId!,
    lineId: payload.line_id,
    paymentMethodId: payload.payment_method_id,
  };
  const before = await ruleOfScope(tx, scope);
  const after = payload.threshold_cents === null
    ? (await deleteRule(tx, scope), null)
    : await putRule(tx, scope, payload.threshold_cents, approval.requestedBy, now);
  await appendAudit(tx, "live", actor, {
    at: now,
    action: payload.threshold_cents === null ? "payment-rule:remove" : "payment-rule:set",
    objectType: "payment_approval_rule",
    objectId: `${scope.companyId} ${scope.lineId ?? "every line"} ${
      scope.paymentMethodId ?? "every method"
    }`,
    companyId: scope.companyId,
    before,
    after: { rule: after, approval_id: approval.id, requested_by: approval.requestedBy },
  });
  return ok({ company_id: scope.companyId, rule: after });
};

/** The payload of a live payment rule change: the scope, and the new threshold (null: removed). */
export interface PaymentRuleChange {
  readonly line_id: string | null;
  readonly payment_method_id: number | null;
  readonly threshold_cents: number | null;
}

/** The approved actions of payouts, for the approvals registry. */
export const payoutApprovedActions: ApprovedActions = {
  "payout.late_return": lateReturnAction,
  "payment_rule.change": changePaymentRule,
};
