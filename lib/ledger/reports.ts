/** Ledger reports: a line's daily tie-out, and verification of every balance and transaction. */
import {
  columnsOf,
  integer,
  notNull,
  nullable,
  oneOf,
  renamed,
  rowMapper,
  text,
} from "../../db/rows.ts";
import {
  disbursements,
  fundings,
  ledgerAccounts,
  ledgerEntries,
  ledgerTransactions,
} from "../../db/schema.ts";
import { type LedgerTransactionKind, ledgerTransactionKinds } from "./postings.ts";
import {
  computeTieOut,
  heldAccounts,
  type TieOut,
  tieOutCategories,
  type TieOutFunding,
  type TieOutPayoutLine,
  type TieOutRelease,
  utcDayBounds,
} from "./tieout.ts";
import type { SqlExecutor } from "./store.ts";
import { nonNegativeAccounts } from "./types.ts";

const account = columnsOf(ledgerAccounts);
const entry = columnsOf(ledgerEntries);
const transaction = columnsOf(ledgerTransactions);

const placeholders = (values: readonly unknown[]) => values.map(() => "?").join(", ");

const toHeldTotal = rowMapper({ cents: integer("ledger_entries", "total") });

async function heldBefore(executor: SqlExecutor, lineId: string, before: number): Promise<number> {
  const { rows } = await executor.execute({
    sql: `SELECT coalesce(sum(e.amount_cents), 0) AS total FROM ledger_entries e
          JOIN ledger_transactions t ON t.id = e.transaction_id JOIN ledger_accounts a ON a.id = e.account_id
          WHERE t.line_id = ? AND a.code IN (${placeholders(heldAccounts)}) AND t.posted_at < ?`,
    args: [lineId, ...heldAccounts, before],
  });
  return toHeldTotal(rows[0]).cents;
}

const toMovement = rowMapper({
  kind: oneOf(transaction.kind, ledgerTransactionKinds),
  account: account.code,
  cents: integer("ledger_entries", "cents"),
});

const funding = columnsOf(fundings);
const disbursement = columnsOf(disbursements);
const toDayFunding = rowMapper({
  id: funding.id,
  fundingUuid: text("fundings", "public_id"),
  paymentMethod: funding.paymentMethod,
  amountCents: funding.amountCents,
  largeDisbursement: funding.largeDisbursement,
  disbursementUuid: nullable(renamed(disbursement.externalUuid, "disbursement_uuid")),
  movements: text("ledger_transactions", "kinds"),
});
const toDayRelease = rowMapper({
  fundingId: notNull(disbursement.releasedByFundingId),
  disbursementUuid: disbursement.externalUuid,
  releasedAt: notNull(disbursement.releasedAt),
});

/**
 * The line's fundings whose money moved in [start, end) that are for large disbursements or
 * released one, with what each released; both found through the line's ledger index by time.
 */
async function dayFundings(
  executor: SqlExecutor,
  lineId: string,
  day: { start: number; end: number },
): Promise<TieOutFunding[]> {
  const moved = await executor.execute({
    sql:
      `SELECT f.id, coalesce(f.funding_uuid, f.id) AS public_id, f.payment_method, f.amount_cents,
            f.large_disbursement, target.external_uuid AS disbursement_uuid, m.kinds
          FROM (SELECT funding_id, group_concat(substr(kind, 9), ' ') AS kinds
                FROM (SELECT funding_id, kind FROM ledger_transactions
                      WHERE line_id = ? AND posted_at >= ? AND posted_at < ? AND funding_id IS NOT NULL
                      ORDER BY posted_at, rowid)
                GROUP BY funding_id) m
          JOIN fundings f ON f.id = m.funding_id
          LEFT JOIN disbursements target ON target.id = f.disbursement_id
          ORDER BY f.created_at, f.rowid`,
    args: [lineId, day.start, day.end],
  });
  const releases = await executor.execute({
    sql: `SELECT d.released_by_funding_id, d.external_uuid, d.released_at FROM ledger_transactions t
            JOIN payouts p ON p.id = t.payout_id JOIN disbursements d ON d.id = p.disbursement_id
          WHERE t.line_id = ? AND t.posted_at >= ? AND t.posted_at < ?
            AND t.kind = 'payout.release_funds' AND d.released_by_funding_id IS NOT NULL
          GROUP BY d.id ORDER BY min(t.rowid)`,
    args: [lineId, day.start, day.end],
  });
  const released = new Map<string, TieOutRelease[]>();
  for (const { fundingId, ...release } of releases.rows.map(toDayRelease)) {
    released.set(fundingId, [...(released.get(fundingId) ?? []), release]);
  }
  return moved.rows.map(toDayFunding)
    .filter((f) => f.largeDisbursement || released.has(f.id))
    .map(({ id, movements, ...f }) => ({
      ...f,
      movements: movements.split(" "),
      released: released.get(id) ?? [],
    }));
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
  return computeTieOut(
    date,
    await heldBefore(executor, lineId, day.start),
    await heldBefore(executor, lineId, day.end),
    rows.map(toMovement),
    await dayFundings(executor, lineId, day),
    await dayPayoutLines(executor, lineId, day),
  );
}

