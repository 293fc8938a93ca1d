/**
 * The one function that posts every ledger transaction, and O(1) balance reads. Balances are
 * materialized in ledger_accounts in the same unit as their entries.
 */
import type { InStatement, ResultSet } from "@libsql/client";
import { columnsOf, integer, keptText, multiRowInserts, rowMapper } from "../../db/rows.ts";
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

// The texts of the statements every posting and balance read runs, built once: a text built at
// each call is also hashed whole to find its kept statement.
const READ_LINE_ACCOUNTS = `SELECT ${
  toAccount.columns.join(", ")
} FROM ledger_accounts WHERE line_id = ?`;
const READ_LINE_BALANCES = `SELECT ${
  toBalance.columns.join(", ")
} FROM ledger_accounts WHERE line_id = ?`;
const MOVE_BALANCES = "UPDATE ledger_accounts SET balance_cents = balance_cents + CASE id";
const READ_BACK = "SELECT transaction_id, count(*) AS n";

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
    sql: READ_LINE_ACCOUNTS,
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
  const posted = await postTransactions(
    tx,
    [input],
    known ? new Map([[input.lineId, known]]) : undefined,
  );
  if (!posted.ok) return posted;
  const accounts = posted.value.accounts.get(input.lineId)!;
  return ok({
    transactionId: posted.value.transactionIds[0],
    balances: accounts.balances,
    accounts,
  });
}

/**
 * Posts several balanced transactions, in order, as postTransaction posts one, with the writing
 * set-based: one statement for all their transactions, one for all their entries, each changed
 * account's balance moved once, and one read-back. Refused with no write when any would take
 * available or reserved below zero after those before it. `known` holds lines' accounts as this
 * unit last read or posted them.
 */
export async function postTransactions(
  tx: WriteTx,
  inputs: readonly LedgerTransactionInput[],
  known?: ReadonlyMap<string, LineAccounts>,
): Promise<
  Result<
    { transactionIds: string[]; accounts: Map<string, LineAccounts> },
    "insufficient_funds" | "negative_balance"
  >
> {
  const changes = inputs.map((input) => netChanges(input.transfers));
  const lines = new Map<string, LineAccounts>();
  for (const input of inputs) {
    if (lines.has(input.lineId)) continue;
    let accounts = known?.get(input.lineId) ?? await readLineAccounts(tx, input.lineId);
    if (accounts.ids.size < ledgerAccountCodes.length) {
      // A line's first posting opens its accounts.
      await ensureLineAccounts(tx, input.companyId, input.lineId);
      accounts = await readLineAccounts(tx, input.lineId);
    }
    lines.set(input.lineId, { ids: accounts.ids, balances: { ...accounts.balances } });
  }
  /** Each changed account's net change over all the transactions, by account id. */
  const moved = new Map<string, number>();
  for (const [i, input] of inputs.entries()) {
    const line = lines.get(input.lineId)!;
    const short = overdraft(line.balances, changes[i]);
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
    for (const [code, change] of changes[i]) {
      line.balances[code] += change;
      const id = line.ids.get(code)!;
      moved.set(id, (moved.get(id) ?? 0) + change);
    }
  }
  const transactionIds = inputs.map(() => newId("ltx"));
  const entries = inputs.flatMap((input, i): [string, string, number][] => {
    const ids = lines.get(input.lineId)!.ids;
    return input.transfers.flatMap((t): [string, string, number][] => [
      [transactionIds[i], ids.get(t.from)!, -t.amountCents],
      [transactionIds[i], ids.get(t.to)!, t.amountCents],
    ]);
  });
  // Nothing below is read before the unit's next round trip: it rides with it.
  for (
    const statement of multiRowInserts(
      "INSERT INTO ledger_transactions (id, company_id, line_id, kind, payout_id, funding_id, posted_at)",
      inputs.map((input, i) => [
        transactionIds[i],
        input.companyId,
        input.lineId,
        input.kind,
        input.payoutId ?? null,
        input.fundingId ?? null,
        input.postedAt,
      ]),
    )
  ) tx.defer(statement);
  for (
    const statement of multiRowInserts(
      "INSERT INTO ledger_entries (transaction_id, account_id, amount_cents)",
      entries,
    )
  ) tx.defer(statement);
  // One statement moves every changed balance (transfers may also cancel out entirely).
  const changed = [...moved].filter(([, change]) => change !== 0);
  if (changed.length > 0) {
    tx.defer({
      sql: keptText(
        MOVE_BALANCES,
        changed.length,
        () =>
          `${MOVE_BALANCES} ${changed.map(() => "WHEN ? THEN ?").join(" ")} END WHERE id IN (${
            changed.map(() => "?").join(", ")
          })`,
      ),
      args: [...changed.flat(), ...changed.map(([id]) => id)],
    });
  }
  const written = new Map<string, number>();
  for (const [transactionId] of entries) {
    written.set(transactionId, (written.get(transactionId) ?? 0) + 1);
  }
  tx.defer({
    sql: keptText(
      READ_BACK,
      transactionIds.length,
      () =>
        `${READ_BACK}, coalesce(sum(amount_cents), 0) AS total
          FROM ledger_entries WHERE transaction_id IN (${transactionIds.map(() => "?").join(", ")})
          GROUP BY transaction_id`,
    ),
    args: transactionIds,
  }, (result) => {
    const readBack = new Map(
      result.rows.map((row) => [String(row.transaction_id), toReadBack(row)]),
    );
    for (const [transactionId, count] of written) {
      const back = readBack.get(transactionId) ?? { entries: 0, total: 0 };
      if (back.total !== 0 || back.entries !== count) {
        throw new Error(
          `ledger transaction ${transactionId} read back unbalanced: ${back.entries} entries (${count} written) summing to ${back.total} cents`,
        );
      }
    }
  });
  return ok({ transactionIds, accounts: lines });
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
    sql: READ_LINE_BALANCES,
    args: [lineId],
  });
  return balancesFrom(rows.map(toBalance));
}
