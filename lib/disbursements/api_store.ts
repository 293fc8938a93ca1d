/** Surface A disbursements on the database: authorization parties and the record of seed 2.4/2.5. */
import { columnsOf, nullable, oneOf, renamed, type RowMapper, rowMapper } from "../../db/rows.ts";
import {
  disbursements,
  documents,
  payouts,
  payoutTransitions,
  portalLinks,
  signedDocuments,
  users,
} from "../../db/schema.ts";
import { newId, sha256Hex } from "../platform/keys.ts";
import { type PayoutStatus, payoutStatuses } from "../payouts/states.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import type { WriteTx } from "../../db/writer.ts";

export interface PartyInput {
  readonly party_uuid: string;
  readonly party_type: string;
  readonly title: string | null;
  readonly Company_name: string | null;
  readonly email: string | null;
  readonly first_name: string | null;
  readonly last_name: string | null;
  readonly phone: string | null;
}

export function insertParties(
  tx: WriteTx,
  disbursementId: string,
  parties: readonly PartyInput[],
): void {
  for (const party of parties) {
    tx.defer({
      sql:
        `INSERT INTO authorization_parties (id, disbursement_id, party_uuid, party_type, title, company_name, email,
              first_name, last_name, phone) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        newId("party"),
        disbursementId,
        party.party_uuid,
        party.party_type,
        party.title,
        party.Company_name,
        party.email,
        party.first_name,
        party.last_name,
        party.phone,
      ],
    });
  }
}

export interface ApiPayoutRow {
  readonly id: string;
  readonly status: PayoutStatus;
  readonly paymentMethodId: number | null;
  readonly fields: Record<string, unknown>;
}

export interface ApiDisbursement {
  readonly id: string;
  readonly uuid: string;
  readonly lineId: string;
  readonly requestFingerprint: string;
  readonly payorEmail: string | null;
  readonly createdAt: number;
  readonly parties: Record<string, unknown>[];
  readonly payouts: ApiPayoutRow[];
}

const disbursement = columnsOf(disbursements);
const payout = columnsOf(payouts);
const document = columnsOf(documents);
const signed = columnsOf(signedDocuments);

const toDisbursementHead = rowMapper({
  id: disbursement.id,
  uuid: disbursement.externalUuid,
  lineId: disbursement.lineId,
  requestFingerprint: disbursement.requestFingerprint,
  createdAt: disbursement.createdAt,
  // The payor is a LEFT JOIN: a disbursement made with a company key has none.
  payorEmail: nullable(renamed(columnsOf(users).email, "payor_email")),
});
const toPayoutStatus = rowMapper({
  id: payout.id,
  status: payout.status,
  paymentMethodId: payout.paymentMethodId,
});

/**
 * A Surface A disbursement of the company by its disbursement_uuid, or null; with `payeeUuid`
 * only that payee's payout is read (a disbursement may hold 500).
 */
export async function loadApiDisbursement(
  executor: SqlExecutor,
  companyId: string,
  uuid: string,
  payeeUuid?: string,
): Promise<ApiDisbursement | null> {
  // Three reads at once (one round trip on a libSQL server), each finding the disbursement by
  // its natural key.
  const ofDisbursement =
    "(SELECT id FROM disbursements WHERE company_id = ? AND kind = 'disbursement' AND external_uuid = ?)";
  const [{ rows }, parties, payouts] = await Promise.all([
    executor.execute({
      sql:
        `SELECT d.id, d.external_uuid, d.line_id, d.request_fingerprint, d.created_at, u.email AS payor_email
          FROM disbursements d LEFT JOIN users u ON u.id = d.payor_user_id
          WHERE d.company_id = ? AND d.kind = 'disbursement' AND d.external_uuid = ?`,
      args: [companyId, uuid],
    }),
    executor.execute({
      sql: `SELECT party_uuid, party_type, title, company_name AS Company_name, email, first_name,
                   last_name, phone FROM authorization_parties
          WHERE disbursement_id = ${ofDisbursement} ORDER BY rowid`,
      args: [companyId, uuid],
    }),
    executor.execute({
      sql:
        `SELECT id, status, payment_method_id, payee_type_id, amount_cents, payee_uuid, email, first_name, last_name,
            address_one, address_two, city, state, zip_code, phone, delivery_options, allowed_payment_method_ids,
            permission_required_from, field_values, custom_document_uuids, pay_by
          FROM payouts WHERE disbursement_id = ${ofDisbursement} AND (? IS NULL OR payee_uuid = ?)
          ORDER BY rowid`,
      args: [companyId, uuid, payeeUuid ?? null, payeeUuid ?? null],
    }),
  ]);
  if (!rows[0]) return null;
  const head = toDisbursementHead(rows[0]);
  return {
    ...head,
    // The record's fields as stored: the route shapes them into seed 2.4/2.5.
    parties: parties.rows.map((p) => ({ ...p })),
    payouts: payouts.rows.map((p) => ({ ...toPayoutStatus(p), fields: { ...p } })),
  };
}

const toPayoutRef = rowMapper({ id: payout.id, status: payout.status });

/** A payout of a Surface A disbursement by the company's uuids, or null. */
export async function findApiPayout(
  executor: SqlExecutor,
  companyId: string,
  disbursementUuid: string,
  payeeUuid: string,
): Promise<{ id: string; status: PayoutStatus } | null> {
  const { rows } = await executor.execute({
    sql: `SELECT p.id, p.status FROM disbursements d JOIN payouts p ON p.disbursement_id = d.id
            WHERE d.company_id = ? AND d.kind = 'disbursement' AND d.external_uuid = ? AND p.payee_uuid = ?`,
    args: [companyId, disbursementUuid, payeeUuid],
  });
  return rows[0] ? toPayoutRef(rows[0]) : null;
}

export interface PayoutTransaction {
  readonly payout: Record<string, unknown>;
  readonly history: { toStatus: PayoutStatus; at: number; detail: string | null }[];
}

const transition = columnsOf(payoutTransitions);
const toHistoryStep = rowMapper({
  toStatus: oneOf(transition.toStatus, payoutStatuses),
  at: transition.at,
  detail: transition.detail,
});

/** A payout's money and timeline: the body of the payee-transaction operation. */
export async function loadPayoutTransaction(
  executor: SqlExecutor,
  payoutId: string,
): Promise<PayoutTransaction> {
  const payout = await executor.execute({
    sql: `SELECT payee_uuid, status, amount_cents, held_cents, payor_fee_cents, payee_fee_cents,
                 service_fee_cents, payment_method_id, method_last_four, rail_reference, failure_reason,
                 retry_count, created_at, updated_at, field_values
            FROM payouts WHERE id = ?`,
    args: [payoutId],
  });
  const history = await executor.execute({
    sql: "SELECT to_status, at, detail FROM payout_transitions WHERE payout_id = ? ORDER BY id",
    args: [payoutId],
  });
  return {
    // The payout's columns as stored: the route shapes them into the seed's body.
    payout: { ...payout.rows[0] },
    history: history.rows.map(toHistoryStep),
  };
}

export interface SignedDocumentRow {
  readonly id: string;
  readonly name: string;
  readonly signedBy: string;
  readonly signedAt: number;
}

const toSignedDocument: RowMapper<SignedDocumentRow> = rowMapper({
  id: signed.id,
  name: document.name,
  signedBy: signed.signedBy,
  signedAt: signed.signedAt,
});
const toSignedContent = rowMapper({ name: document.name, content: signed.content });
const toContent = rowMapper({ content: document.content });

/** The documents the payout's payee (or its parties) signed, oldest first. */
export async function listSignedDocuments(
  executor: SqlExecutor,
  payoutId: string,
): Promise<SignedDocumentRow[]> {
  const { rows } = await executor.execute({
    sql: `SELECT s.id, d.name, s.signed_by, s.signed_at FROM signed_documents s
            JOIN documents d ON d.id = s.document_id WHERE s.payout_id = ? ORDER BY s.signed_at, s.id`,
    args: [payoutId],
  });
  return rows.map(toSignedDocument);
}

/** A signed copy's PDF, for a link that already proved it was issued by this service. */
export async function readSignedDocumentContent(
  executor: SqlExecutor,
  signedDocumentId: string,
): Promise<{ name: string; content: Uint8Array } | null> {
  const { rows } = await executor.execute({
    sql: `SELECT d.name, s.content FROM signed_documents s JOIN documents d ON d.id = s.document_id
            WHERE s.id = ?`,
    args: [signedDocumentId],
  });
  return rows[0] ? toSignedContent(rows[0]) : null;
}

export interface NewDocument {
  readonly companyId: string;
  readonly name: string;
  readonly docTypeId: number;
  readonly isSignRequired: boolean;
  readonly oneTimeUse: boolean;
  readonly content: Uint8Array;
}

/** Stores an uploaded PDF; null when the company already has a document of that name. */
export async function insertDocument(
  tx: WriteTx,
  document: NewDocument,
  now: number,
): Promise<string | null> {
  const id = newId("doc");
  const sha256 = await sha256Hex(document.content);
  const { rowsAffected } = await tx.execute({
    sql:
      `INSERT INTO documents (id, company_id, name, doc_type_id, is_sign_required, one_time_use, sha256,
            size_bytes, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (company_id, name) DO NOTHING`,
    args: [
      id,
      document.companyId,
      document.name,
      document.docTypeId,
      document.isSignRequired ? 1 : 0,
      document.oneTimeUse ? 1 : 0,
      sha256,
      document.content.byteLength,
      document.content,
      now,
    ],
  });
  return rowsAffected === 1 ? id : null;
}

/** doc_type_id 4: a document the company gives chosen payees (custom_document_uuids). */
export const CUSTOM_DOCUMENT_TYPE = 4;

export interface DocumentRow {
  readonly id: string;
  readonly name: string;
  readonly docTypeId: number;
  readonly isSignRequired: boolean;
  readonly oneTimeUse: boolean;
  readonly usedByPayoutId: string | null;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly createdAt: number;
}

const toDocument: RowMapper<DocumentRow> = rowMapper({
  id: document.id,
  name: document.name,
  docTypeId: document.docTypeId,
  isSignRequired: document.isSignRequired,
  oneTimeUse: document.oneTimeUse,
  usedByPayoutId: document.usedByPayoutId,
  sha256: document.sha256,
  sizeBytes: document.sizeBytes,
  createdAt: document.createdAt,
});

/** A company's document by id without its content, or null (another company's is null too). */
export async function findDocument(
  executor: SqlExecutor,
  companyId: string,
  documentId: string,
): Promise<DocumentRow | null> {
  const { rows } = await executor.execute({
    sql: `SELECT ${toDocument.columns.join(", ")} FROM documents WHERE company_id = ? AND id = ?`,
    args: [companyId, documentId],
  });
  return rows[0] ? toDocument(rows[0]) : null;
}

/** A company's document content, or null. */
export async function readDocumentContent(
  executor: SqlExecutor,
  companyId: string,
  documentId: string,
): Promise<Uint8Array | null> {
  const { rows } = await executor.execute({
    sql: "SELECT content FROM documents WHERE company_id = ? AND id = ?",
    args: [companyId, documentId],
  });
  return rows[0] ? toContent(rows[0]).content : null;
}

export interface SimplePaymentRow {
  readonly requestFingerprint: string;
  readonly memo: string | null;
  readonly createdAt: number;
  readonly payout: Record<string, unknown>;
  /** The payee's newest portal link, if one was issued. */
  readonly link: { expiresAt: number; verifiedAt: number | null } | null;
}

const link = columnsOf(portalLinks);
const toSimplePaymentHead = rowMapper({
  requestFingerprint: disbursement.requestFingerprint,
  memo: disbursement.memo,
  createdAt: disbursement.createdAt,
  // The payee's link is a LEFT JOIN: none before the first notice.
  linkExpiresAt: nullable(renamed(link.expiresAt, "link_expires_at")),
  linkVerifiedAt: renamed(link.verifiedAt, "link_verified_at"),
});

/** A company's simple payment by simple_payment_uuid, or null. */
export async function loadSimplePayment(
  executor: SqlExecutor,
  companyId: string,
  uuid: string,
): Promise<SimplePaymentRow | null> {
  const { rows } = await executor.execute({
    sql:
      `SELECT d.request_fingerprint, d.memo, d.created_at, p.id, p.status, p.amount_cents, p.first_name,
                 p.last_name, p.email, p.phone, p.delivery_options, p.allowed_payment_method_ids,
                 p.pay_by, l.expires_at AS link_expires_at, l.verified_at AS link_verified_at
            FROM disbursements d JOIN payouts p ON p.disbursement_id = d.id
            LEFT JOIN portal_links l ON l.payout_id = p.id AND l.party_uuid IS NULL AND l.replaced_at IS NULL
            WHERE d.company_id = ? AND d.kind = 'simple_payment' AND d.external_uuid = ?`,
    args: [companyId, uuid],
  });
  const row = rows[0];
  if (!row) return null;
  const head = toSimplePaymentHead(row);
  return {
    requestFingerprint: head.requestFingerprint,
    memo: head.memo,
    createdAt: head.createdAt,
    // The payout's columns as stored: the route shapes them into the seed's body.
    payout: { ...row },
    link: head.linkExpiresAt === null
      ? null
      : { expiresAt: head.linkExpiresAt, verifiedAt: head.linkVerifiedAt },
  };
}