/**
 * The line's transactions in [start, end) that change the tie-out's disbursed, fees or returned
 * (every kind outside funding and moves between held accounts), one line each, in posting order.
 */
async function dayPayoutLines(
  executor: SqlExecutor,
  lineId: string,
  day: { start: number; end: number },
): Promise<TieOutPayoutLine[]> {
  const kinds = Object.entries(tieOutCategories)
    .filter(([, category]) => category === "paid_out" || category === "returned")
    .map(([kind]) => kind);
  const held = heldAccounts.map((code) => `'${code}'`).join(", ");
  const { rows } = await executor.execute({
    sql: `SELECT t.id, t.kind, t.payout_id, t.posted_at,
            coalesce(d.claim_id, d.external_uuid) AS claim_or_uuid,
            sum(CASE WHEN a.code = 'bank' THEN e.amount_cents ELSE 0 END) AS bank,
            sum(CASE WHEN substr(a.code, 1, 5) = 'fees_' THEN e.amount_cents ELSE 0 END)
              AS fees,
            sum(CASE WHEN a.code IN (${held}) THEN e.amount_cents ELSE 0 END) AS held
          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
            JOIN ledger_accounts a ON a.id = e.account_id
            LEFT JOIN payouts p ON p.id = t.payout_id
            LEFT JOIN disbursements d ON d.id = p.disbursement_id
          WHERE t.line_id = ? AND t.posted_at >= ? AND t.posted_at < ?
            AND t.kind IN (${placeholders(kinds)})
          GROUP BY t.id ORDER BY t.posted_at, t.rowid`,
    args: [lineId, day.start, day.end, ...kinds],
  });
  return rows.map((row) => {
    const kind = String(row.kind) as LedgerTransactionKind;
    const paidOut = tieOutCategories[kind] === "paid_out";
    return {
      transactionId: String(row.id),
      kind,
      payoutId: row.payout_id === null ? null : String(row.payout_id),
      claimOrUuid: row.claim_or_uuid === null ? null : String(row.claim_or_uuid),
      postedAt: Number(row.posted_at),
      disbursedCents: paidOut ? Number(row.bank) : 0,
      feesCents: paidOut ? Number(row.fees) : 0,
      returnedCents: paidOut ? 0 : Number(row.held),
    };
  });
}

export interface LedgerProblem {
  readonly kind: "unbalanced_transaction" | "balance_differs" | "negative_balance";
  readonly id: string;
  readonly detail: string;
}

const toUnbalanced = rowMapper({
  transactionId: entry.transactionId,
  total: integer("ledger_entries", "total"),
});
const toDrifted = rowMapper({
  id: account.id,
  code: account.code,
  balance: account.balanceCents,
  recomputed: integer("ledger_entries", "recomputed"),
});
const toNegative = rowMapper({ id: account.id, code: account.code, balance: account.balanceCents });

/** Recomputes every balance from its entries and every transaction's sum; empty means sound. */
export async function verifyLedger(executor: SqlExecutor): Promise<LedgerProblem[]> {
  const problems: LedgerProblem[] = [];
  const unbalanced = await executor.execute(
    `SELECT transaction_id, sum(amount_cents) AS total FROM ledger_entries GROUP BY transaction_id HAVING total <> 0`,
  );
  for (const row of unbalanced.rows.map(toUnbalanced)) {
    problems.push({
      kind: "unbalanced_transaction",
      id: row.transactionId,
      detail: `entries sum to ${row.total} cents`,
    });
  }
  const drifted = await executor.execute(
    `SELECT a.id, a.code, a.balance_cents, coalesce(sum(e.amount_cents), 0) AS recomputed
     FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
     GROUP BY a.id HAVING a.balance_cents <> recomputed`,
  );
  for (const row of drifted.rows.map(toDrifted)) {
    problems.push({
      kind: "balance_differs",
      id: row.id,
      detail: `${row.code} shows ${row.balance} cents; its entries sum to ${row.recomputed}`,
    });
  }
  const negative = await executor.execute({
    sql: `SELECT id, code, balance_cents FROM ledger_accounts
          WHERE code IN (${placeholders(nonNegativeAccounts)}) AND balance_cents < 0`,
    args: [...nonNegativeAccounts],
  });
  for (const row of negative.rows.map(toNegative)) {
    problems.push({
      kind: "negative_balance",
      id: row.id,
      detail: `${row.code} is ${row.balance} cents`,
    });
  }
  return problems;
}
