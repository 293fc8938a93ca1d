/**
 * The console's reconciliation of one line on one day (a UTC day of the company's time: its
 * sandbox clock in test): the tie-out with its payout lines, the bank files and batches cut that
 * day with their balance, the payouts that failed or came back, and the checks paid; and the
 * expected payments of the operator's companies (wires awaited, ACH fundings in flight) with those
 * that arrived lately, matched to the funding they were announced as.
 */
import type { Client } from "@libsql/client";
import { utcDayBounds } from "../ledger/tieout.ts";
import type { TieOut } from "../ledger/tieout.ts";
import { type FileBalance, fileBalances } from "./file_balances.ts";
import { tieOutRun } from "./ledger.ts";
import { scopeCondition } from "./paging.ts";

/** Rows each section of a day shows at most (a day with more says so). */
export const DAY_SECTION_ROWS_MAX = 200;

export interface DayFile {
  readonly id: string;
  readonly rail: string;
  readonly reference: string | null;
  readonly status: string;
  readonly entryCount: number;
  readonly totalCents: number;
  readonly cutoffAt: number;
  readonly balance: FileBalance | undefined;
}

export interface DayReturn {
  readonly payoutId: string;
  readonly payeeName: string;
  readonly amountCents: number;
  /** The failure's code (R03, a decline…), or what the transition said. */
  readonly code: string | null;
  readonly at: number;
}

export interface DayPaidCheck {
  readonly checkNumber: number;
  readonly payoutId: string;
  readonly payeeName: string;
  readonly amountCents: number;
  readonly paidAmountCents: number | null;
  readonly paidAt: number;
}

export interface DayReconciliation {
  readonly tieOut: TieOut;
  /** The company's files and batches whose cutoff fell on the day (they carry every line's). */
  readonly files: DayFile[];
  readonly returns: DayReturn[];
  readonly paidChecks: DayPaidCheck[];
}

const nameOf = (first: unknown, last: unknown) =>
  [first, last].filter((part) => part !== null && part !== "").join(" ");

/** One line's day, or null when the date is not a real one. */
export async function dayReconciliation(
  client: Client,
  line: { companyId: string; lineId: string },
  date: string,
): Promise<DayReconciliation | null> {
  const day = utcDayBounds(date);
  if (!day) return null;
  const [[tieOut], files, returns, paid] = await Promise.all([
    tieOutRun(client, line.lineId, [date]),
    client.execute({
      sql: `SELECT id, rail, rail_reference, status, entry_count, total_cents, cutoff_at
            FROM rail_batches WHERE company_id = ? AND cutoff_at >= ? AND cutoff_at < ?
            ORDER BY cutoff_at, rowid LIMIT ?`,
      args: [line.companyId, day.start, day.end, DAY_SECTION_ROWS_MAX],
    }),
    client.execute({
      sql: `SELECT p.id, p.first_name, p.last_name, p.email, p.amount_cents,
              coalesce(p.failure_reason, t.detail) AS code, t.at
            FROM payout_transitions t JOIN payouts p ON p.id = t.payout_id
            WHERE t.to_status = 'failed' AND t.at >= ? AND t.at < ? AND p.line_id = ?
            ORDER BY t.at, t.id LIMIT ?`,
      args: [day.start, day.end, line.lineId, DAY_SECTION_ROWS_MAX],
    }),
    client.execute({
      sql: `SELECT k.check_number, k.payout_id, k.payee_name, k.amount_cents,
              k.paid_amount_cents, k.paid_at
            FROM checks k JOIN payouts p ON p.id = k.payout_id
            WHERE k.company_id = ? AND k.paid_at >= ? AND k.paid_at < ? AND p.line_id = ?
            ORDER BY k.paid_at, k.check_number LIMIT ?`,
      args: [line.companyId, day.start, day.end, line.lineId, DAY_SECTION_ROWS_MAX],
    }),
  ]);
  const balances = await fileBalances(client, files.rows.map((row) => String(row.id)));
  return {
    tieOut,
    files: files.rows.map((row) => ({
      id: String(row.id),
      rail: String(row.rail),
      reference: row.rail_reference === null ? null : String(row.rail_reference),
      status: String(row.status),
      entryCount: Number(row.entry_count),
      totalCents: Number(row.total_cents),
      cutoffAt: Number(row.cutoff_at),
      balance: balances.get(String(row.id)),
    })),
    returns: returns.rows.map((row) => ({
      payoutId: String(row.id),
      payeeName: nameOf(row.first_name, row.last_name) || String(row.email ?? row.id),
      amountCents: Number(row.amount_cents),
      code: row.code === null ? null : String(row.code),
      at: Number(row.at),
    })),
    paidChecks: paid.rows.map((row) => ({
      checkNumber: Number(row.check_number),
      payoutId: String(row.payout_id),
      payeeName: String(row.payee_name),
      amountCents: Number(row.amount_cents),
      paidAmountCents: row.paid_amount_cents === null ? null : Number(row.paid_amount_cents),
      paidAt: Number(row.paid_at),
    })),
  };
}

