/**
 * Payment approval rules: a company's threshold, per environment, optionally narrowed to a line
 * and to a payment method, over which a payout waits in pending_approval before its payee is told.
 * The rule that holds a payout is pure (`ruleHolding`); the rest is the rules table's SQL.
 */
import type { WriteTx } from "../../db/writer.ts";
import { newId } from "../platform/keys.ts";

/** A rule as stored: null line or method means every line or every method. */
export interface PaymentApprovalRule {
  readonly id: string;
  readonly companyId: string;
  readonly lineId: string | null;
  readonly paymentMethodId: number | null;
  readonly thresholdCents: number;
  readonly createdAt: number;
}

/** What decides whether a payout waits for approval. */
export interface PayoutForRules {
  readonly lineId: string;
  readonly amountCents: number;
  readonly allowedPaymentMethodIds: readonly number[];
}

/**
 * The rule that holds a payout: of the rules matching its line and one of its allowed methods,
 * the lowest threshold its amount is over; null when none holds it (an amount at a threshold
 * goes on).
 */
export function ruleHolding(
  rules: readonly PaymentApprovalRule[],
  payout: PayoutForRules,
): PaymentApprovalRule | null {
  const holding = rules.filter((rule) =>
    (rule.lineId === null || rule.lineId === payout.lineId) &&
    (rule.paymentMethodId === null ||
      payout.allowedPaymentMethodIds.includes(rule.paymentMethodId)) &&
    payout.amountCents > rule.thresholdCents
  );
  holding.sort((a, b) => a.thresholdCents - b.thresholdCents);
  return holding[0] ?? null;
}

interface Sql {
  execute: WriteTx["execute"];
}

function toRule(row: Record<string, unknown>): PaymentApprovalRule {
  return {
    id: String(row.id),
    companyId: String(row.company_id),
    lineId: row.line_id === "" ? null : String(row.line_id),
    paymentMethodId: Number(row.payment_method_id) === 0 ? null : Number(row.payment_method_id),
    thresholdCents: Number(row.threshold_cents),
    createdAt: Number(row.created_at),
  };
}

/** A company's rules, broadest first. */
export async function rulesOfCompany(sql: Sql, companyId: string): Promise<PaymentApprovalRule[]> {
  const { rows } = await sql.execute({
    sql: `SELECT id, company_id, line_id, payment_method_id, threshold_cents, created_at
            FROM payment_approval_rules WHERE company_id = ?
           ORDER BY line_id, payment_method_id`,
    args: [companyId],
  });
  return rows.map((row) => toRule({ ...row }));
}

/** The scope a rule is set for: a company, and optionally one line and one method. */
export interface RuleScope {
  readonly companyId: string;
  readonly lineId: string | null;
  readonly paymentMethodId: number | null;
}

/** The rule of exactly this scope, if any. */
export async function ruleOfScope(sql: Sql, scope: RuleScope): Promise<PaymentApprovalRule | null> {
  const { rows } = await sql.execute({
    sql: `SELECT id, company_id, line_id, payment_method_id, threshold_cents, created_at
            FROM payment_approval_rules
           WHERE company_id = ? AND line_id = ? AND payment_method_id = ?`,
    args: [scope.companyId, scope.lineId ?? "", scope.paymentMethodId ?? 0],
  });
  return rows[0] ? toRule({ ...rows[0] }) : null;
}

/** Sets the rule of a scope (replacing its threshold), in the caller's unit. */
export async function putRule(
  tx: WriteTx,
  scope: RuleScope,
  thresholdCents: number,
  createdBy: string | null,
  now: number,
): Promise<PaymentApprovalRule> {
  await tx.execute({
    sql: `INSERT INTO payment_approval_rules (id, company_id, line_id, payment_method_id,
            threshold_cents, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (company_id, line_id, payment_method_id)
          DO UPDATE SET threshold_cents = excluded.threshold_cents,
            created_by = excluded.created_by, created_at = excluded.created_at`,
    args: [
      newId("par"),
      scope.companyId,
      scope.lineId ?? "",
      scope.paymentMethodId ?? 0,
      thresholdCents,
      createdBy,
      now,
    ],
  });
  return (await ruleOfScope(tx, scope))!;
}

/** Removes the rule of a scope, in the caller's unit; false when there was none. */
export async function deleteRule(tx: WriteTx, scope: RuleScope): Promise<boolean> {
  const { rowsAffected } = await tx.execute({
    sql: `DELETE FROM payment_approval_rules
           WHERE company_id = ? AND line_id = ? AND payment_method_id = ?`,
    args: [scope.companyId, scope.lineId ?? "", scope.paymentMethodId ?? 0],
  });
  return rowsAffected > 0;
}
