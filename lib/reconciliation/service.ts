/**
 * Importing a bank statement (BAI2 or camt.053) and reconciling each account's day it reports,
 * in one write unit: the unit first claims the file's SHA-256 for the company (a file imported
 * again changes nothing), then, for each account the company's bank settings name, reads what
 * the service expects on that day, matches it with the bank's lines (lib/reconciliation/
 * matching.ts) and keeps the lines, their matches and the exceptions. An account's day is
 * reconciled once; a later file reporting it again is reported, not read for it.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { statementAccountsOf } from "../ach/bank_settings.ts";
import { readBankSettings } from "../ach/bank_store.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { newId, sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { expectedMovesOf } from "./expected_store.ts";
import { reconcileDay } from "./matching.ts";
import { readStatementFile } from "./readers.ts";
import { type BankStatement, STATEMENT_BYTES_MAX } from "./statement.ts";

/** The HMAC purpose of a statement account's key: no other MAC of the service shares it. */
const ACCOUNT_KEY_PURPOSE = "statement-account";

export interface StatementImportDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
}

export interface StatementImportRequest {
  readonly companyId: string;
  readonly content: Uint8Array;
  readonly fileName: string;
  readonly source: "sftp" | "cli" | "console" | "sandbox_bank";
  /** The operator who imported it (null for the service itself). */
  readonly importedBy: string | null;
}

/** One account's day as the import reconciled it. */
export interface ReconciledDay {
  readonly dayId: string;
  readonly accountLastFour: string;
  readonly role: string;
  readonly date: string;
  readonly openingCents: number | null;
  readonly closingCents: number | null;
  readonly lines: number;
  readonly matched: number;
  readonly exceptions: number;
}

/** An account's day the file reported that the import did not read, and why. */
export interface SkippedDay {
  readonly accountLastFour: string;
  readonly date: string;
  readonly reason: string;
}

export interface StatementImportReport {
  readonly importId: string;
  /** True when the company imported the same file (by SHA-256) before: nothing changed. */
  readonly duplicate: boolean;
  readonly sha256: string;
  readonly format: BankStatement["format"];
  readonly days: readonly ReconciledDay[];
  readonly skipped: readonly SkippedDay[];
  readonly matched: number;
  readonly exceptions: number;
}

export type StatementImportRefusal =
  | "file_too_large"
  | "malformed_statement"
  | "bank_settings_not_found";

/** Whether a file of the bank's inbound directory is a statement, by its name. */
export function isStatementFileName(name: string): boolean {
  return /\.(bai2?|xml)$/i.test(name);
}

/** Reads the file, refusing it whole when it is too large or malformed; nothing is written. */
export function readStatement(
  request: Pick<StatementImportRequest, "content" | "fileName">,
): Result<BankStatement, "file_too_large" | "malformed_statement"> {
  const size = request.content.byteLength;
  if (size > STATEMENT_BYTES_MAX) {
    return refuse(
      "file_too_large",
      `${request.fileName} is ${size} bytes; a statement file is at most ${STATEMENT_BYTES_MAX} bytes`,
      { field: "file", details: { bytes: size, limit_bytes: STATEMENT_BYTES_MAX } },
    );
  }
  const read = readStatementFile(request.content);
  if (!read.ok) {
    return refuse(
      "malformed_statement",
      `${request.fileName} line ${read.problem.line}: ${read.problem.reason}; nothing was imported`,
      { field: "file", details: { line: read.problem.line, reason: read.problem.reason } },
    );
  }
  return ok(read.statement);
}

/** The file read (or refused whole) and its SHA-256, what every import path starts with. */
async function readAndHash(
  request: StatementImportRequest,
): Promise<Result<{ statement: BankStatement; sha256: string }, StatementImportRefusal>> {
  const read = readStatement(request);
  if (!read.ok) return read;
  return ok({ statement: read.value, sha256: await sha256Hex(request.content) });
}

/** Imports and reconciles one statement file in one unit. */
export async function importStatement(
  deps: StatementImportDeps,
  request: StatementImportRequest,
  now: number,
): Promise<Result<StatementImportReport, StatementImportRefusal>> {
  const read = await readAndHash(request);
  if (!read.ok) return read;
  return await deps.database.writer.write(
    async (tx): Promise<Result<StatementImportReport, StatementImportRefusal>> => {
      const applied = await applyStatement(tx, deps, { request, ...read.value }, now);
      return applied.ok ? applied : tx.abort(applied);
    },
  );
}

