/**
 * What the service expects the bank to have posted to a company's account on a bank day, read from
 * the rails' own records in the unit that reconciles the day: ACH files by effective date, returns
 * by the time they were applied, checks by their paid date, wire fundings by their receipt, and
 * provider batches by their transmission.
 */
import type { SqlReader } from "../../db/writer.ts";
import { bankTime } from "../ach/cutoffs.ts";
import type { ExpectedMove } from "./matching.ts";

/** Batches of these rails are settled by their provider; the account shows it when drawn on. */
export const PROVIDER_SETTLEMENT_RAILS = ["paypal"] as const;

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
  for (const row of returns.rows) {
    const of = row.payout_id !== null
      ? `payout ${str(row.payout_id)}`
      : `funding ${str(row.funding_id)}`;
    moves.push({
      kind: "ach_return",
      subjectId: str(row.id),
      // A returned credit's money comes back to the account; a returned funding debit leaves it.
      direction: row.direction === "credit" ? "credit" : "debit",
      amountCents: num(row.amount_cents),
      reference: row.trace_number === null ? null : str(row.trace_number),
      description: `the ${str(row.return_code)} return of ${of} (trace ${str(row.trace_number)})`,
    });
  }
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
  const providers = await reader.execute({
    sql: `SELECT id, rail, total_cents, rail_reference FROM rail_batches
           WHERE company_id = ? AND rail IN (${PROVIDER_SETTLEMENT_RAILS.map(() => "?").join(", ")})
             AND status = 'transmitted' AND rail_reference IS NOT NULL
             AND transmitted_at >= ? AND transmitted_at < ?
           ORDER BY transmitted_at, id`,
    args: [companyId, ...PROVIDER_SETTLEMENT_RAILS, start, end],
  });
  for (const row of providers.rows) {
    moves.push({
      kind: "provider_settlement",
      subjectId: str(row.id),
      direction: "debit",
      amountCents: num(row.total_cents),
      reference: str(row.rail_reference),
      description: `${str(row.rail)} batch ${str(row.rail_reference)}`,
      optional: true,
    });
  }
  return moves;
}

/** The checks the check account should show paid on `date`, each by number and amount. */
export async function expectedCheckMoves(
  reader: SqlReader,
  companyId: string,
  date: string,
): Promise<ExpectedMove[]> {
  // A paid item the register could not take is a debit of the bank's all the same, unless its
  // resolution made its check paid (then the check's row stands for it).
  const { rows } = await reader.execute({
    sql: `SELECT id, check_number, COALESCE(paid_amount_cents, amount_cents) AS cents
            FROM checks WHERE company_id = ? AND status = 'paid' AND paid_date = ?
          UNION ALL
          SELECT x.id, x.check_number, x.paid_amount_cents AS cents
            FROM check_exceptions x LEFT JOIN checks c ON c.id = x.check_id
           WHERE x.company_id = ? AND x.paid_date = ?
             AND NOT (x.kind IN ('amount_mismatch', 'not_sent') AND c.status = 'paid')
          ORDER BY 2, 1`,
    args: [companyId, date, companyId, date],
  });
  return rows.map((row) => ({
    kind: "check_paid" as const,
    subjectId: str(row.id),
    direction: "debit" as const,
    amountCents: num(row.cents),
    reference: str(row.check_number),
    description: `check ${str(row.check_number)}`,
  }));
}
