/**
 * The console's Bank files page: the ACH files of the operator's companies (metadata and totals,
 * never the content), one file with its entries (account numbers' last four only), and the
 * imported return and notice-of-change files. Reads only; file actions run as the CLI's ach:*.
 */
import type { Client, InValue } from "@libsql/client";
import {
  type AchFileDetail,
  type AchFileStatus,
  achFileStatuses,
  findAchFile,
} from "../ach/views.ts";
import { type AttemptView, transmissionsOf } from "../rails/batch_views.ts";
import { ACH_IMPORT_RESUME_JOB, type UnfinishedImport } from "../ach/import_rules.ts";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export { type AchFileDetail, type AchFileStatus, achFileStatuses };

export const achFileSorts: Sortable = {
  created: "b.created_at",
  effective: "f.effective_date",
  total: "f.credit_total_cents + f.debit_total_cents",
  status: "b.status",
};

export interface AchFileRow {
  readonly id: string;
  readonly companyName: string;
  readonly fileName: string;
  readonly status: AchFileStatus;
  readonly effectiveDate: string;
  readonly cutoffKind: "same_day" | "next_day";
  readonly entryCount: number;
  readonly creditTotalCents: number;
  readonly debitTotalCents: number;
  readonly approvalId: string | null;
  readonly transmittedAt: number | null;
  readonly createdAt: number;
}

