/**
 * The sandbox bank's prior-day statements: for each test company whose money moves, a BAI2
 * statement of its sandbox settlement and check accounts, written after each bank day's close from
 * what the simulated bank did that day (the ACH files it settled by effective date, the returns it
 * sent, late ones too, the checks it paid and the paid items it took back, the wires it received,
 * and what the payment providers drew or paid back, as their adapters recorded it) and imported
 * like a bank's, so the whole reconciliation loop runs in dev and in the simulation. A difference
 * injected into a day, or a line left out (seams for tests and the simulation), shows up as an
 * exception.
 */
import { type JobHandler, type UpkeepStep, yieldToEventLoop } from "../../db/scheduler.ts";
import { findOpenJob, scheduleJob } from "../../db/scheduler_store.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { statementAccountsOf } from "../ach/bank_settings.ts";
import { readBankSettings } from "../ach/bank_store.ts";
import { bankLocal, bankTime } from "../ach/cutoffs.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Database } from "../../db/client.ts";
import { writeBai2 } from "./bai2_writer.ts";
import { expectedMovesOf, nextDate } from "./expected_store.ts";
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
  /**
   * A move the sandbox bank leaves out of its statement although it made it (a difference for
   * tests and the simulation: the service expects a line the bank does not report).
   */
  readonly omit?: (companyId: string, date: string, move: ExpectedMove) => boolean;
}

const dueAtOf = (date: string, timeZone: string) =>
  bankTime(nextDate(date), SANDBOX_STATEMENT_TIME, timeZone);

/**
 * Plans the company's statements from the bank day of `at` on (never a day the sandbox bank stated
 * already), unless they are planned already. The sandbox bank calls it when it takes an ACH file,
 * and the scheduler's upkeep when any money moves on a company's accounts
 * (sandboxStatementPlanning).
 */
export async function planSandboxStatements(
  tx: WriteTx,
  companyId: string,
  timeZone: string,
  at: number,
): Promise<void> {
  const subject = { companyId, kind: SANDBOX_STATEMENT_JOB, subjectId: companyId };
  if (await findOpenJob(tx, subject) !== null) return;
  const { rows: [stated] } = await tx.execute({
    sql: `SELECT max(d.statement_date) AS last FROM statement_days d
            JOIN statement_imports i ON i.id = d.import_id
           WHERE d.company_id = ? AND i.source = 'sandbox_bank'`,
    args: [companyId],
  });
  const day = bankLocal(at, timeZone).date;
  const after = stated?.last === null || stated?.last === undefined
    ? null
    : nextDate(String(stated.last));
  const date = after !== null && after > day ? after : day;
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
    case "check_reversal":
      return {
        ...common,
        typeCode: "399",
        customerReference: move.reference,
        text: "CHECK PAID REVERSED",
      };
    case "wire":
      return { ...common, typeCode: "195", customerReference: null, text: "INCOMING WIRE" };
    case "unclaimed_remittance":
      // The holder's ACH credit to the state (CCD+), the report's id as its reference.
      return {
        ...common,
        typeCode: "466",
        customerReference: move.reference,
        text: "UNCLAIMED PROPERTY REMITTANCE",
      };
    case "provider_settlement":
      return {
        ...common,
        // A provider draws by an outgoing money transfer and pays back by a miscellaneous credit.
        typeCode: move.direction === "debit" ? "495" : "399",
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
    for (const account of statementAccountsOf(settings)) {
      const { accountNumber } = account;
      const moves = await expectedMovesOf(tx, job.companyId, settings, account, date);
      const lines = [
        ...moves.filter((m) => !m.optional && !deps.omit?.(job.companyId, date, m)).map(lineOf),
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

/**
 * A process's first look reads at most this many of the latest transactions, so a start on a large
 * test database stays quick; a company whose money moved only before then is planned at its next
 * movement.
 */
export const MOVEMENT_FIRST_LOOK_MAX = 10_000;

/**
 * Transactions read per statement, with the event loop's turn between reads: a catastrophe day's
 * cutoff posts 10,000 in a few seconds, and one read over all of them held the service's thread
 * 11-12 ms.
 */
export const MOVEMENT_PAGE_TRANSACTIONS = 1_000;

/** The last ledger transaction (by rowid) each database's upkeep looked at, in this process. */
const movementSeen = new WeakMap<Database, number>();

/**
 * Plans the statements of every test company with money moving on its sandbox accounts (a ledger
 * transaction touching the bank: a wire received, a check paid, a card funded, an instant or
 * PayPal payment, a return, or unclaimed property remitted), from the day it moved, so a company that never sent an ACH file gets
 * its statements too. It reads only the transactions posted since it last looked (the latest
 * MOVEMENT_FIRST_LOOK_MAX the first time in a process); live has no sandbox bank. Returns the
 * companies it planned.
 */
export async function planSandboxStatementsOfMovement(
  database: Database,
  secretBox: SecretBox,
  pageTransactions = MOVEMENT_PAGE_TRANSACTIONS,
): Promise<number> {
  if (database.environment !== "test") return 0;
  const { rows: [top] } = await database.readClient.execute(
    "SELECT max(rowid) AS last FROM ledger_transactions",
  );
  const last = Number(top?.last ?? 0);
  const after = movementSeen.get(database) ?? Math.max(0, last - MOVEMENT_FIRST_LOOK_MAX);
  if (last <= after) return 0;
  // Each company's first movement since the last look, a page of transactions at a time.
  const firstMoved = new Map<string, number>();
  for (let from = after; from < last; from += pageTransactions) {
    if (from > after) await yieldToEventLoop();
    const { rows } = await database.readClient.execute({
      sql: `SELECT t.company_id, min(t.posted_at) AS first_at FROM ledger_transactions t
             WHERE t.rowid > ? AND t.rowid <= ?
               AND EXISTS (SELECT 1 FROM ledger_entries e
                             JOIN ledger_accounts a ON a.id = e.account_id
                              AND a.code IN ('bank', 'unclaimed_remitted')
                            WHERE e.transaction_id = t.id)
             GROUP BY t.company_id`,
      args: [from, Math.min(from + pageTransactions, last)],
    });
    for (const row of rows) {
      const companyId = String(row.company_id);
      const firstAt = Number(row.first_at);
      firstMoved.set(companyId, Math.min(firstMoved.get(companyId) ?? firstAt, firstAt));
    }
  }
  let planned = 0;
  for (const [companyId, firstAt] of [...firstMoved].sort(([a], [b]) => a < b ? -1 : 1)) {
    planned += await database.writer.write(async (tx) => {
      const subject = { companyId, kind: SANDBOX_STATEMENT_JOB, subjectId: companyId };
      if (await findOpenJob(tx, subject) !== null) return 0;
      const settings = await readBankSettings(tx, secretBox, "test", companyId);
      if (settings === null) return 0;
      await planSandboxStatements(tx, companyId, settings.timeZone, firstAt);
      return 1;
    });
  }
  movementSeen.set(database, last);
  return planned;
}

/** The scheduler's upkeep step that starts the sandbox statements of companies whose money moved. */
export function sandboxStatementPlanning(secretBox: SecretBox): UpkeepStep {
  return {
    name: "sandbox statements",
    run: (database) => planSandboxStatementsOfMovement(database, secretBox),
  };
}
