/**
 * Read models of the check register for the company API and the operator CLI: checks, check
 * files (metadata, never the content: it holds the account number) and paid-item exceptions with
 * their ledger effect. Reads of committed data; nothing here writes.
 */
import type { SqlReader } from "../../db/writer.ts";
import { type LedgerEffect, ledgerEffectOf } from "./exceptions.ts";

/** The states a check file moves through, as ACH files do. */
export const checkFileStatuses = [
  "built",
  "transmitting",
  "transmitted",
  "in_doubt",
  "voided",
] as const;
export type CheckFileStatus = (typeof checkFileStatuses)[number];
export const checkFileKinds = ["positive_pay", "print"] as const;
export type CheckFileKind = (typeof checkFileKinds)[number];

/** Files (and exceptions) of one page of a listing, by default and at most. */
export const CHECK_FILES_PAGE_SIZE_DEFAULT = 10;
export const CHECK_FILES_PAGE_SIZE_MAX = 100;

/** One check file as the company and operators see it. */
export interface CheckFileSummary {
  readonly id: string;
  readonly companyId: string;
  readonly companyTin: string;
  readonly kind: CheckFileKind;
  readonly status: CheckFileStatus;
  /** A print file's positive-pay file: it is released only after that one was sent. */
  readonly positivePayFileId: string | null;
  readonly fileName: string;
  readonly sha256: string;
  readonly byteSize: number;
  readonly issueCount: number;
  readonly voidCount: number;
  readonly totalCents: number;
  readonly createdAt: number;
  readonly transmittedAt: number | null;
}

const FILE_SQL = `SELECT b.id, b.company_id, c.tin, f.kind, b.status, f.positive_pay_file_id,
    f.file_name, f.sha256, f.byte_size, f.issue_count, f.void_count, f.total_cents, b.created_at,
    b.transmitted_at
  FROM rail_batches b JOIN check_files f ON f.batch_id = b.id JOIN companies c ON c.id = b.company_id`;

function toFile(row: Readonly<Record<string, unknown>>): CheckFileSummary {
  return {
    id: String(row.id),
    companyId: String(row.company_id),
    companyTin: String(row.tin),
    kind: String(row.kind) as CheckFileKind,
    status: String(row.status) as CheckFileStatus,
    positivePayFileId: row.positive_pay_file_id === null ? null : String(row.positive_pay_file_id),
    fileName: String(row.file_name),
    sha256: String(row.sha256),
    byteSize: Number(row.byte_size),
    issueCount: Number(row.issue_count),
    voidCount: Number(row.void_count),
    totalCents: Number(row.total_cents),
    createdAt: Number(row.created_at),
    transmittedAt: row.transmitted_at === null ? null : Number(row.transmitted_at),
  };
}

export interface CheckFileFilter {
  /** The companies whose files are listed; null: every company (an unscoped operator). */
  readonly companyIds: readonly string[] | null;
  readonly kind?: CheckFileKind | null;
  readonly status?: CheckFileStatus | null;
}

const scopeOf = (companyIds: readonly string[] | null, column: string) =>
  companyIds === null ? { sql: "1 = 1", args: [] as string[] } : {
    sql: `${column} IN (${companyIds.map(() => "?").join(", ") || "NULL"})`,
    args: [...companyIds],
  };

/**
 * A page of check files, newest first (created, then insertion order); null when
 * `startingAfter` names no file of the filter's companies.
 */
export async function listCheckFiles(
  reader: SqlReader,
  filter: CheckFileFilter,
  page: { limit: number; startingAfter: string | null },
): Promise<{ data: CheckFileSummary[]; hasMore: boolean } | null> {
  const scope = scopeOf(filter.companyIds, "b.company_id");
  let cursor: { createdAt: number; seq: number } | null = null;
  if (page.startingAfter !== null) {
    const { rows } = await reader.execute({
      sql: `SELECT b.created_at, b.rowid AS seq FROM rail_batches b
              JOIN check_files f ON f.batch_id = b.id WHERE b.id = ? AND ${scope.sql}`,
      args: [page.startingAfter, ...scope.args],
    });
    if (!rows[0]) return null;
    cursor = { createdAt: Number(rows[0].created_at), seq: Number(rows[0].seq) };
  }
  const { rows } = await reader.execute({
    sql: `${FILE_SQL}
          WHERE ${scope.sql} AND (? IS NULL OR f.kind = ?) AND (? IS NULL OR b.status = ?)
            ${cursor ? "AND (b.created_at < ? OR (b.created_at = ? AND b.rowid < ?))" : ""}
          ORDER BY b.created_at DESC, b.rowid DESC LIMIT ?`,
    args: [
      ...scope.args,
      filter.kind ?? null,
      filter.kind ?? null,
      filter.status ?? null,
      filter.status ?? null,
      ...(cursor ? [cursor.createdAt, cursor.createdAt, cursor.seq] : []),
      page.limit + 1,
    ],
  });
  return { data: rows.slice(0, page.limit).map(toFile), hasMore: rows.length > page.limit };
}

