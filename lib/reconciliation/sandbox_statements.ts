/**
 * The sandbox bank's prior-day statements: for each test company with activity, a BAI2 statement of
 * its sandbox settlement and check accounts, written after each bank day's close from what the
 * simulated bank did that day (the ACH files it settled by effective date, the returns it sent, the
 * checks it paid, the wires it received) and imported like a bank's, so the whole reconciliation
 * loop runs in dev and in the simulation. A difference injected into a day (a seam for tests and
 * the simulation) shows up as an exception.
 */
import type { JobHandler } from "../../db/scheduler.ts";
import { findOpenJob, scheduleJob } from "../../db/scheduler_store.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { statementAccountsOf } from "../ach/bank_settings.ts";
import { readBankSettings } from "../ach/bank_store.ts";
import { bankLocal, bankTime } from "../ach/cutoffs.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Database } from "../../db/client.ts";
import { writeBai2 } from "./bai2_writer.ts";
import { expectedCheckMoves, expectedSettlementMoves, nextDate } from "./expected_store.ts";
import type { ExpectedMove } from "./matching.ts";
import { importStatementInUnit } from "./service.ts";
import { kindOfBaiTypeCode, type StatementLine } from "./statement.ts";

export const SANDBOX_STATEMENT_JOB = "recon.sandbox_statement";

/** The sandbox bank writes a day's statement at this bank-local time of the next day. */
export const SANDBOX_STATEMENT_TIME = "02:00";
/** A company whose days showed no movement this many days in a row gets no more statements. */
export const SANDBOX_STATEMENT_IDLE_DAYS_MAX = 7;

/** A line the sandbox bank adds to a day it did not do: an injected difference. */
export interface InjectedLine {
  readonly accountNumber: string;
  readonly typeCode: string;
  readonly amountCents: number;
  readonly text: string;
}

export interface SandboxStatementDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  /** Differences to inject into a company's day (tests and the simulation); none by default. */
  readonly inject?: (companyId: string, date: string) => readonly InjectedLine[];
}

const dueAtOf = (date: string, timeZone: string) =>
  bankTime(nextDate(date), SANDBOX_STATEMENT_TIME, timeZone);

/**
 * Plans the company's statements from the bank day of `at` on, unless they are planned already
 * (the sandbox bank calls it when it takes a file).
 */
export async function planSandboxStatements(
  tx: WriteTx,
  companyId: string,
  timeZone: string,
  at: number,
): Promise<void> {
  const subject = { companyId, kind: SANDBOX_STATEMENT_JOB, subjectId: companyId };
  if (await findOpenJob(tx, subject) !== null) return;
  const date = bankLocal(at, timeZone).date;
  await scheduleJob(
    tx,
    { ...subject, dueAt: dueAtOf(date, timeZone), payload: { date, idle: 0 } },
    at,
  );
}

/** The line the sandbox bank writes for a move it made. */
function lineOf(move: ExpectedMove): Omit<StatementLine, "line" | "kind"> {
  const common = { amountCents: move.amountCents, direction: move.direction, bankReference: null };
  switch (move.kind) {
    case "ach_credit_file":
      return {
        ...common,
        typeCode: "466",
        customerReference: null,
        text: `ACH SETTLEMENT ${move.reference}`,
      };
    case "ach_debit_file":
      return {
        ...common,
        typeCode: "166",
        customerReference: null,
        text: `ACH SETTLEMENT ${move.reference}`,
      };
    case "ach_return":
      return {
        ...common,
        typeCode: move.direction === "credit" ? "168" : "468",
        customerReference: move.reference,
        text: "ACH RETURN ITEM",
      };
    case "check_paid":
      return { ...common, typeCode: "475", customerReference: move.reference, text: "CHECK PAID" };
    case "wire":
      return { ...common, typeCode: "195", customerReference: null, text: "INCOMING WIRE" };
    case "provider_settlement":
      return {
        ...common,
        typeCode: "495",
        customerReference: move.reference,
        text: move.description,
      };
  }
}

