/**
 * A payout made through Surface A (a disbursement's payee or a Simple Payment) as /v1 shows it.
 * /v1 endpoints of a line receive the events of every payout of that line (contract §8), so the id
 * those events carry, the payout's own, must read through /v1 with the same line key. A /v1
 * disbursement is one payout with a claim id: here the claim id is the company's own reference
 * (the claim id when one was given, else the disbursement_uuid or simple_payment_uuid), and the
 * payee is null, as a Surface A payee is no /v1 payee.
 */
import type { SqlExecutor } from "../ledger/store.ts";
import type { V1Disbursement } from "./v1_store.ts";

/** The Surface A payout `id` of the caller's line as a /v1 disbursement, or null. */
export async function loadApiPayoutAsV1(
  executor: SqlExecutor,
  scope: { companyId: string; lineId: string },
  id: string,
): Promise<V1Disbursement | null> {
  const { rows } = await executor.execute({
    sql: `SELECT json_object(
            'id', p.id, 'claimId', coalesce(d.claim_id, d.external_uuid),
            'metadata', json(d.metadata), 'createdAt', p.created_at,
            'payoutId', p.id, 'status', p.status, 'amountCents', p.amount_cents,
            'allowedPaymentMethodIds', json(p.allowed_payment_method_ids),
            'paymentMethodId', p.payment_method_id, 'payeeExternalId', NULL, 'payBy', p.pay_by,
            'network', json_extract(p.method_details, '$.network'),
            'timeline', (SELECT json_group_array(json_object('status', t.to_status, 'at', t.at, 'detail', t.detail))
              FROM (SELECT to_status, at, detail FROM payout_transitions WHERE payout_id = p.id ORDER BY id) t)
          ) AS disbursement
          FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
          WHERE p.id = ? AND p.company_id = ? AND p.line_id = ? AND d.kind <> 'v1'`,
    args: [id, scope.companyId, scope.lineId],
  });
  return rows[0] ? JSON.parse(String(rows[0].disbursement)) as V1Disbursement : null;
}
