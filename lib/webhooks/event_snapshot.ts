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

/** The facts of payout `payoutId` as they are now, in the caller's unit. */
export async function payoutEventFacts(
  executor: SqlExecutor,
  payoutId: string,
): Promise<PayoutEventFacts> {
  const { rows } = await executor.execute({
    sql: `SELECT p.failure_reason,
            (SELECT json_group_array(DISTINCT q.status) FROM payouts q
              WHERE q.disbursement_id = p.disbursement_id) AS statuses,
            (SELECT count(*) FROM documents d
              WHERE d.company_id = p.company_id
                AND (d.doc_type_id = 1
                     OR (d.doc_type_id = ? AND p.payment_method_id = ?)
                     OR (d.doc_type_id = 4
                         AND d.id IN (SELECT value FROM json_each(p.custom_document_uuids))))
                AND (d.one_time_use = 0 OR d.used_by_payout_id IS NULL
                     OR d.used_by_payout_id = p.id)) AS documents_shown
          FROM payouts p WHERE p.id = ?`,
    args: [ACH_AUTHORIZATION_TYPE, ACH_METHOD_ID, payoutId],
  });
  const row = rows[0];
  if (!row) throw new Error(`payoutEventFacts: no payout ${payoutId}`);
  return {
    disbursement_status: disbursementStatus(JSON.parse(String(row.statuses)) as PayoutStatus[]),
    documents_shown: Number(row.documents_shown),
    failure_reason: row.failure_reason === null ? null : String(row.failure_reason),
  };
}