/** The closing balance of the account's last day the sandbox bank stated, 0 before the first. */
async function lastClosing(
  reader: SqlReader,
  companyId: string,
  lastFour: string,
): Promise<number> {
  const { rows } = await reader.execute({
    sql:
      `SELECT d.closing_cents FROM statement_days d JOIN statement_imports i ON i.id = d.import_id
           WHERE d.company_id = ? AND d.account_last_four = ? AND i.source = 'sandbox_bank'
           ORDER BY d.statement_date DESC LIMIT 1`,
    args: [companyId, lastFour],
  });
  return rows[0] ? Number(rows[0].closing_cents ?? 0) : 0;
}

/**
 * The handler of `recon.sandbox_statement` (subject: the company; payload: the day): writes the
 * day's statement, imports it in the job's unit, and plans the next day while the company moves.
 */
export function sandboxStatementJob(deps: SandboxStatementDeps): JobHandler {
  return async (tx, job) => {
    const date = String(job.payload.date);
    const settings = await readBankSettings(tx, deps.secretBox, deps.environment, job.companyId);
    if (settings === null) return;
    let moved = 0;
    const accounts = [];
    for (const { accountNumber, role } of statementAccountsOf(settings)) {
      const moves: ExpectedMove[] = [];
      if (role !== "check") {
        moves.push(...await expectedSettlementMoves(tx, job.companyId, date, settings.timeZone));
      }
      if (role === "check" || role === "settlement_check") {
        moves.push(...await expectedCheckMoves(tx, job.companyId, date));
      }
      const lines = [
        ...moves.filter((m) => !m.optional).map(lineOf),
        ...(deps.inject?.(job.companyId, date) ?? []).filter((i) =>
          i.accountNumber === accountNumber
        )
          .map((i) => ({
            amountCents: i.amountCents,
            direction: Number(i.typeCode) < 400 ? "credit" as const : "debit" as const,
            bankReference: null,
            typeCode: i.typeCode,
            customerReference: null,
            text: i.text,
          })),
      ].map((l) => ({ ...l, line: 0, kind: kindOfBaiTypeCode(Number(l.typeCode)) }));
      moved += lines.length;
      const opening = await lastClosing(tx, job.companyId, accountNumber.slice(-4));
      const net = lines.reduce(
        (s, l) => s + (l.direction === "credit" ? l.amountCents : -l.amountCents),
        0,
      );
      accounts.push({ accountNumber, openingCents: opening, closingCents: opening + net, lines });
    }
    const created = bankLocal(job.runUntil, settings.timeZone);
    const content = writeBai2({
      senderId: settings.odfiRouting,
      receiverId: settings.immediateOrigin.trim(),
      createdDate: created.date,
      createdTime: created.time,
      fileId: date.replaceAll("-", ""),
      asOfDate: date,
    }, accounts);
    const imported = await importStatementInUnit(tx, deps, {
      companyId: job.companyId,
      content: new TextEncoder().encode(content),
      fileName: `SANDBOX_PRIOR_DAY_${date}.bai`,
      source: "sandbox_bank",
      importedBy: null,
    }, job.runUntil);
    // The sandbox bank wrote the file itself: a refusal is a bug, and parks the job for a look.
    if (!imported.ok) throw new Error(`sandbox statement refused: ${imported.message}`);
    const idle = moved === 0 ? Number(job.payload.idle ?? 0) + 1 : 0;
    if (idle >= SANDBOX_STATEMENT_IDLE_DAYS_MAX) return;
    const next = nextDate(date);
    await scheduleJob(tx, {
      companyId: job.companyId,
      kind: SANDBOX_STATEMENT_JOB,
      subjectId: job.companyId,
      dueAt: dueAtOf(next, settings.timeZone),
      payload: { date: next, idle },
    }, job.runUntil);
  };
}
