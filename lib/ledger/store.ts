/**
 * The one function that posts every ledger transaction, and O(1) balance reads. Balances are
 * materialized in ledger_accounts in the same unit as their entries.
 */
import type { InStatement, ResultSet } from "@libsql/client";
import { columnsOf, integer, rowMapper } from "../../db/rows.ts";
import { ledgerAccounts } from "../../db/schema.ts";
import { newId } from "../platform/keys.ts";
import { netChanges, overdraft } from "./postings.ts";
import {
  type LedgerAccountCode,
  ledgerAccountCodes,
  type LedgerTransactionInput,
} from "./types.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { WriteTx } from "../../db/writer.ts";

export type LineBalances = Record<LedgerAccountCode, number>;

/** Creates the line's accounts that do not exist yet (idempotent). */
export async function ensureLineAccounts(
  tx: WriteTx,
  companyId: string,
  lineId: string,
): Promise<void> {
  const placeholders = ledgerAccountCodes.map(() => "(?, ?, ?, ?, 0)").join(", ");
  await tx.execute({
    sql:
      `INSERT OR IGNORE INTO ledger_accounts (id, company_id, line_id, code, balance_cents) VALUES ${placeholders}`,
    args: ledgerAccountCodes.flatMap((code) => [newId("acct"), companyId, lineId, code]),
  });
}

const account = columnsOf(ledgerAccounts);
const toAccount = rowMapper({ id: account.id, code: account.code, balance: account.balanceCents });
const toBalance = rowMapper({ code: account.code, balance: account.balanceCents });
const toReadBack = rowMapper({
  entries: integer("ledger_entries", "n"),
  total: integer("ledger_entries", "total"),
});

function balancesFrom(
  accounts: Iterable<{ code: LedgerAccountCode; balance: number }>,
): LineBalances {
  const balances = Object.fromEntries(ledgerAccountCodes.map((code) => [code, 0])) as LineBalances;
  for (const { code, balance } of accounts) balances[code] = balance;
  return balances;
}

/** A line's accounts as a unit last read or posted them: ids, and balances in cents. */
export interface LineAccounts {
  readonly ids: ReadonlyMap<LedgerAccountCode, string>;
  readonly balances: LineBalances;
}

/** The line's accounts with their ids, read in the unit (an empty map: none opened yet). */
export async function readLineAccounts(tx: WriteTx, lineId: string): Promise<LineAccounts> {
  const accounts = (await tx.execute({
    sql: `SELECT ${toAccount.columns.join(", ")} FROM ledger_accounts WHERE line_id = ?`,
    args: [lineId],
  })).rows.map(toAccount);
  return {
    ids: new Map(accounts.map(({ code, id }) => [code, id])),
    balances: balancesFrom(accounts),
  };
}

/**
 * Posts one balanced transaction: refused with no write when it would take available or reserved
 * below zero; a transaction that does not balance is a programmer error and throws. The entries
 * are read back and must sum to zero: the read rides with the unit's next round trip, and the
 * unit fails when it does not (the writer checks it before the unit is released). `known` is the
 * line's accounts as this unit last read or posted them, which saves reading them again.
 */
export async function postTransaction(
  tx: WriteTx,
  input: LedgerTransactionInput,
  known?: LineAccounts,
): Promise<
  Result<
    { transactionId: string; balances: LineBalances; accounts: LineAccounts },
    "insufficient_funds" | "negative_balance"
  >
> {
  const changes = netChanges(input.transfers);
  let accounts = known ?? await readLineAccounts(tx, input.lineId);
  if (accounts.ids.size < ledgerAccountCodes.length) {
    // A line's first posting opens its accounts.
    await ensureLineAccounts(tx, input.companyId, input.lineId);
    accounts = await readLineAccounts(tx, input.lineId);
  }
  const before = accounts.balances;
  const short = overdraft(before, changes);
  if (short) {
    return refuse(
      short.account === "available" ? "insufficient_funds" : "negative_balance",
      `${short.account} holds ${short.balanceCents} cents; ${input.kind} needs ${-short
        .changeCents}`,
      {
        details: {
          account: short.account,
          balance_cents: short.balanceCents,
          needed_cents: -short.changeCents,
        },
      },
    );
  }
  const accountIds = accounts.ids;
  const transactionId = newId("ltx");
  // Nothing below is read before the unit's next round trip: it rides with it.
  tx.defer({
    sql:
      `INSERT INTO ledger_transactions (id, company_id, line_id, kind, payout_id, funding_id, posted_at)
          VALUES (?, ?, ?, ?, ?, ?, ?)`,
    args: [
      transactionId,
      input.companyId,
      input.lineId,
      input.kind,
      input.payoutId ?? null,
      input.fundingId ?? null,
      input.postedAt,
    ],
  });
  const entries = input.transfers.flatMap((t) =>
    [
      [accountIds.get(t.from)!, -t.amountCents],
      [accountIds.get(t.to)!, t.amountCents],
    ] as const
  );
  tx.defer({
    sql: `INSERT INTO ledger_entries (transaction_id, account_id, amount_cents) VALUES ${
      entries.map(() => "(?, ?, ?)").join(", ")
    }`,
    args: entries.flatMap(([accountId, cents]) => [transactionId, accountId, cents]),
  });
  const after = { ...before };
  const changed = [...changes].filter(([, change]) => change !== 0);
  for (const [code, change] of changed) after[code] += change;
  // One statement moves every changed balance (transfers may also cancel out entirely).
  if (changed.length > 0) {
    tx.defer({
      sql: `UPDATE ledger_accounts SET balance_cents = balance_cents + CASE id ${
        changed.map(() => "WHEN ? THEN ?").join(" ")
      } END WHERE id IN (${changed.map(() => "?").join(", ")})`,
      args: [
        ...changed.flatMap(([code, change]) => [accountIds.get(code)!, change]),
        ...changed.map(([code]) => accountIds.get(code)!),
      ],
    });
  }
  tx.defer({
    sql:
      "SELECT count(*) AS n, coalesce(sum(amount_cents), 0) AS total FROM ledger_entries WHERE transaction_id = ?",
    args: [transactionId],
  }, (result) => {
    const readBack = toReadBack(result.rows[0]);
    if (readBack.total !== 0 || readBack.entries !== entries.length) {
      throw new Error(
        `ledger transaction ${transactionId} read back unbalanced: ${readBack.entries} entries (${entries.length} written) summing to ${readBack.total} cents`,
      );
    }
  });
  return ok({ transactionId, balances: after, accounts: { ids: accountIds, balances: after } });
}

/** Anything that runs SQL: the read client, or a write unit when the read decides a write. */
export interface SqlExecutor {
  execute(statement: InStatement): Promise<ResultSet>;
}

/** The line's balances in cents, from the materialized accounts (missing accounts read 0). */
export async function readLineBalances(
  executor: SqlExecutor,
  lineId: string,
): Promise<LineBalances> {
  const { rows } = await executor.execute({
    sql: `SELECT ${toBalance.columns.join(", ")} FROM ledger_accounts WHERE line_id = ?`,
    args: [lineId],
  });
  return balancesFrom(rows.map(toBalance));
}
