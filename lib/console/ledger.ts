/**
 * The console's Ledger page: balances per line, transactions with their entries, and the daily
 * tie-out of a line over a run of days. Reads only; `ledger:verify` runs as the CLI's command.
 */
import type { Client, InValue } from "@libsql/client";
import { lineTieOut } from "../ledger/reports.ts";
import type { TieOut } from "../ledger/tieout.ts";
import { type LedgerAccountCode, ledgerAccountCodes } from "../ledger/types.ts";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export interface LineBalanceRow {
  readonly companyId: string;
  readonly companyName: string;
  readonly lineId: string;
  readonly lineCode: string;
  readonly balances: Readonly<Record<LedgerAccountCode, number>>;
}

/** Every line of the scope with the balance of each of its accounts (0 for one never posted). */
export async function balancesPerLine(
  client: Client,
  companyIds: readonly string[] | null,
): Promise<LineBalanceRow[]> {
  const scope = scopeCondition("l.company_id", companyIds);
  const { rows } = await client.execute({
    sql: `SELECT l.id AS line_id, l.code AS line_code, c.id AS company_id, c.name AS company_name,
            a.code, a.balance_cents FROM business_lines l JOIN companies c ON c.id = l.company_id
            LEFT JOIN ledger_accounts a ON a.line_id = l.id
          WHERE ${scope.sql} ORDER BY c.name, c.id, l.code`,
    args: scope.args,
  });
  const lines = new Map<string, LineBalanceRow>();
  for (const row of rows) {
    const lineId = String(row.line_id);
    let line = lines.get(lineId);
    if (!line) {
      line = {
        companyId: String(row.company_id),
        companyName: String(row.company_name),
        lineId,
        lineCode: String(row.line_code),
        balances: Object.fromEntries(ledgerAccountCodes.map((code) => [code, 0])) as Record<
          LedgerAccountCode,
          number
        >,
      };
      lines.set(lineId, line);
    }
    if (row.code !== null) {
      (line.balances as Record<string, number>)[String(row.code)] = Number(row.balance_cents);
    }
  }
  return [...lines.values()];
}

export const transactionSorts: Sortable = { posted: "t.posted_at", kind: "t.kind" };

export interface LedgerEntryRow {
  readonly account: LedgerAccountCode;
  readonly amountCents: number;
}

export interface LedgerTransactionRow {
  readonly id: string;
  readonly kind: string;
  readonly companyName: string;
  readonly lineCode: string;
  readonly payoutId: string | null;
  readonly fundingId: string | null;
  readonly postedAt: number;
  readonly entries: LedgerEntryRow[];
}

/** A page of transactions of the scope (one line's, when given), each with its entries. */
export async function listTransactions(
  client: Client,
  filter: { companyIds: readonly string[] | null; lineId?: string; kind?: string },
  request: PageWindow,
): Promise<Page<LedgerTransactionRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    scopeCondition("t.company_id", filter.companyIds),
  ];
  if (filter.lineId) conditions.push({ sql: "t.line_id = ?", args: [filter.lineId] });
  if (filter.kind) conditions.push({ sql: "t.kind = ?", args: [filter.kind] });
  const where = allOf(conditions);
  const order = orderAndPage(request, transactionSorts, "t.rowid");
  const { rows } = await client.execute({
    sql: `SELECT t.id, t.kind, t.payout_id, t.funding_id, t.posted_at, c.name AS company_name,
            l.code AS line_code FROM ledger_transactions t JOIN companies c ON c.id = t.company_id
            JOIN business_lines l ON l.id = t.line_id WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  const page = pageOf(request, rows);
  const ids = page.data.map((row) => String(row.id));
  const entries = new Map<string, LedgerEntryRow[]>();
  if (ids.length > 0) {
    const found = await client.execute({
      sql: `SELECT e.transaction_id, a.code, e.amount_cents FROM ledger_entries e
              JOIN ledger_accounts a ON a.id = e.account_id
            WHERE e.transaction_id IN (${ids.map(() => "?").join(", ")}) ORDER BY e.id`,
      args: ids,
    });
    for (const row of found.rows) {
      const id = String(row.transaction_id);
      entries.set(id, [...(entries.get(id) ?? []), {
        account: String(row.code) as LedgerAccountCode,
        amountCents: Number(row.amount_cents),
      }]);
    }
  }
  return {
    ...page,
    data: page.data.map((row) => ({
      id: String(row.id),
      kind: String(row.kind),
      companyName: String(row.company_name),
      lineCode: String(row.line_code),
      payoutId: row.payout_id === null ? null : String(row.payout_id),
      fundingId: row.funding_id === null ? null : String(row.funding_id),
      postedAt: Number(row.posted_at),
      entries: entries.get(String(row.id)) ?? [],
    })),
  };
}

/** Days one tie-out table shows at most. */
export const TIE_OUT_DAYS_MAX = 31;

/** The UTC dates of the `days` days ending with `lastDate` (YYYY-MM-DD), newest first. */
export function tieOutDates(lastDate: string, days: number): string[] {
  const end = Date.parse(`${lastDate}T00:00:00Z`);
  return Array.from(
    { length: days },
    (_, i) => new Date(end - i * 86_400_000).toISOString().slice(0, 10),
  );
}

/** The line's tie-out for each date, newest first. */
export async function tieOutRun(
  client: Client,
  lineId: string,
  dates: readonly string[],
): Promise<TieOut[]> {
  const run: TieOut[] = [];
  for (const date of dates) {
    const tieOut = await lineTieOut(client, lineId, date);
    if (tieOut) run.push(tieOut);
  }
  return run;
}
