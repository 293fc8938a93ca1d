/**
 * What a payout's Surface A payload says about its disbursement and its documents, read when the
 * event is written (in its unit), so a delivery or a retry tells what was true when it happened.
 */
import { disbursementStatus } from "../payouts/disbursement_status.ts";
import type { PayoutStatus } from "../payouts/states.ts";
import type { SqlExecutor } from "../ledger/store.ts";

/** doc_type_id 2: the ACH authorization, shown on the ACH form. */
const ACH_AUTHORIZATION_TYPE = 2;
const ACH_METHOD_ID = 1;

export interface PayoutEventFacts {
  /** DisbursementStatusId's state: derived from every payee of the disbursement. */
  readonly disbursement_status: PayoutStatus;
  /**
   * Documents the portal shows this payee: every type-1 document of the company, the payout's
   * custom (type-4) ones, and the type-2 ACH authorization once ACH is the chosen method; a
   * one-time document another payout used is no longer shown.
   */
  readonly documents_shown: number;
  /** The rail's code of the latest failure (R03, card_declined…), or null. */
  readonly failure_reason: string | null;
}

/**
 * The facts of payouts as they are now, in the caller's unit, in one read: each disbursement's
 * statuses are gathered once however many of its payouts are asked.
 */
export async function payoutsEventFacts(
  executor: SqlExecutor,
  payoutIds: readonly string[],
): Promise<Map<string, PayoutEventFacts>> {
  const asked = payoutIds.map(() => "?").join(", ");
  const { rows } = await executor.execute({
    sql: `WITH statuses AS (
            SELECT q.disbursement_id, json_group_array(DISTINCT q.status) AS statuses
              FROM payouts q
             WHERE q.disbursement_id IN (SELECT disbursement_id FROM payouts WHERE id IN (${asked}))
             GROUP BY q.disbursement_id)
          SELECT p.id, p.failure_reason, s.statuses,
            (SELECT count(*) FROM documents d
              WHERE d.company_id = p.company_id
                AND (d.doc_type_id = 1
                     OR (d.doc_type_id = ? AND p.payment_method_id = ?)
                     OR (d.doc_type_id = 4
                         AND d.id IN (SELECT value FROM json_each(p.custom_document_uuids))))
                AND (d.one_time_use = 0 OR d.used_by_payout_id IS NULL
                     OR d.used_by_payout_id = p.id)) AS documents_shown
          FROM payouts p JOIN statuses s ON s.disbursement_id = p.disbursement_id
          WHERE p.id IN (${asked})`,
    args: [...payoutIds, ACH_AUTHORIZATION_TYPE, ACH_METHOD_ID, ...payoutIds],
  });
  return new Map(rows.map((row) => [String(row.id), {
    disbursement_status: disbursementStatus(JSON.parse(String(row.statuses)) as PayoutStatus[]),
    documents_shown: Number(row.documents_shown),
    failure_reason: row.failure_reason === null ? null : String(row.failure_reason),
  }]));
}
