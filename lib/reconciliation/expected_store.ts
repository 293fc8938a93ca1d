/**
 * What the service expects the bank to have posted to a company's account on a bank day, read from
 * the rails' own records in the unit that reconciles the day: ACH files by effective date, returns
 * by the time they were applied (a late one too), checks by their paid date and a paid item the
 * bank took back by its resolution, wire fundings by their receipt, PayPal batches by their
 * transmission, what a card or instant payment provider drew (or paid back) by the ledger's
 * posting of the payout's completion (or its late return), from the provider's own record of it,
 * and unclaimed-property reports by their remittance.
 */
import type { SqlReader } from "../../db/writer.ts";
import {
  type BankSettings,
  providersSettlingFrom,
  type SettlementProvider,
  type statementAccountsOf,
} from "../ach/bank_settings.ts";
import { bankTime } from "../ach/cutoffs.ts";
import { modalityOf } from "../payouts/states.ts";
import type { ExpectedMove } from "./matching.ts";

/** A statement account as the settings name it, with what it is to the company. */
export type CoveredAccount = ReturnType<typeof statementAccountsOf>[number];

/** Everything the service expects `account` to show on `date`. */
export async function expectedMovesOf(
  reader: SqlReader,
  companyId: string,
  settings: BankSettings,
  account: CoveredAccount,
  date: string,
): Promise<ExpectedMove[]> {
  const moves: ExpectedMove[] = [];
  const { role } = account;
  if (role === "settlement" || role === "settlement_check") {
    moves.push(...await expectedSettlementMoves(reader, companyId, date, settings.timeZone));
  }
  if (role === "check" || role === "settlement_check") {
    moves.push(...await expectedCheckMoves(reader, companyId, date, settings.timeZone));
  }
  const providers = providersSettlingFrom(settings, account.accountNumber);
  const window = bankDayWindow(date, settings.timeZone);
  for (const provider of providers) {
    moves.push(...await providerMoves[provider](reader, companyId, window, false));
  }
  // PayPal named nowhere: its batches are matched on the settlement account when reported.
  if (
    settings.providerAccounts?.paypal === undefined &&
    (role === "settlement" || role === "settlement_check")
  ) {
    moves.push(...await providerMoves.paypal(reader, companyId, window, true));
  }
  return moves;
}

