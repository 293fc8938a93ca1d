/**
 * The check register of a company in one environment: numbers given once, consecutively, from
 * check_sequences; each check `issued` until the bank reports it `paid`, an operator voids it,
 * or it goes `stale`. A void or a stale check is told to the bank in the next positive-pay file,
 * and only once that file was sent does its payout fail and get re-offered (lib/checks/jobs.ts).
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { checks } from "../../db/schema.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { CHECK_NUMBER_MAX } from "./account.ts";
import { CHECK_STALE_JOB, ensureCheckCutoffPlanned } from "./schedule.ts";
import { planLobCancel } from "../lob/cancel_plan.ts";

export type CheckRecord = typeof checks.$inferSelect;
export type CheckStatus = CheckRecord["status"];
export type CheckKind = CheckRecord["kind"];

export const CHECK_STATUSES: readonly CheckStatus[] = ["issued", "paid", "voided", "stale"];

const DAY_MS = 86_400_000;
/** A register listing gives at most this many checks a page. */
export const CHECK_LIST_LIMIT_MAX = 100;
/** A void's reason, kept on the check and in the audit log. */
export const VOID_REASON_LENGTH_MAX = 500;

const column = columnsOf(checks);
const toCheck = rowMapper({
  id: column.id,
  companyId: column.companyId,
  checkNumber: column.checkNumber,
  payoutId: column.payoutId,
  reference: column.reference,
  kind: column.kind,
  amountCents: column.amountCents,
  payeeName: column.payeeName,
  memo: column.memo,
  postageCode: column.postageCode,
  status: column.status,
  issueDate: column.issueDate,
  issuedAt: column.issuedAt,
  issueFileId: column.issueFileId,
  printFileId: column.printFileId,
  paidDate: column.paidDate,
  paidAmountCents: column.paidAmountCents,
  paidAt: column.paidAt,
  voidedAt: column.voidedAt,
  voidReason: column.voidReason,
  voidedBy: column.voidedBy,
  voidFileId: column.voidFileId,
  staleAt: column.staleAt,
  createdAt: column.createdAt,
});
const COLUMNS = toCheck.columns.join(", ");

/** What a submission gives of its check; the number comes from the register. */
export interface NewCheck {
  readonly companyId: string;
  readonly payoutId: string;
  /** The submission's reference: asking again with it gives the same check. */
  readonly reference: string;
  readonly kind: CheckKind;
  readonly amountCents: number;
  readonly payeeName: string;
  readonly memo: string | null;
  readonly postageCode: string | null;
  /** Bank-local, YYYY-MM-DD. */
  readonly issueDate: string;
  /** The check account's first number (the register starts there, and skips up to it if raised). */
  readonly firstCheckNumber: number;
  /** The check account's stale days: when the check's stale job is due. */
  readonly staleDays: number;
}

