/**
 * Deciding a payout a payment approval rule holds: approving lets it go on (its payee is then
 * offered it, or asked for endorsements), rejecting cancels it and releases its hold. Each is one
 * write unit through the one state machine, with its audit row; the CLI and the console run these
 * same functions. Any clerk or admin of the payout's company may decide.
 */
import type { Database } from "../../db/client.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { applyMove, continueCreated, loadPayout, type PayoutRow } from "./store.ts";

/** A payout's reason text for a rejection: at most this many characters. */
export const REJECTION_REASON_LENGTH_MAX = 500;

export type PaymentDecisionRefusal = "payout_not_found" | "payout_not_pending_approval";

function auditView(payout: PayoutRow) {
  return {
    id: payout.id,
    status: payout.status,
    amount_cents: payout.amountCents,
    held_cents: payout.heldCents,
  };
}

/** Approves or rejects a payout waiting in pending_approval. */
export async function decidePayment(
  database: Database,
  actor: AuditActor,
  input: { payoutId: string; approve: boolean; reason?: string },
  realNow: number,
): Promise<Result<PayoutRow, PaymentDecisionRefusal>> {
  const found = await loadPayout(database.readClient, input.payoutId);
  if (!found) {
    return refuse("payout_not_found", `no payout ${input.payoutId} in ${database.environment}`, {
      field: "payout",
    });
  }
  // The sandbox moves payouts at the company's sandbox time, as its other moves.
  const now = await domainNow(database, found.companyId, realNow);
  const who = actor.operator?.email ?? "an operator";
  return await database.writer.write(
    async (tx): Promise<Result<PayoutRow, PaymentDecisionRefusal>> => {
      const before = (await loadPayout(tx, input.payoutId))!;
      if (before.status !== "pending_approval") {
        return tx.abort(refuse(
          "payout_not_pending_approval",
          `payout ${before.id} is ${before.status}: only a payout in pending_approval is approved or rejected`,
          { field: "payout" },
        ));
      }
      const moved = await applyMove(
        tx,
        before.id,
        { kind: input.approve ? "approve_payment" : "reject_payment" },
        now,
        {
          detail: input.approve
            ? `approved by ${who}`
            : `rejected by ${who}${input.reason ? `: ${input.reason}` : ""}`,
        },
      );
      if (!moved.ok) throw new Error(`a pending payout's decision was refused: ${moved.message}`);
      const after = input.approve ? await continueCreated(tx, moved.value, now) : moved.value;
      await appendAudit(tx, database.environment, actor, {
        at: realNow,
        action: input.approve ? "payout:approve" : "payout:reject",
        objectType: "payout",
        objectId: before.id,
        companyId: before.companyId,
        before: auditView(before),
        after: { ...auditView(after), ...(input.approve ? {} : { reason: input.reason ?? null }) },
      });
      return ok(after);
    },
  );
}

/** Payouts waiting for approval, oldest first, of some companies (null: every company). */
export async function payoutsPendingApproval(
  database: Database,
  companyIds: readonly string[] | null,
  limit: number,
): Promise<
  { id: string; company_id: string; line_id: string; amount_cents: number; created_at: string }[]
> {
  const { rows } = await database.readClient.execute({
    sql: `SELECT id, company_id, line_id, amount_cents, created_at FROM payouts
           WHERE status = 'pending_approval' ${
      companyIds === null
        ? ""
        : `AND company_id IN (${companyIds.map(() => "?").join(", ") || "NULL"})`
    } ORDER BY created_at, rowid LIMIT ?`,
    args: [...(companyIds ?? []), limit],
  });
  return rows.map((row) => ({
    id: String(row.id),
    company_id: String(row.company_id),
    line_id: String(row.line_id),
    amount_cents: Number(row.amount_cents),
    created_at: new Date(Number(row.created_at)).toISOString(),
  }));
}
