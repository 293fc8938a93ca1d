/**
 * What a payout's Surface A payload says about its disbursement and its documents, read when the
 * event is written (in its unit), so a delivery or a retry tells what was true when it happened.
 */
import { disbursementStatus } from "../payouts/disbursement_status.ts";
import type { PayoutStatus } from "../payouts/states.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import { keptText } from "../../db/rows.ts";

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

/** The documents the portal shows the payout `p`, a subquery; DOCUMENTS_SHOWN_ARGS are its. */
const DOCUMENTS_SHOWN = `(SELECT count(*) FROM documents doc
  WHERE doc.company_id = p.company_id
    AND (doc.doc_type_id = 1
         OR (doc.doc_type_id = ? AND p.payment_method_id = ?)
         OR (doc.doc_type_id = 4
             AND doc.id IN (SELECT value FROM json_each(p.custom_document_uuids))))
    AND (doc.one_time_use = 0 OR doc.used_by_payout_id IS NULL
         OR doc.used_by_payout_id = p.id))`;
const DOCUMENTS_SHOWN_ARGS = [ACH_AUTHORIZATION_TYPE, ACH_METHOD_ID];

/** Read for every created payout: one text, built once. */
const CREATED_PAYOUT_NUMBERS = `SELECT p.rowid AS payout_number, d.rowid AS disbursement_number,
    ${DOCUMENTS_SHOWN} AS documents_shown
  FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id WHERE p.id = ?`;

/**
 * What a payout's events need that its create does not know: the rowids of the payout and its
 * disbursement (their numbers in Surface A payloads) and the documents shown, in one read. Its
 * facts then come from the statuses the create wrote (see createdPayoutFacts).
 */
export async function readCreatedPayoutNumbers(
  executor: SqlExecutor,
  payoutId: string,
): Promise<{ payoutNumber: number; disbursementNumber: number; documentsShown: number }> {
  const { rows } = await executor.execute({
    sql: CREATED_PAYOUT_NUMBERS,
    args: [...DOCUMENTS_SHOWN_ARGS, payoutId],
  });
  if (!rows[0]) throw new Error(`readCreatedPayoutNumbers: no payout ${payoutId}`);
  return {
    payoutNumber: Number(rows[0].payout_number),
    disbursementNumber: Number(rows[0].disbursement_number),
    documentsShown: Number(rows[0].documents_shown),
  };
}

/** What readCreatedPayoutNumbers reads of a created payout. */
export interface CreatedPayoutNumbers {
  readonly payoutNumber: number;
  readonly disbursementNumber: number;
  readonly documentsShown: number;
}

/**
 * What the portal shows a payout of `companyId` just created plain (no custom document, no method
 * chosen yet): the same for each such payout, so a batch of creates reads it once.
 */
const PLAIN_NEW_PAYOUT_DOCUMENTS_SHOWN = `SELECT ${DOCUMENTS_SHOWN} AS documents_shown
  FROM (SELECT ? AS company_id, NULL AS payment_method_id, '[]' AS custom_document_uuids,
    NULL AS id) p`;

/** The documents the portal shows a payout of the company created plain (see above). */
export async function readPlainNewPayoutDocumentsShown(
  executor: SqlExecutor,
  companyId: string,
): Promise<number> {
  const { rows } = await executor.execute({
    sql: PLAIN_NEW_PAYOUT_DOCUMENTS_SHOWN,
    args: [...DOCUMENTS_SHOWN_ARGS, companyId],
  });
  return Number(rows[0].documents_shown);
}

/** The facts of a payout its create just wrote, with its disbursement's payouts' statuses so far. */
export function createdPayoutFacts(
  statuses: readonly PayoutStatus[],
  documentsShown: number,
): PayoutEventFacts {
  return {
    disbursement_status: disbursementStatus(statuses),
    documents_shown: documentsShown,
    failure_reason: null,
  };
}

/** A read of payouts `p`: what it reads (`columns`) of them and of what `from` joins them to. */
export interface PayoutsRead {
  readonly columns: string;
  readonly from: string;
}

/**
 * `read` (a constant of the caller's, which keeps the text for a few payouts: db/rows.ts keptText)
 * of the payouts `payoutIds`, with each one's facts as they are now, in the caller's unit: each
 * disbursement's statuses are gathered once however many of its payouts are asked. eventFactsOf
 * takes them back out of each row.
 */
export function readWithEventFacts(
  read: PayoutsRead,
  payoutIds: readonly string[],
): { sql: string; args: (string | number)[] } {
  const { columns, from } = read;
  if (payoutIds.length === 1) {
    // One payout (an offer's, a selection's): its disbursement's statuses read beside it, about
    // half the time of the pages' form, which sorts and groups them.
    return {
      sql: keptText(read, 1, () =>
        `SELECT ${columns}, p.failure_reason AS fact_failure_reason,
            (SELECT json_group_array(DISTINCT q.status) FROM payouts q
              WHERE q.disbursement_id = p.disbursement_id) AS fact_statuses,
            ${DOCUMENTS_SHOWN} AS fact_documents_shown
          FROM ${from} WHERE p.id = ?`),
      args: [...DOCUMENTS_SHOWN_ARGS, payoutIds[0]],
    };
  }
  const asked = () => payoutIds.map(() => "?").join(", ");
  return {
    sql: keptText(read, payoutIds.length, () =>
      `WITH statuses AS (
            SELECT q.disbursement_id, json_group_array(DISTINCT q.status) AS statuses
              FROM payouts q
             WHERE q.disbursement_id IN (SELECT disbursement_id FROM payouts WHERE id IN (${asked()}))
             GROUP BY q.disbursement_id)
          SELECT ${columns}, p.failure_reason AS fact_failure_reason, s.statuses AS fact_statuses,
                 ${DOCUMENTS_SHOWN} AS fact_documents_shown
          FROM ${from} JOIN statuses s ON s.disbursement_id = p.disbursement_id
          WHERE p.id IN (${asked()})`),
    args: [...payoutIds, ...DOCUMENTS_SHOWN_ARGS, ...payoutIds],
  };
}

/** A row of readWithEventFacts: its facts, and the rest of its columns. */
export function eventFactsOf(
  row: Readonly<Record<string, unknown>>,
): { facts: PayoutEventFacts; rest: Record<string, unknown> } {
  const {
    fact_failure_reason: failure,
    fact_statuses: statuses,
    fact_documents_shown: documents,
    ...rest
  } = row;
  return {
    facts: {
      disbursement_status: disbursementStatus(JSON.parse(String(statuses)) as PayoutStatus[]),
      documents_shown: Number(documents),
      failure_reason: failure === null ? null : String(failure),
    },
    rest,
  };
}