/** One check file, or null; with `companyId` another company's file reads as a missing one. */
export async function findCheckFile(
  reader: SqlReader,
  fileId: string,
  companyId: string | null = null,
): Promise<CheckFileSummary | null> {
  const { rows } = await reader.execute({
    sql: `${FILE_SQL} WHERE b.id = ? AND (? IS NULL OR b.company_id = ?)`,
    args: [fileId, companyId, companyId],
  });
  return rows[0] ? toFile(rows[0]) : null;
}

/** The company a check file belongs to (for an operator command's scope check), or null. */
export async function checkFileCompany(
  reader: SqlReader,
  fileId: string,
): Promise<{ companyId: string } | null> {
  const { rows } = await reader.execute({
    sql: "SELECT company_id FROM check_files WHERE batch_id = ?",
    args: [fileId],
  });
  return rows[0] ? { companyId: String(rows[0].company_id) } : null;
}

/** A paid-item exception as operators see it, with what resolving it as `payment_stands` posts. */
export interface CheckExceptionSummary {
  readonly id: string;
  readonly companyId: string;
  readonly companyTin: string;
  readonly importId: string;
  readonly importFileName: string;
  readonly checkNumber: number;
  readonly checkId: string | null;
  readonly checkStatus: string | null;
  readonly issuedAmountCents: number | null;
  readonly payoutId: string | null;
  readonly kind: string;
  readonly paidAmountCents: number;
  readonly paidDate: string;
  readonly status: "open" | "resolved";
  readonly resolution: string | null;
  readonly ledgerTransactionId: string | null;
  readonly resolvedBy: string | null;
  readonly resolvedAt: number | null;
  readonly createdAt: number;
  /** Open: what `payment_stands` would post; resolved: null (see the ledger transaction). */
  readonly ledgerEffect: LedgerEffect | null;
}

const EXCEPTION_SQL = `SELECT x.id, x.company_id, co.tin, x.import_id, i.file_name, x.check_number,
    x.check_id, k.status AS check_status, k.amount_cents AS issued_amount_cents, k.payout_id,
    (SELECT e.status FROM rail_batch_entries e WHERE e.reference = k.reference) AS entry_status,
    x.kind, x.paid_amount_cents, x.paid_date, x.status, x.resolution, x.ledger_transaction_id,
    x.resolved_by, x.resolved_at, x.created_at
  FROM check_exceptions x JOIN companies co ON co.id = x.company_id
    JOIN check_paid_imports i ON i.id = x.import_id
    LEFT JOIN checks k ON k.id = x.check_id`;

function toException(row: Readonly<Record<string, unknown>>): CheckExceptionSummary {
  const nullableText = (key: string) => (row[key] === null ? null : String(row[key]));
  const status = String(row.status) as "open" | "resolved";
  const checkStatus = nullableText("check_status");
  const kind = String(row.kind);
  const paidAmountCents = Number(row.paid_amount_cents);
  const issuedAmountCents = row.issued_amount_cents === null
    ? null
    : Number(row.issued_amount_cents);
  return {
    id: String(row.id),
    companyId: String(row.company_id),
    companyTin: String(row.tin),
    importId: String(row.import_id),
    importFileName: String(row.file_name),
    checkNumber: Number(row.check_number),
    checkId: nullableText("check_id"),
    checkStatus,
    issuedAmountCents,
    payoutId: nullableText("payout_id"),
    kind,
    paidAmountCents,
    paidDate: String(row.paid_date),
    status,
    resolution: nullableText("resolution"),
    ledgerTransactionId: nullableText("ledger_transaction_id"),
    resolvedBy: nullableText("resolved_by"),
    resolvedAt: row.resolved_at === null ? null : Number(row.resolved_at),
    createdAt: Number(row.created_at),
    ledgerEffect: status === "open"
      ? ledgerEffectOf(
        { kind, paidAmountCents },
        checkStatus === null ? null : {
          status: checkStatus,
          amountCents: issuedAmountCents!,
          entryStatus: nullableText("entry_status"),
        },
      )
      : null,
  };
}

/** Exceptions of the companies (null: every company), oldest first, optionally by status. */
export async function listCheckExceptions(
  reader: SqlReader,
  filter: { companyIds: readonly string[] | null; status?: "open" | "resolved" | null },
  limit: number,
): Promise<CheckExceptionSummary[]> {
  const scope = scopeOf(filter.companyIds, "x.company_id");
  const { rows } = await reader.execute({
    sql: `${EXCEPTION_SQL} WHERE ${scope.sql} AND (? IS NULL OR x.status = ?)
          ORDER BY x.created_at, x.rowid LIMIT ?`,
    args: [...scope.args, filter.status ?? null, filter.status ?? null, limit],
  });
  return rows.map(toException);
}

/** One exception, or null. */
export async function findCheckException(
  reader: SqlReader,
  exceptionId: string,
): Promise<CheckExceptionSummary | null> {
  const { rows } = await reader.execute({
    sql: `${EXCEPTION_SQL} WHERE x.id = ?`,
    args: [exceptionId],
  });
  return rows[0] ? toException(rows[0]) : null;
}
