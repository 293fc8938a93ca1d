/**
 * Whether a bank file or provider batch balances: its own totals against the entries (or checks)
 * it carries, and those entries against the ledger movements of the payouts and fundings they pay
 * or collect. One check for every rail (ACH files, check files, PayPal and Venmo batches), shown
 * as the console's "balanced" badge. A file row edited by hand, an entry lost or changed, or a
 * ledger posting that does not match the money the file moves, shows here.
 */
import type { Client } from "@libsql/client";
import { formatDollars } from "../platform/money.ts";
import type { Page } from "./paging.ts";

/** Whether a file agrees with its entries and the ledger, and where it does not. */
export interface FileBalance {
  readonly balanced: boolean;
  /** Each total that disagrees, as "credits: the file says $X, its entries $Y". */
  readonly differences: string[];
}

const dollars = (cents: number) => formatDollars(cents);

/**
 * Entries whose money the ledger must show: a payout credit not failed or voided (a failed one's
 * money went back to reserved, and its payout may have been offered again since), and a funding
 * debit once its file went to the bank.
 */
const LEDGER_ENTRY_STATUSES = "('batched', 'sent', 'completed')";

/**
 * Per batch, the entries' money and what the ledger moved for them. A payout paid through its
 * entry shows it in `payout.complete` (in_transit to bank: the amount less the payee fee, what
 * the entry carries); a payout still in flight holds in in_transit what the entry carries plus
 * every fee; a funding debit sent is `funding.ach_initiated` into pending_funding.
 */
const LEDGER_SQL = (ids: string) => `
  WITH considered AS (
    SELECT e.batch_id, e.amount_cents, e.payout_id, e.funding_id, b.status AS batch_status
      FROM rail_batch_entries e JOIN rail_batches b ON b.id = e.batch_id
      WHERE e.batch_id IN (${ids}) AND e.status IN ${LEDGER_ENTRY_STATUSES}
    UNION ALL
    -- A print file carries checks, not entries: each check's entry is its submission.
    SELECT k.print_file_id, e.amount_cents, e.payout_id, NULL, b.status
      FROM checks k JOIN rail_batch_entries e ON e.reference = k.reference
        JOIN rail_batches b ON b.id = k.print_file_id
      WHERE k.print_file_id IN (${ids}) AND e.status IN ${LEDGER_ENTRY_STATUSES}
  ),
  moved AS (
    SELECT c.batch_id, c.amount_cents,
      CASE
        WHEN c.payout_id IS NOT NULL THEN coalesce(
          (SELECT sum(le.amount_cents) FROM ledger_transactions t
             JOIN ledger_entries le ON le.transaction_id = t.id
             JOIN ledger_accounts a ON a.id = le.account_id
           WHERE t.payout_id = c.payout_id AND t.kind = 'payout.complete' AND a.code = 'bank'),
          (SELECT sum(le.amount_cents) FROM ledger_transactions t
             JOIN ledger_entries le ON le.transaction_id = t.id
             JOIN ledger_accounts a ON a.id = le.account_id
           WHERE t.payout_id = c.payout_id AND a.code = 'in_transit')
            - (SELECT p.payee_fee_cents + p.payor_fee_cents + p.service_fee_cents
                 FROM payouts p WHERE p.id = c.payout_id),
          0)
        WHEN c.batch_status = 'transmitted' THEN coalesce(
          (SELECT sum(le.amount_cents) FROM ledger_transactions t
             JOIN ledger_entries le ON le.transaction_id = t.id
             JOIN ledger_accounts a ON a.id = le.account_id
           WHERE t.funding_id = c.funding_id AND t.kind = 'funding.ach_initiated'
             AND a.code = 'pending_funding'),
          0)
        -- A funding debit's money moves in the ledger when its file is sent.
        ELSE c.amount_cents
      END AS ledger_cents
    FROM considered c
  )
  SELECT batch_id, sum(amount_cents) AS entries_cents, sum(ledger_cents) AS ledger_cents
    FROM moved GROUP BY batch_id`;

/**
 * The balance of each file or batch of `batchIds` (any rail): the batch's total and entry count
 * against its entries; an ACH file's credit and debit totals and entry count too; a check file's
 * issues, voids and total against the checks it names; and the entries against the ledger.
 */