/** What importing the file would do now, computed in a unit that is then undone. */
export async function previewStatement(
  deps: StatementImportDeps,
  request: StatementImportRequest,
  now: number,
): Promise<Result<StatementImportReport, StatementImportRefusal>> {
  const read = await readAndHash(request);
  if (!read.ok) return read;
  const undone = await deps.database.writer.write(async (tx): Promise<Result<null, string>> => {
    const applied = await applyStatement(tx, deps, { request, ...read.value }, now);
    return tx.abort(
      applied.ok ? refuse("preview", "undone", { details: { preview: applied.value } }) : applied,
    );
  });
  if (undone.ok) throw new Error("a preview unit is always undone");
  if (undone.code !== "preview") return undone as Result<never, StatementImportRefusal>;
  return ok((undone.details as { preview: StatementImportReport }).preview);
}

/** Imports a file in the caller's unit (a staged hand import, once a second admin approves). */
export async function importStatementInUnit(
  tx: WriteTx,
  deps: StatementImportDeps,
  request: StatementImportRequest,
  now: number,
): Promise<Result<StatementImportReport, StatementImportRefusal>> {
  const read = await readAndHash(request);
  if (!read.ok) return read;
  return await applyStatement(tx, deps, { request, ...read.value }, now);
}

async function duplicateOf(
  tx: WriteTx,
  companyId: string,
  sha256: string,
): Promise<StatementImportReport> {
  const { rows: [row] } = await tx.execute({
    sql: "SELECT id, format FROM statement_imports WHERE company_id = ? AND sha256 = ?",
    args: [companyId, sha256],
  });
  const { rows } = await tx.execute({
    sql: `SELECT id, account_last_four, account_role, statement_date, opening_cents, closing_cents,
                 line_count, matched_count, exception_count
            FROM statement_days WHERE import_id = ? ORDER BY rowid`,
    args: [String(row.id)],
  });
  const days = rows.map(dayOf);
  return {
    importId: String(row.id),
    duplicate: true,
    sha256,
    format: String(row.format) as BankStatement["format"],
    days,
    skipped: [],
    matched: days.reduce((sum, d) => sum + d.matched, 0),
    exceptions: days.reduce((sum, d) => sum + d.exceptions, 0),
  };
}

const nullableNumber = (value: unknown) => (value === null ? null : Number(value));

const dayOf = (row: Record<string, unknown>): ReconciledDay => ({
  dayId: String(row.id),
  accountLastFour: String(row.account_last_four),
  role: String(row.account_role),
  date: String(row.statement_date),
  openingCents: nullableNumber(row.opening_cents),
  closingCents: nullableNumber(row.closing_cents),
  lines: Number(row.line_count),
  matched: Number(row.matched_count),
  exceptions: Number(row.exception_count),
});

