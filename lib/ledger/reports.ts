/** Ledger reports: a line's daily tie-out, and verification of every balance and transaction. */
import {
  computeTieOut,
  type DayMovement,
  heldAccounts,
  type TieOut,
  utcDayBounds,
} from "./tieout.ts";
import type { LedgerAccountCode } from "./types.ts";
import type { SqlExecutor } from "./store.ts";

const HELD = heldAccounts.map((code) => `'${code}'`).join(", ");

async function heldBefore(executor: SqlExecutor, lineId: string, before: number): Promise<number> {
  const { rows } = await executor.execute({
    sql: `SELECT coalesce(sum(e.amount_cents), 0) AS total FROM ledger_entries e
          JOIN ledger_transactions t ON t.id = e.transaction_id JOIN ledger_accounts a ON a.id = e.account_id
          WHERE t.line_id = ? AND a.code IN (${HELD}) AND t.posted_at < ?`,
    args: [lineId, before],
  });
  return Number(rows[0].total);
}

/** The tie-out of a line for a UTC day (YYYY-MM-DD), or null for a date that does not exist. */
export async function lineTieOut(
  executor: SqlExecutor,
  lineId: string,
  date: string,
): Promise<TieOut | null> {
  const day = utcDayBounds(date);
  if (!day) return null;
  const { rows } = await executor.execute({
    sql: `SELECT t.kind, a.code, sum(e.amount_cents) AS cents FROM ledger_entries e
          JOIN ledger_transactions t ON t.id = e.transaction_id JOIN ledger_accounts a ON a.id = e.account_id
          WHERE t.line_id = ? AND t.posted_at >= ? AND t.posted_at < ? GROUP BY t.kind, a.code`,
    args: [lineId, day.start, day.end],
  });
  const movements: DayMovement[] = rows.map((row) => ({
    kind: String(row.kind),
    account: row.code as LedgerAccountCode,
    cents: Number(row.cents),
  }));
  return computeTieOut(
    date,
    await heldBefore(executor, lineId, day.start),
    await heldBefore(executor, lineId, day.end),
    movements,
  );
}

export interface LedgerProblem {
  readonly kind: "unbalanced_transaction" | "balance_differs" | "negative_balance";
  readonly id: string;
  readonly detail: string;
}

/** Recomputes every balance from its entries and every transaction's sum; empty means sound. */
export async function verifyLedger(executor: SqlExecutor): Promise<LedgerProblem[]> {
  const problems: LedgerProblem[] = [];
  const unbalanced = await executor.execute(
    `SELECT transaction_id, sum(amount_cents) AS total FROM ledger_entries GROUP BY transaction_id HAVING total <> 0`,
  );
  for (const row of unbalanced.rows) {
    problems.push({
      kind: "unbalanced_transaction",
      id: String(row.transaction_id),
      detail: `entries sum to ${row.total} cents`,
    });
  }
  const drifted = await executor.execute(
    `SELECT a.id, a.code, a.balance_cents, coalesce(sum(e.amount_cents), 0) AS recomputed
     FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
     GROUP BY a.id HAVING a.balance_cents <> recomputed`,
  );
  for (const row of drifted.rows) {
    problems.push({
      kind: "balance_differs",
      id: String(row.id),
      detail: `${row.code} shows ${row.balance_cents} cents; its entries sum to ${row.recomputed}`,
    });
  }
  const negative = await executor.execute(
    `SELECT id, code, balance_cents FROM ledger_accounts WHERE code IN ('available', 'reserved') AND balance_cents < 0`,
  );
  for (const row of negative.rows) {
    problems.push({
      kind: "negative_balance",
      id: String(row.id),
      detail: `${row.code} is ${row.balance_cents} cents`,
    });
  }
  return problems;
}