async function checkWhere(
  reader: SqlReader,
  where: string,
  args: (string | number)[],
): Promise<CheckRecord | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${COLUMNS} FROM checks WHERE ${where} LIMIT 1`,
    args,
  });
  return rows[0] ? toCheck(rows[0]) : null;
}

/**
 * Gives the submission its check, in the caller's unit: the register's next number (never one
 * given before, none skipped), or the check it already has. The stale job is scheduled with it.
 */
export async function issueCheck(tx: WriteTx, input: NewCheck, now: number): Promise<CheckRecord> {
  const existing = await checkWhere(tx, "reference = ?", [input.reference]);
  if (existing) return existing;
  // One statement reads and moves the sequence: the one writer runs units one at a time, so two
  // submissions can never read the same next number.
  const { rows } = await tx.execute({
    sql: `INSERT INTO check_sequences (company_id, next_number) VALUES (?, ? + 1)
          ON CONFLICT (company_id) DO UPDATE SET next_number = max(next_number, ?) + 1
          RETURNING next_number`,
    args: [input.companyId, input.firstCheckNumber, input.firstCheckNumber],
  });
  const checkNumber = Number(rows[0].next_number) - 1;
  if (checkNumber > CHECK_NUMBER_MAX) {
    throw new Error(
      `the check register of ${input.companyId} is past ${CHECK_NUMBER_MAX}: no number is left`,
    );
  }
  const row: CheckRecord = {
    id: newId("chk"),
    companyId: input.companyId,
    checkNumber,
    payoutId: input.payoutId,
    reference: input.reference,
    kind: input.kind,
    amountCents: input.amountCents,
    payeeName: input.payeeName,
    memo: input.memo,
    postageCode: input.postageCode,
    status: "issued",
    issueDate: input.issueDate,
    issuedAt: now,
    issueFileId: null,
    printFileId: null,
    paidDate: null,
    paidAmountCents: null,
    paidAt: null,
    voidedAt: null,
    voidReason: null,
    voidedBy: null,
    voidFileId: null,
    staleAt: null,
    createdAt: now,
  };
  await tx.db.insert(checks).values(row);
  await scheduleJob(tx, {
    companyId: input.companyId,
    kind: CHECK_STALE_JOB,
    subjectId: row.id,
    dueAt: now + input.staleDays * DAY_MS,
  }, now);
  return row;
}

/** The company's check of that number, or null. */
export function findCheckByNumber(
  reader: SqlReader,
  companyId: string,
  checkNumber: number,
): Promise<CheckRecord | null> {
  return checkWhere(reader, "company_id = ? AND check_number = ?", [companyId, checkNumber]);
}

/** The check a submission was given, or null. */
export function findCheckByReference(
  reader: SqlReader,
  reference: string,
): Promise<CheckRecord | null> {
  return checkWhere(reader, "reference = ?", [reference]);
}

/** The check of a payout's latest submission, or null (a payout may have had several checks). */
export function latestCheckOfPayout(
  reader: SqlReader,
  payoutId: string,
): Promise<CheckRecord | null> {
  return checkWhere(reader, "payout_id = ? ORDER BY check_number DESC", [payoutId]);
}

export interface CheckFilters {
  readonly status?: CheckStatus;
  readonly checkNumber?: number;
  /** Issue dates from and to (bank-local YYYY-MM-DD, both included). */
  readonly issuedFrom?: string;
  readonly issuedTo?: string;
  /** Checks numbered after this one (the page cursor). */
  readonly afterNumber?: number;
  /** At most CHECK_LIST_LIMIT_MAX; that by default. */
  readonly limit?: number;
}

/** The company's checks in number order, filtered. */
export async function listChecks(
  reader: SqlReader,
  companyId: string,
  filters: CheckFilters = {},
): Promise<CheckRecord[]> {
  const where = ["company_id = ?"];
  const args: (string | number)[] = [companyId];
  if (filters.status !== undefined) {
    where.push("status = ?");
    args.push(filters.status);
  }
  if (filters.checkNumber !== undefined) {
    where.push("check_number = ?");
    args.push(filters.checkNumber);
  }
  if (filters.issuedFrom !== undefined) {
    where.push("issue_date >= ?");
    args.push(filters.issuedFrom);
  }
  if (filters.issuedTo !== undefined) {
    where.push("issue_date <= ?");
    args.push(filters.issuedTo);
  }
  if (filters.afterNumber !== undefined) {
    where.push("check_number > ?");
    args.push(filters.afterNumber);
  }
  const limit = Math.min(filters.limit ?? CHECK_LIST_LIMIT_MAX, CHECK_LIST_LIMIT_MAX);
  const { rows } = await reader.execute({
    sql: `SELECT ${COLUMNS} FROM checks WHERE ${where.join(" AND ")}
          ORDER BY check_number LIMIT ?`,
    args: [...args, limit],
  });
  return rows.map(toCheck);
}

export type VoidRefusal = "check_not_found" | "check_paid";

export interface CheckVoid {
  readonly companyId: string;
  readonly checkNumber: number;
  readonly reason: string;
  /** Who voids it (an operator's id or e-mail, `system` for the pipeline), kept on the check. */
  readonly operator: string;
}

/**
 * Voids an issued check in the caller's unit and queues the void for the next positive-pay file;
 * its payout fails `check_voided` once that file was sent. A voided or stale check is answered as
 * it is (the bank is told once); a paid one is refused: the money has left.
 */
export async function voidCheck(
  tx: WriteTx,
  input: CheckVoid,
  now: number,
): Promise<Result<CheckRecord, VoidRefusal>> {
  const check = await findCheckByNumber(tx, input.companyId, input.checkNumber);
  if (!check) {
    return refuse("check_not_found", `no check number ${input.checkNumber} in the register`, {
      field: "number",
    });
  }
  if (check.status === "paid") {
    return refuse(
      "check_paid",
      `check ${input.checkNumber} was paid on ${check.paidDate}; a paid check cannot be voided`,
      { field: "number", details: { status: check.status } },
    );
  }
  if (check.status !== "issued") return ok(check);
  const voided: CheckRecord = {
    ...check,
    status: "voided",
    voidedAt: now,
    voidReason: input.reason,
    voidedBy: input.operator,
  };
  await tx.execute({
    sql: `UPDATE checks SET status = 'voided', voided_at = ?, void_reason = ?, voided_by = ?
          WHERE id = ? AND status = 'issued'`,
    args: [now, input.reason, input.operator, check.id],
  });
  await ensureCheckCutoffPlanned(tx, check.companyId, now);
  // A check its mail provider may still hold is stopped there too, before it is mailed.
  await planLobCancel(tx, check, now);
  return ok(voided);
}

/** An issued check past its stale days goes `stale`; its void goes in the next positive-pay file. */
export async function markCheckStale(
  tx: WriteTx,
  checkId: string,
  now: number,
): Promise<boolean> {
  const changed = await tx.execute({
    sql: `UPDATE checks SET status = 'stale', stale_at = ? WHERE id = ? AND status = 'issued'`,
    args: [now, checkId],
  });
  if (changed.rowsAffected === 0) return false;
  const { rows } = await tx.execute({
    sql: "SELECT company_id, print_file_id FROM checks WHERE id = ?",
    args: [checkId],
  });
  const companyId = String(rows[0].company_id);
  await ensureCheckCutoffPlanned(tx, companyId, now);
  await planLobCancel(tx, {
    id: checkId,
    companyId,
    printFileId: rows[0].print_file_id === null ? null : String(rows[0].print_file_id),
  }, now);
  return true;
}

/** A check by id, or null. */
export function loadCheck(reader: SqlReader, checkId: string): Promise<CheckRecord | null> {
  return checkWhere(reader, "id = ?", [checkId]);
}

/**
 * The check of a submission whose queued entry was voided before any file told the bank of it (its
 * payout was canceled or offered again): voided in the caller's unit. No void goes to the bank,
 * which never heard of the check, and its number stays used.
 */
export async function voidUnsentCheck(
  tx: WriteTx,
  reference: string,
  reason: string,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE checks SET status = 'voided', voided_at = ?, void_reason = ?, voided_by = 'system'
          WHERE reference = ? AND status = 'issued' AND issue_file_id IS NULL`,
    args: [now, reason, reference],
  });
}