/** The calendar day after a YYYY-MM-DD date. */
export function nextDate(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/** The instants a bank day spans in its time zone: [start, end). */
export function bankDayWindow(date: string, timeZone: string): { start: number; end: number } {
  return {
    start: bankTime(date, "00:00", timeZone),
    end: bankTime(nextDate(date), "00:00", timeZone),
  };
}

const str = (v: unknown) => String(v);
const num = (v: unknown) => Number(v);

/** A returned ACH entry as the account shows it. */
function returnMove(row: Record<string, unknown>, late: "" | "late "): ExpectedMove {
  const of = row.payout_id !== null
    ? `payout ${str(row.payout_id)}`
    : `funding ${str(row.funding_id)}`;
  return {
    kind: "ach_return",
    subjectId: str(row.id),
    // A returned credit's money comes back to the account; a returned funding debit leaves it.
    direction: row.direction === "credit" ? "credit" : "debit",
    amountCents: num(row.amount_cents),
    reference: row.trace_number === null ? null : str(row.trace_number),
    description: `the ${late}${str(row.return_code)} return of ${of} (trace ${
      str(row.trace_number)
    })`,
  };
}

/** The moves the settlement account should show on `date`. */
export async function expectedSettlementMoves(
  reader: SqlReader,
  companyId: string,
  date: string,
  timeZone: string,
): Promise<ExpectedMove[]> {
  const { start, end } = bankDayWindow(date, timeZone);
  const moves: ExpectedMove[] = [];
  const files = await reader.execute({
    sql: `SELECT f.batch_id, f.file_name, f.credit_total_cents, f.debit_total_cents
            FROM ach_files f JOIN rail_batches b ON b.id = f.batch_id
           WHERE f.company_id = ? AND f.effective_date = ? AND b.status = 'transmitted'
           ORDER BY f.created_at, f.batch_id`,
    args: [companyId, date],
  });
  for (const row of files.rows) {
    const name = `ACH file ${str(row.batch_id)} (${str(row.file_name)})`;
    if (num(row.credit_total_cents) > 0) {
      moves.push({
        kind: "ach_credit_file",
        subjectId: str(row.batch_id),
        direction: "debit",
        amountCents: num(row.credit_total_cents),
        reference: str(row.file_name),
        description: name,
      });
    }
    if (num(row.debit_total_cents) > 0) {
      moves.push({
        kind: "ach_debit_file",
        subjectId: str(row.batch_id),
        direction: "credit",
        amountCents: num(row.debit_total_cents),
        reference: str(row.file_name),
        description: name,
      });
    }
  }
  const returns = await reader.execute({
    sql: `SELECT id, direction, amount_cents, trace_number, return_code, payout_id, funding_id
            FROM rail_batch_entries
           WHERE company_id = ? AND rail = 'ach' AND status = 'failed' AND return_code IS NOT NULL
             AND settled_at >= ? AND settled_at < ?
           ORDER BY settled_at, id`,
    args: [companyId, start, end],
  });
  for (const row of returns.rows) moves.push(returnMove(row, ""));
  // A return after completion: a payout's credit whose money came back (payout.late_return), or a
  // funding debit the bank took back after it cleared; each posted when its return was applied.
  const late = await reader.execute({
    sql: `SELECT e.id, e.direction, e.amount_cents, e.trace_number, e.return_code, e.payout_id,
                 e.funding_id
            FROM ledger_transactions t
            JOIN rail_batch_entries e
              ON (t.kind = 'payout.late_return' AND e.payout_id = t.payout_id)
              OR (t.kind = 'funding.ach_returned_after_clear' AND e.funding_id = t.funding_id)
           WHERE t.line_id IN (SELECT id FROM business_lines WHERE company_id = ?)
             AND t.kind IN ('payout.late_return', 'funding.ach_returned_after_clear')
             AND t.posted_at >= ? AND t.posted_at < ?
             AND e.rail = 'ach' AND e.status = 'completed' AND e.return_code IS NOT NULL
           ORDER BY t.posted_at, t.id`,
    args: [companyId, start, end],
  });
  for (const row of late.rows) moves.push(returnMove(row, "late "));
  const wires = await reader.execute({
    sql: `SELECT id, amount_cents FROM fundings
           WHERE company_id = ? AND payment_method = 'WireTransfer' AND status = 'Completed'
             AND completed_at >= ? AND completed_at < ?
           ORDER BY completed_at, id`,
    args: [companyId, start, end],
  });
  for (const row of wires.rows) {
    moves.push({
      kind: "wire",
      subjectId: str(row.id),
      direction: "credit",
      amountCents: num(row.amount_cents),
      reference: str(row.id),
      description: `wire funding ${str(row.id)}`,
    });
  }
  // The ledger moved a remitted report's money out of the lines the day it was recorded: the
  // settlement account, which holds the lines' money, pays it (to the state, or to the operating
  // account the company pays the state from) as one debit of the report's total.
  const remitted = await reader.execute({
    sql: `SELECT id, state, report_year, total_cents FROM unclaimed_reports
           WHERE company_id = ? AND status = 'remitted' AND remitted_at >= ? AND remitted_at < ?
           ORDER BY remitted_at, id`,
    args: [companyId, start, end],
  });
  for (const row of remitted.rows) {
    moves.push({
      kind: "unclaimed_remittance",
      subjectId: str(row.id),
      direction: "debit",
      amountCents: num(row.total_cents),
      reference: str(row.id),
      description: `the remittance of unclaimed property report ${str(row.id)} to ${
        str(row.state)
      } (${str(row.report_year)})`,
    });
  }
  return moves;
}

/**
 * The checks the check account should show paid on `date`, each by number and amount, and the
 * paid items the bank took back that day (an exception resolved `bank_reversed`), each a credit.
 */
export async function expectedCheckMoves(
  reader: SqlReader,
  companyId: string,
  date: string,
  timeZone: string,
): Promise<ExpectedMove[]> {
  // A paid item the register could not take is a debit of the bank's all the same, unless its
  // resolution made its check paid (then the check's row stands for it): an item of another
  // amount, or of a check not sent, voided or stale while its payout still held the money.
  const { rows } = await reader.execute({
    sql: `SELECT id, check_number, COALESCE(paid_amount_cents, amount_cents) AS cents
            FROM checks WHERE company_id = ? AND status = 'paid' AND paid_date = ?
          UNION ALL
          SELECT x.id, x.check_number, x.paid_amount_cents AS cents
            FROM check_exceptions x LEFT JOIN checks c ON c.id = x.check_id
           WHERE x.company_id = ? AND x.paid_date = ?
             AND NOT (x.kind IN ('amount_mismatch', 'not_sent', 'voided', 'stale')
                      AND c.status = 'paid')
          ORDER BY 2, 1`,
    args: [companyId, date, companyId, date],
  });
  const moves: ExpectedMove[] = rows.map((row) => ({
    kind: "check_paid" as const,
    subjectId: str(row.id),
    direction: "debit" as const,
    amountCents: num(row.cents),
    reference: str(row.check_number),
    description: `check ${str(row.check_number)}`,
  }));
  const { start, end } = bankDayWindow(date, timeZone);
  const reversed = await reader.execute({
    sql: `SELECT id, check_number, kind, paid_amount_cents FROM check_exceptions
           WHERE company_id = ? AND resolution = 'bank_reversed'
             AND resolved_at >= ? AND resolved_at < ?
           ORDER BY resolved_at, id`,
    args: [companyId, start, end],
  });
  for (const row of reversed.rows) {
    moves.push({
      kind: "check_reversal",
      subjectId: str(row.id),
      direction: "credit",
      amountCents: num(row.paid_amount_cents),
      reference: str(row.check_number),
      description: `the bank's reversal of its payment of check ${str(row.check_number)} (${
        str(row.kind).replace("_", " ")
      })`,
    });
  }
  return moves;
}

type Window = { readonly start: number; readonly end: number };
type ProviderMoves = (
  reader: SqlReader,
  companyId: string,
  window: Window,
  optional: boolean,
) => Promise<ExpectedMove[]>;

/** The provider of each payment rail that settles through one, in words. */
const PROVIDER_NAMES: Readonly<Record<SettlementProvider, string>> = {
  paypal: "PayPal",
  lithic: "Lithic",
  increase: "Increase",
};

/** A PayPal batch's total, drawn when the batch was transmitted; the line names its batch id. */
const paypalMoves: ProviderMoves = async (reader, companyId, { start, end }, optional) => {
  const { rows } = await reader.execute({
    sql: `SELECT id, rail, total_cents, rail_reference FROM rail_batches
           WHERE company_id = ? AND rail = 'paypal'
             AND status = 'transmitted' AND rail_reference IS NOT NULL
             AND transmitted_at >= ? AND transmitted_at < ?
           ORDER BY transmitted_at, id`,
    args: [companyId, start, end],
  });
  return rows.map((row) => ({
    kind: "provider_settlement" as const,
    subjectId: str(row.id),
    direction: "debit" as const,
    amountCents: num(row.total_cents),
    reference: str(row.rail_reference),
    description: `PayPal batch ${str(row.rail_reference)}`,
    ...(optional ? { optional: true } : {}),
  }));
};

/**
 * What a card or instant provider moved for each payout on the day: the money its completion paid
 * (a debit: the provider drew it to fund the card or push the payment) or its late return paid
 * back (a credit: a card's unspent balance, an instant deposit returned), each the ledger's own
 * amount to the bank, named on the line by the provider's id of the card or transfer it keeps for
 * the payout (`table`'s latest). Only a payout paid by the provider's method: one whose card or push
 * failed and that another rail paid later is that rail's.
 */
function payoutProviderMoves(
  provider: "lithic" | "increase",
  method: "vcc" | "instant_deposit",
  table: "virtual_cards" | "instant_transfers",
  idColumn: "card_token" | "transfer_id",
  what: (id: string) => string,
): ProviderMoves {
  return async (reader, companyId, { start, end }) => {
    const { rows } = await reader.execute({
      sql: `SELECT t.id, t.kind, t.payout_id, e.amount_cents AS bank_cents,
                   (SELECT p.${idColumn} FROM ${table} p WHERE p.payout_id = t.payout_id
                     ORDER BY p.created_at DESC, p.rowid DESC LIMIT 1) AS provider_id
              FROM ledger_transactions t
              JOIN ledger_entries e ON e.transaction_id = t.id
              JOIN ledger_accounts a ON a.id = e.account_id AND a.code = 'bank'
             WHERE t.line_id IN (SELECT id FROM business_lines WHERE company_id = ?)
               AND t.kind IN ('payout.complete', 'payout.late_return')
               AND t.posted_at >= ? AND t.posted_at < ?
               AND EXISTS (SELECT 1 FROM ${table} p WHERE p.payout_id = t.payout_id)
               AND (SELECT o.payment_method_id FROM payouts o WHERE o.id = t.payout_id) = ?
             ORDER BY t.posted_at, t.id`,
      args: [companyId, start, end, modalityOf(method)!.id],
    });
    return rows.map((row) => {
      const cents = num(row.bank_cents);
      const id = str(row.provider_id);
      return {
        kind: "provider_settlement" as const,
        subjectId: str(row.id),
        direction: cents > 0 ? "debit" as const : "credit" as const,
        amountCents: Math.abs(cents),
        reference: id,
        description: `${row.kind === "payout.late_return" ? "the late return of " : ""}${
          PROVIDER_NAMES[provider]
        } ${what(id)} of payout ${str(row.payout_id)}`,
      };
    });
  };
}

/** Each provider's moves on the account it settles from. */
const providerMoves: Readonly<Record<SettlementProvider, ProviderMoves>> = {
  paypal: paypalMoves,
  lithic: payoutProviderMoves(
    "lithic",
    "vcc",
    "virtual_cards",
    "card_token",
    (id) => `card ${id}`,
  ),
  increase: payoutProviderMoves(
    "increase",
    "instant_deposit",
    "instant_transfers",
    "transfer_id",
    (id) => `transfer ${id}`,
  ),
};
