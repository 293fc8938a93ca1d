/**
 * Read models of ACH files for the company API and the operator CLI: a file's metadata (never its
 * content) and its entries with the ids the company knows and the account's last four digits
 * only. Reads of committed data; nothing here writes.
 */
import { columnsOf, nullable, renamed, rowMapper, text } from "../../db/rows.ts";
import { achFiles, companies, railBatchEntries, railBatches } from "../../db/schema.ts";
import type { SqlReader } from "../../db/writer.ts";

/** The states a file moves through (built → transmitting → transmitted | in_doubt | voided). */
export const achFileStatuses = [
  "built",
  "transmitting",
  "transmitted",
  "in_doubt",
  "voided",
] as const;
export type AchFileStatus = (typeof achFileStatuses)[number];

/** Files of one page of a listing, by default and at most. */
export const ACH_FILES_PAGE_SIZE_DEFAULT = 10;
export const ACH_FILES_PAGE_SIZE_MAX = 100;

const batch = columnsOf(railBatches);
const file = columnsOf(achFiles);
const entry = columnsOf(railBatchEntries);
const company = columnsOf(companies);

/** One NACHA file as the company and operators see it: metadata, totals and state. */
export interface AchFileSummary {
  readonly id: string;
  readonly companyId: string;
  readonly companyTin: string;
  readonly createdAt: number;
  readonly bankDate: string;
  readonly effectiveDate: string;
  readonly cutoffKind: "same_day" | "next_day";
  readonly entryCount: number;
  readonly creditTotalCents: number;
  readonly debitTotalCents: number;
  readonly status: AchFileStatus;
  readonly sha256: string;
  readonly transmittedAt: number | null;
  readonly fileName: string;
  readonly fileIdModifier: string;
  readonly windowEndsAt: number;
  readonly approvalId: string | null;
}

/** One entry of a file: what it pays or collects, by the ids the company knows, masked. */
export interface AchFileEntry {
  readonly traceNumber: string | null;
  readonly direction: "credit" | "debit";
  readonly amountCents: number;
  readonly payoutId: string | null;
  /** The Surface A disbursement and payee of a payout made through /api disbursements. */
  readonly disbursementUuid: string | null;
  readonly payeeUuid: string | null;
  /** The Simple Payment a payout belongs to. */
  readonly simplePaymentUuid: string | null;
  /** The /v1 disbursement id of a payout made through /v1. */
  readonly v1DisbursementId: string | null;
  /** The ACH funding a debit collects (its funding_uuid, else its id). */
  readonly fundingUuid: string | null;
  readonly accountLastFour: string | null;
  readonly transactionCode: number | null;
  readonly entryClass: string | null;
  readonly status: "queued" | "batched" | "sent" | "completed" | "failed" | "voided";
  readonly returnCode: string | null;
}

/** Who an entry pays or collects from, by the ids the company knows (API and CLI alike). */
export function entryOwnerIds(entry: AchFileEntry) {
  return {
    payout_id: entry.payoutId,
    disbursement_uuid: entry.disbursementUuid,
    payee_uuid: entry.payeeUuid,
    simple_payment_uuid: entry.simplePaymentUuid,
    v1_disbursement_id: entry.v1DisbursementId,
    funding_uuid: entry.fundingUuid,
  };
}

export interface AchFileDetail extends AchFileSummary {
  readonly entries: readonly AchFileEntry[];
}

const toSummary = rowMapper({
  id: batch.id,
  companyId: batch.companyId,
  companyTin: renamed(company.tin, "company_tin"),
  createdAt: batch.createdAt,
  bankDate: file.bankDate,
  effectiveDate: file.effectiveDate,
  cutoffKind: file.cutoffKind,
  entryCount: file.entryCount,
  creditTotalCents: file.creditTotalCents,
  debitTotalCents: file.debitTotalCents,
  status: batch.status,
  sha256: file.sha256,
  transmittedAt: batch.transmittedAt,
  fileName: file.fileName,
  fileIdModifier: file.fileIdModifier,
  windowEndsAt: file.windowEndsAt,
  approvalId: file.approvalId,
});

const SUMMARY_COLUMNS = `b.id, b.company_id, c.tin AS company_tin, b.created_at, f.bank_date,
  f.effective_date, f.cutoff_kind, f.entry_count, f.credit_total_cents, f.debit_total_cents,
  b.status, f.sha256, b.transmitted_at, f.file_name, f.file_id_modifier, f.window_ends_at,
  f.approval_id`;
const FROM_FILES = `rail_batches b JOIN ach_files f ON f.batch_id = b.id
  JOIN companies c ON c.id = b.company_id`;