export async function fileBalances(
  client: Client,
  batchIds: readonly string[],
): Promise<Map<string, FileBalance>> {
  if (batchIds.length === 0) return new Map();
  const ids = batchIds.map(() => "?").join(", ");
  const [headers, ledger] = await Promise.all([
    client.execute({
      sql: `SELECT b.id, b.total_cents, b.entry_count,
              f.credit_total_cents, f.debit_total_cents, f.entry_count AS file_entry_count,
              k.kind AS check_file_kind, k.issue_count, k.void_count,
              k.total_cents AS check_file_total_cents,
              (SELECT count(*) FROM rail_batch_entries e WHERE e.batch_id = b.id) AS entries,
              (SELECT coalesce(sum(e.amount_cents), 0) FROM rail_batch_entries e
                WHERE e.batch_id = b.id) AS entries_cents,
              (SELECT coalesce(sum(e.amount_cents), 0) FROM rail_batch_entries e
                WHERE e.batch_id = b.id AND e.direction = 'credit') AS credits,
              (SELECT coalesce(sum(e.amount_cents), 0) FROM rail_batch_entries e
                WHERE e.batch_id = b.id AND e.direction = 'debit') AS debits,
              CASE k.kind WHEN 'print' THEN
                (SELECT count(*) FROM checks c WHERE c.print_file_id = b.id)
              ELSE (SELECT count(*) FROM checks c WHERE c.issue_file_id = b.id) END AS issues,
              CASE k.kind WHEN 'print' THEN
                (SELECT coalesce(sum(c.amount_cents), 0) FROM checks c WHERE c.print_file_id = b.id)
              ELSE (SELECT coalesce(sum(c.amount_cents), 0) FROM checks c
                WHERE c.issue_file_id = b.id) END AS issues_cents,
              (SELECT count(*) FROM checks c WHERE c.void_file_id = b.id) AS voids
            FROM rail_batches b LEFT JOIN ach_files f ON f.batch_id = b.id
              LEFT JOIN check_files k ON k.batch_id = b.id
            WHERE b.id IN (${ids})`,
      args: [...batchIds],
    }),
    client.execute({ sql: LEDGER_SQL(ids), args: [...batchIds, ...batchIds] }),
  ]);
  const ledgerOf = new Map(ledger.rows.map((row) => [String(row.batch_id), row]));
  return new Map(headers.rows.map((row) => {
    const differences: string[] = [];
    const compare = (what: string, said: unknown, sum: unknown, show: (v: number) => string) => {
      if (Number(said) !== Number(sum)) {
        differences.push(
          `${what}: the file says ${show(Number(said))}, its entries ${show(Number(sum))}`,
        );
      }
    };
    const count = (n: number) => String(n);
    if (row.check_file_kind !== null) {
      compare("issues", row.issue_count, row.issues, count);
      compare("voids", row.void_count, row.voids, count);
      compare("total", row.check_file_total_cents, row.issues_cents, dollars);
      if (row.check_file_kind === "print") {
        // A print file carries checks, not entries.
        compare("batch total", row.total_cents, row.issues_cents, dollars);
      } else {
        compare("batch total", row.total_cents, row.entries_cents, dollars);
        compare("batch entries", row.entry_count, row.entries, count);
      }
    } else {
      if (row.credit_total_cents !== null) {
        compare("credits", row.credit_total_cents, row.credits, dollars);
        compare("debits", row.debit_total_cents, row.debits, dollars);
        compare("entries", row.file_entry_count, row.entries, count);
      }
      compare("total", row.total_cents, row.entries_cents, dollars);
      compare("batch entries", row.entry_count, row.entries, count);
    }
    const moved = ledgerOf.get(String(row.id));
    if (moved && Number(moved.entries_cents) !== Number(moved.ledger_cents)) {
      differences.push(
        `ledger: its entries carry ${dollars(Number(moved.entries_cents))}, the ledger moved ${
          dollars(Number(moved.ledger_cents))
        }`,
      );
    }
    return [String(row.id), { balanced: differences.length === 0, differences }];
  }));
}

/** A row of a list of files with its balance. */
export type Balanced<T> = T & { readonly balance: FileBalance | undefined };

/** A page of files (or batches) with each one's balance. */
export async function withFileBalances<T extends { readonly id: string }>(
  client: Client,
  reading: Promise<Page<T>>,
): Promise<Page<Balanced<T>>> {
  const page = await reading;
  const balances = await fileBalances(client, page.data.map((row) => row.id));
  return {
    data: page.data.map((row) => ({ ...row, balance: balances.get(row.id) })),
    hasMore: page.hasMore,
  };
}