/** Fundings that arrived this long ago at most still show, matched, under the expected ones. */
export const ARRIVED_SHOWN_MS = 7 * 86_400_000;

/** Expected payments listed at most. */
export const EXPECTED_PAYMENTS_MAX = 200;

export interface ExpectedPayment {
  readonly fundingId: string;
  readonly fundingUuid: string | null;
  readonly companyName: string;
  readonly lineCode: string;
  readonly method: "ACH" | "WireTransfer";
  readonly amountCents: number;
  readonly status: "Pending" | "Completed";
  /** The large disbursement the funding names, and what of it still waits for funds. */
  readonly disbursement: {
    readonly id: string;
    readonly claimOrUuid: string;
    readonly waitingCents: number;
  } | null;
  readonly expectedAt: number | null;
  readonly arrivedAt: number | null;
  readonly createdAt: number;
}

/**
 * The scope's money announced and not arrived (wires awaited, ACH fundings in flight), soonest
 * expected first, then what arrived in the ARRIVED_SHOWN_MS before `now` (the company's time),
 * newest first: each arrival is matched to the funding that announced it.
 */
export async function expectedPayments(
  client: Client,
  companyIds: readonly string[] | null,
  now: number,
): Promise<ExpectedPayment[]> {
  const scope = scopeCondition("f.company_id", companyIds);
  const { rows } = await client.execute({
    sql: `SELECT f.id, f.funding_uuid, c.name AS company_name, l.code AS line_code,
            f.payment_method, f.amount_cents, f.status, f.expected_available_at, f.completed_at,
            f.created_at, d.id AS disbursement_id,
            coalesce(d.claim_id, d.external_uuid) AS claim_or_uuid,
            (SELECT coalesce(sum(p.amount_cents), 0) FROM payouts p
              WHERE p.disbursement_id = d.id AND p.status = 'pending_funds') AS waiting_cents
          FROM fundings f JOIN companies c ON c.id = f.company_id
            JOIN business_lines l ON l.id = f.line_id
            LEFT JOIN disbursements d ON d.id = f.disbursement_id
          WHERE (f.status = 'Pending' OR (f.status = 'Completed' AND f.completed_at >= ?))
            AND ${scope.sql}
          ORDER BY f.status = 'Pending' DESC,
            CASE WHEN f.status = 'Pending' THEN coalesce(f.expected_available_at, f.created_at)
              ELSE -f.completed_at END, f.rowid
          LIMIT ?`,
    args: [now - ARRIVED_SHOWN_MS, ...scope.args, EXPECTED_PAYMENTS_MAX],
  });
  return rows.map((row) => ({
    fundingId: String(row.id),
    fundingUuid: row.funding_uuid === null ? null : String(row.funding_uuid),
    companyName: String(row.company_name),
    lineCode: String(row.line_code),
    method: String(row.payment_method) as "ACH" | "WireTransfer",
    amountCents: Number(row.amount_cents),
    status: String(row.status) as "Pending" | "Completed",
    disbursement: row.disbursement_id === null ? null : {
      id: String(row.disbursement_id),
      claimOrUuid: String(row.claim_or_uuid),
      waitingCents: Number(row.waiting_cents),
    },
    expectedAt: row.expected_available_at === null ? null : Number(row.expected_available_at),
    arrivedAt: row.completed_at === null ? null : Number(row.completed_at),
    createdAt: Number(row.created_at),
  }));
}