const toEntry = rowMapper({
  traceNumber: entry.traceNumber,
  direction: entry.direction,
  amountCents: entry.amountCents,
  payoutId: entry.payoutId,
  disbursementUuid: nullable(text("disbursements", "disbursement_uuid")),
  payeeUuid: nullable(text("payouts", "payee_uuid")),
  simplePaymentUuid: nullable(text("disbursements", "simple_payment_uuid")),
  v1DisbursementId: nullable(text("disbursements", "v1_disbursement_id")),
  fundingUuid: nullable(text("fundings", "funding_uuid")),
  accountLastFour: entry.accountLastFour,
  transactionCode: entry.transactionCode,
  entryClass: entry.entryClass,
  status: entry.status,
  returnCode: entry.returnCode,
});

const ENTRY_SQL = `SELECT e.trace_number, e.direction, e.amount_cents, e.payout_id,
    CASE WHEN d.kind = 'disbursement' THEN d.external_uuid END AS disbursement_uuid,
    CASE WHEN d.kind = 'disbursement' THEN p.payee_uuid END AS payee_uuid,
    CASE WHEN d.kind = 'simple_payment' THEN d.external_uuid END AS simple_payment_uuid,
    CASE WHEN d.kind = 'v1' THEN d.id END AS v1_disbursement_id,
    CASE WHEN fu.id IS NOT NULL THEN COALESCE(fu.funding_uuid, fu.id) END AS funding_uuid,
    e.account_last_four, e.transaction_code, e.entry_class, e.status, e.return_code
  FROM rail_batch_entries e
  LEFT JOIN payouts p ON p.id = e.payout_id
  LEFT JOIN disbursements d ON d.id = p.disbursement_id
  LEFT JOIN fundings fu ON fu.id = e.funding_id
  WHERE e.batch_id = ?
  ORDER BY e.trace_number, e.id`;

/** What a listing is narrowed to; every filter is optional. */
export interface AchFileFilter {
  /** The companies whose files are listed; null: every company (an unscoped operator). */
  readonly companyIds: readonly string[] | null;
  /** Files whose effective entry date is this bank-local date (YYYY-MM-DD). */
  readonly effectiveDate?: string | null;
  readonly status?: AchFileStatus | null;
}

/**
 * A page of files, newest first (created, then insertion order); null when `startingAfter` names
 * no file of the filter's companies.
 */
export async function listAchFiles(
  reader: SqlReader,
  filter: AchFileFilter,
  page: { limit: number; startingAfter: string | null },
): Promise<{ data: AchFileSummary[]; hasMore: boolean } | null> {
  const scope = filter.companyIds === null ? { sql: "1 = 1", args: [] as string[] } : {
    sql: `b.company_id IN (${filter.companyIds.map(() => "?").join(", ") || "NULL"})`,
    args: [...filter.companyIds],
  };
  let cursor: { createdAt: number; seq: number } | null = null;
  if (page.startingAfter !== null) {
    const { rows } = await reader.execute({
      sql: `SELECT b.created_at, b.rowid AS seq FROM ${FROM_FILES} WHERE b.id = ? AND ${scope.sql}`,
      args: [page.startingAfter, ...scope.args],
    });
    if (!rows[0]) return null;
    cursor = { createdAt: Number(rows[0].created_at), seq: Number(rows[0].seq) };
  }
  const { rows } = await reader.execute({
    sql: `SELECT ${SUMMARY_COLUMNS} FROM ${FROM_FILES}
          WHERE ${scope.sql} AND (? IS NULL OR f.effective_date = ?) AND (? IS NULL OR b.status = ?)
            ${cursor ? "AND (b.created_at < ? OR (b.created_at = ? AND b.rowid < ?))" : ""}
          ORDER BY b.created_at DESC, b.rowid DESC LIMIT ?`,
    args: [
      ...scope.args,
      filter.effectiveDate ?? null,
      filter.effectiveDate ?? null,
      filter.status ?? null,
      filter.status ?? null,
      ...(cursor ? [cursor.createdAt, cursor.createdAt, cursor.seq] : []),
      page.limit + 1,
    ],
  });
  return {
    data: rows.slice(0, page.limit).map((row) => toSummary(row)),
    hasMore: rows.length > page.limit,
  };
}

/**
 * One file with its entries, or null. With `companyId` only that company's file is found, so
 * another company's file reads exactly as a missing one.
 */
export async function findAchFile(
  reader: SqlReader,
  fileId: string,
  companyId: string | null = null,
): Promise<AchFileDetail | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${SUMMARY_COLUMNS} FROM ${FROM_FILES}
          WHERE b.id = ? AND (? IS NULL OR b.company_id = ?)`,
    args: [fileId, companyId, companyId],
  });
  if (!rows[0]) return null;
  const entries = await reader.execute({ sql: ENTRY_SQL, args: [fileId] });
  return { ...toSummary(rows[0]), entries: entries.rows.map((row) => toEntry(row)) };
}

/** The company a file belongs to (for an operator command's scope check), or null. */
export async function achFileCompany(
  reader: SqlReader,
  fileId: string,
): Promise<{ companyId: string } | null> {
  const { rows } = await reader.execute({
    sql: "SELECT company_id FROM ach_files WHERE batch_id = ?",
    args: [fileId],
  });
  return rows[0] ? { companyId: String(rows[0].company_id) } : null;
}