async function applyStatement(
  tx: WriteTx,
  deps: StatementImportDeps,
  input: { request: StatementImportRequest; statement: BankStatement; sha256: string },
  now: number,
): Promise<Result<StatementImportReport, StatementImportRefusal>> {
  const { request, statement, sha256 } = input;
  const settings = await readBankSettings(
    tx,
    deps.secretBox,
    deps.environment,
    request.companyId,
  );
  if (settings === null) {
    return refuse(
      "bank_settings_not_found",
      `the company has no bank settings in ${deps.environment}: bank:set names its statement accounts`,
      { field: "tin" },
    );
  }
  const importId = newId("sti");
  const claimed = await tx.execute({
    sql: `INSERT INTO statement_imports (id, company_id, sha256, format, source, file_name,
            bank_file_id, day_count, line_count, matched_count, exception_count, report,
            imported_by, imported_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, '[]', ?, ?)
          ON CONFLICT (company_id, sha256) DO NOTHING`,
    args: [
      importId,
      request.companyId,
      sha256,
      statement.format,
      request.source,
      request.fileName,
      statement.fileId,
      request.importedBy,
      now,
    ],
  });
  if (claimed.rowsAffected === 0) return ok(await duplicateOf(tx, request.companyId, sha256));

  const roles = new Map(statementAccountsOf(settings).map((a) => [a.accountNumber, a.role]));
  const days: ReconciledDay[] = [];
  const skipped: SkippedDay[] = [];
  let lineCount = 0;
  for (const account of statement.accounts) {
    const lastFour = account.accountNumber.slice(-4);
    const role = roles.get(account.accountNumber);
    if (role === undefined) {
      skipped.push({
        accountLastFour: lastFour,
        date: account.date,
        reason: "not a statement account of the company's bank settings",
      });
      continue;
    }
    const accountKey = await deps.secretBox.mac(ACCOUNT_KEY_PURPOSE, account.accountNumber);
    const { rows: [earlier] } = await tx.execute({
      sql: `SELECT import_id FROM statement_days
             WHERE company_id = ? AND account_key = ? AND statement_date = ?`,
      args: [request.companyId, accountKey, account.date],
    });
    if (earlier) {
      skipped.push({
        accountLastFour: lastFour,
        date: account.date,
        reason: `reconciled already from import ${String(earlier.import_id)}`,
      });
      continue;
    }
    const expected = await expectedMovesOf(tx, request.companyId, settings, {
      accountNumber: account.accountNumber,
      role,
    }, account.date);
    const day = reconcileDay(account.lines, expected);
    const dayId = newId("sdy");
    const credit = account.lines.filter((l) => l.direction === "credit")
      .reduce((sum, l) => sum + l.amountCents, 0);
    const debit = account.lines.filter((l) => l.direction === "debit")
      .reduce((sum, l) => sum + l.amountCents, 0);
    const expectedNet = expected.filter((m) => !m.optional)
      .reduce((sum, m) => sum + (m.direction === "credit" ? m.amountCents : -m.amountCents), 0);
    const exceptions = day.unmatchedLines.length + day.unmatchedExpected.length;
    await tx.execute({
      sql: `INSERT INTO statement_days (id, company_id, import_id, account_key, account_last_four,
              account_role, statement_date, opening_cents, closing_cents, credit_cents, debit_cents,
              expected_net_cents, line_count, matched_count, exception_count, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        dayId,
        request.companyId,
        importId,
        accountKey,
        lastFour,
        role,
        account.date,
        account.openingCents,
        account.closingCents,
        credit,
        debit,
        expectedNet,
        account.lines.length,
        day.matched.length,
        exceptions,
        now,
      ],
    });
    const matchOf = new Map(day.matched.map((m) => [m.lineIndex, m]));
    const lineIds = account.lines.map(() => newId("stl"));
    for (const [index, line] of account.lines.entries()) {
      const match = matchOf.get(index);
      tx.defer({
        sql: `INSERT INTO statement_lines (id, day_id, company_id, file_line, direction,
                amount_cents, type_code, kind, bank_reference, customer_reference, text,
                match_kind, match_subject_id, match_reason)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        args: [
          lineIds[index],
          dayId,
          request.companyId,
          line.line,
          line.direction,
          line.amountCents,
          line.typeCode,
          line.kind,
          line.bankReference,
          line.customerReference,
          line.text,
          match?.expected.kind ?? null,
          match?.expected.subjectId ?? null,
          match?.reason ?? null,
        ],
      });
    }
    const exception = (row: {
      side: "bank" | "service";
      kind: string;
      lineId: string | null;
      subjectId: string | null;
      direction: string;
      amountCents: number;
      reason: string;
    }) =>
      tx.defer({
        sql: `INSERT INTO recon_exceptions (id, company_id, day_id, statement_date,
                account_last_four, side, kind, line_id, subject_id, direction, amount_cents, reason,
                status, created_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)`,
        args: [
          newId("rex"),
          request.companyId,
          dayId,
          account.date,
          lastFour,
          row.side,
          row.kind,
          row.lineId,
          row.subjectId,
          row.direction,
          row.amountCents,
          row.reason,
          now,
        ],
      });
    for (const unmatched of day.unmatchedLines) {
      const line = account.lines[unmatched.lineIndex];
      exception({
        side: "bank",
        kind: line.kind,
        lineId: lineIds[unmatched.lineIndex],
        subjectId: null,
        direction: line.direction,
        amountCents: line.amountCents,
        reason: unmatched.reason,
      });
    }
    for (const unmatched of day.unmatchedExpected) {
      exception({
        side: "service",
        kind: unmatched.expected.kind,
        lineId: null,
        subjectId: unmatched.expected.subjectId,
        direction: unmatched.expected.direction,
        amountCents: unmatched.expected.amountCents,
        reason: unmatched.reason,
      });
    }
    lineCount += account.lines.length;
    days.push({
      dayId,
      accountLastFour: lastFour,
      role,
      date: account.date,
      openingCents: account.openingCents,
      closingCents: account.closingCents,
      lines: account.lines.length,
      matched: day.matched.length,
      exceptions,
    });
  }
  const matched = days.reduce((sum, d) => sum + d.matched, 0);
  const exceptions = days.reduce((sum, d) => sum + d.exceptions, 0);
  await tx.execute({
    sql: `UPDATE statement_imports SET day_count = ?, line_count = ?, matched_count = ?,
            exception_count = ?, report = ? WHERE id = ?`,
    args: [days.length, lineCount, matched, exceptions, JSON.stringify(skipped), importId],
  });
  return ok({
    importId,
    duplicate: false,
    sha256,
    format: statement.format,
    days,
    skipped,
    matched,
    exceptions,
  });
}