/** A page of the scope's ACH files, of one status when given. */
export async function listConsoleAchFiles(
  client: Client,
  filter: { companyIds: readonly string[] | null; status?: AchFileStatus },
  window: PageWindow,
): Promise<Page<AchFileRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    scopeCondition("b.company_id", filter.companyIds),
  ];
  if (filter.status) conditions.push({ sql: "b.status = ?", args: [filter.status] });
  const where = allOf(conditions);
  const order = orderAndPage(window, achFileSorts, "b.rowid");
  const { rows } = await client.execute({
    sql: `SELECT b.id, c.name AS company_name, f.file_name, b.status, f.effective_date,
            f.cutoff_kind, f.entry_count, f.credit_total_cents, f.debit_total_cents, f.approval_id,
            b.transmitted_at, b.created_at
          FROM rail_batches b JOIN ach_files f ON f.batch_id = b.id
            JOIN companies c ON c.id = b.company_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  return pageOf(
    window,
    rows.map((row) => ({
      id: String(row.id),
      companyName: String(row.company_name),
      fileName: String(row.file_name),
      status: String(row.status) as AchFileStatus,
      effectiveDate: String(row.effective_date),
      cutoffKind: String(row.cutoff_kind) as "same_day" | "next_day",
      entryCount: Number(row.entry_count),
      creditTotalCents: Number(row.credit_total_cents),
      debitTotalCents: Number(row.debit_total_cents),
      approvalId: row.approval_id === null ? null : String(row.approval_id),
      transmittedAt: row.transmitted_at === null ? null : Number(row.transmitted_at),
      createdAt: Number(row.created_at),
    })),
  );
}

/** One ACH file of the scope with its entries, or null (absent, or another company's). */
export async function findConsoleAchFile(
  client: Client,
  id: string,
  companyIds: readonly string[] | null,
): Promise<(AchFileDetail & { error: string | null; attempts: AttemptView[] }) | null> {
  const file = await findAchFile(client, id);
  if (!file) return null;
  if (companyIds !== null && !companyIds.includes(file.companyId)) return null;
  const transmissions = (await transmissionsOf(client, [id])).get(id);
  return { ...file, error: transmissions?.error ?? null, attempts: transmissions?.attempts ?? [] };
}

export const achImportSorts: Sortable = { imported: "i.imported_at", returns: "i.return_count" };

export interface AchImportRow {
  readonly id: string;
  readonly companyName: string | null;
  readonly fileName: string;
  readonly source: string;
  readonly returnCount: number;
  readonly correctionCount: number;
  readonly appliedCount: number;
  /** Entries reported and not applied, each with its reason. */
  readonly notApplied: { trace?: string; reason?: string }[];
  readonly importedAt: number;
  /** Null once the import is complete; its counts are then the file's whole. */
  readonly unfinished:
    | (UnfinishedImport & {
      /** When its resume job takes it up by itself; null when none is due (parked, or none). */
      readonly resumesAt: number | null;
    })
    | null;
}

/**
 * A page of the imported return and notice-of-change files. A file that named no known company
 * shows to an operator of every company only.
 */
export async function listAchImports(
  client: Client,
  companyIds: readonly string[] | null,
  window: PageWindow,
): Promise<Page<AchImportRow>> {
  const where = allOf([scopeCondition("i.company_id", companyIds)]);
  const order = orderAndPage(window, achImportSorts, "i.rowid");
  const { rows } = await client.execute({
    sql: `SELECT i.id, c.name AS company_name, i.file_name, i.source, i.return_count,
            i.correction_count, i.applied_count, i.report, i.imported_at, i.progress,
            j.due_at AS resume_due_at, j.lease_until AS resume_lease_until
          FROM ach_imports i LEFT JOIN companies c ON c.id = i.company_id
            LEFT JOIN scheduled_jobs j ON i.progress IS NOT NULL AND j.id = (
              SELECT id FROM scheduled_jobs WHERE kind = ? AND subject_id = i.id AND done_at IS NULL
              LIMIT 1)
          WHERE ${where.sql} ${order.sql}`,
    args: [ACH_IMPORT_RESUME_JOB, ...where.args, ...order.args],
  });
  return pageOf(
    window,
    rows.map((row) => {
      const report = JSON.parse(String(row.report)) as unknown;
      return {
        id: String(row.id),
        companyName: row.company_name === null ? null : String(row.company_name),
        fileName: String(row.file_name),
        source: String(row.source),
        returnCount: Number(row.return_count),
        correctionCount: Number(row.correction_count),
        appliedCount: Number(row.applied_count),
        notApplied: Array.isArray(report) ? report : [],
        importedAt: Number(row.imported_at),
        unfinished: row.progress === null ? null : {
          state: row.resume_lease_until === null ? "stopped" : "resuming",
          entriesDone: Number(JSON.parse(String(row.progress)).entries_done),
          entries: Number(row.return_count) + Number(row.correction_count),
          resumesAt: row.resume_due_at === null || row.resume_lease_until !== null
            ? null
            : Number(row.resume_due_at),
        },
      } satisfies AchImportRow;
    }),
  );
}

export const checkSorts: Sortable = {
  issued: "k.issued_at",
  number: "k.check_number",
  amount: "k.amount_cents",
};

export const CHECK_STATES = ["issued", "paid", "voided", "stale"] as const;
export type CheckState = typeof CHECK_STATES[number];

export interface CheckRow {
  readonly id: string;
  readonly companyName: string;
  readonly checkNumber: number;
  readonly kind: "postal" | "digital";
  readonly payeeName: string;
  readonly amountCents: number;
  readonly status: CheckState;
  readonly issueDate: string;
  readonly payoutId: string;
  readonly paidDate: string | null;
  readonly paidAmountCents: number | null;
  readonly voidReason: string | null;
}

/** A page of the scope's check register (issue 19), of one status when given. */
export async function listConsoleChecks(
  client: Client,
  filter: { companyIds: readonly string[] | null; status?: CheckState },
  window: PageWindow,
): Promise<Page<CheckRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    scopeCondition("k.company_id", filter.companyIds),
  ];
  if (filter.status) conditions.push({ sql: "k.status = ?", args: [filter.status] });
  const where = allOf(conditions);
  const order = orderAndPage(window, checkSorts, "k.rowid");
  const { rows } = await client.execute({
    sql: `SELECT k.id, c.name AS company_name, k.check_number, k.kind, k.payee_name,
            k.amount_cents, k.status, k.issue_date, k.payout_id, k.paid_date,
            k.paid_amount_cents, k.void_reason
          FROM checks k JOIN companies c ON c.id = k.company_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  const text = (value: unknown) => value === null ? null : String(value);
  return pageOf(
    window,
    rows.map((row) => ({
      id: String(row.id),
      companyName: String(row.company_name),
      checkNumber: Number(row.check_number),
      kind: String(row.kind) as "postal" | "digital",
      payeeName: String(row.payee_name),
      amountCents: Number(row.amount_cents),
      status: String(row.status) as CheckState,
      issueDate: String(row.issue_date),
      payoutId: String(row.payout_id),
      paidDate: text(row.paid_date),
      paidAmountCents: row.paid_amount_cents === null ? null : Number(row.paid_amount_cents),
      voidReason: text(row.void_reason),
    })),
  );
}

export const checkFileSorts: Sortable = { created: "b.created_at", status: "b.status" };

export interface CheckFileRow {
  readonly id: string;
  readonly companyName: string;
  readonly kind: string;
  readonly status: string;
  readonly fileName: string;
  readonly issueCount: number;
  readonly voidCount: number;
  readonly totalCents: number;
  readonly createdAt: number;
  readonly transmittedAt: number | null;
}

/** A page of the scope's check files (positive pay and print), metadata only. */
export async function listConsoleCheckFiles(
  client: Client,
  companyIds: readonly string[] | null,
  window: PageWindow,
): Promise<Page<CheckFileRow>> {
  const where = allOf([scopeCondition("b.company_id", companyIds)]);
  const order = orderAndPage(window, checkFileSorts, "b.rowid");
  const { rows } = await client.execute({
    sql: `SELECT b.id, c.name AS company_name, f.kind, b.status, f.file_name, f.issue_count,
            f.void_count, f.total_cents, b.created_at, b.transmitted_at
          FROM rail_batches b JOIN check_files f ON f.batch_id = b.id
            JOIN companies c ON c.id = b.company_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  return pageOf(
    window,
    rows.map((row) => ({
      id: String(row.id),
      companyName: String(row.company_name),
      kind: String(row.kind),
      status: String(row.status),
      fileName: String(row.file_name),
      issueCount: Number(row.issue_count),
      voidCount: Number(row.void_count),
      totalCents: Number(row.total_cents),
      createdAt: Number(row.created_at),
      transmittedAt: row.transmitted_at === null ? null : Number(row.transmitted_at),
    })),
  );
}

export const paypalBatchSorts: Sortable = {
  created: "b.created_at",
  total: "b.total_cents",
  status: "b.status",
};

export interface PaypalBatchRow {
  readonly id: string;
  readonly companyName: string;
  readonly status: string;
  readonly railReference: string | null;
  readonly entryCount: number;
  readonly totalCents: number;
  readonly createdAt: number;
  readonly transmittedAt: number | null;
}

/** A page of the scope's PayPal payout batches (Venmo's too), metadata only. */
export async function listConsolePaypalBatches(
  client: Client,
  companyIds: readonly string[] | null,
  window: PageWindow,
): Promise<Page<PaypalBatchRow>> {
  const where = allOf([
    { sql: "b.rail = 'paypal'", args: [] },
    scopeCondition("b.company_id", companyIds),
  ]);
  const order = orderAndPage(window, paypalBatchSorts, "b.rowid");
  const { rows } = await client.execute({
    sql: `SELECT b.id, c.name AS company_name, b.status, b.rail_reference, b.entry_count,
            b.total_cents, b.created_at, b.transmitted_at
          FROM rail_batches b JOIN companies c ON c.id = b.company_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  return pageOf(
    window,
    rows.map((row) => ({
      id: String(row.id),
      companyName: String(row.company_name),
      status: String(row.status),
      railReference: row.rail_reference === null ? null : String(row.rail_reference),
      entryCount: Number(row.entry_count),
      totalCents: Number(row.total_cents),
      createdAt: Number(row.created_at),
      transmittedAt: row.transmitted_at === null ? null : Number(row.transmitted_at),
    })),
  );
}
