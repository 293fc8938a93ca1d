/**
 * What operators read of reconciliation: each account's day as a statement reported it, against
 * what the service expected, with its matches and open exceptions; and the gauges of /metrics.
 */
import type { Database } from "../../db/client.ts";
import type { SqlReader } from "../../db/writer.ts";

/** The days a page or an export lists at most. */
export const STATEMENT_DAYS_LISTED_MAX = 1_000;

export interface StatementDayView {
  readonly id: string;
  readonly companyId: string;
  readonly companyName: string;
  readonly date: string;
  readonly accountLastFour: string;
  readonly role: string;
  readonly openingCents: number | null;
  readonly closingCents: number | null;
  /** What the bank's lines moved (credits less debits), and what the service expected. */
  readonly bankNetCents: number;
  readonly expectedNetCents: number;
  readonly lines: number;
  readonly matched: number;
  readonly exceptions: number;
  readonly openExceptions: number;
  readonly fileName: string;
  readonly source: string;
}

/** A day is reconciled when nothing of it is left open. */
export const dayBadge = (day: Pick<StatementDayView, "openExceptions" | "exceptions">) =>
  day.openExceptions > 0 ? "differences" : day.exceptions > 0 ? "resolved" : "reconciled";

const nullableNumber = (v: unknown) => (v === null ? null : Number(v));

/** The days of some companies (null: every company), newest first. */
export async function listStatementDays(
  reader: SqlReader,
  filter: { companyIds: readonly string[] | null; limit: number },
): Promise<StatementDayView[]> {
  if (filter.companyIds !== null && filter.companyIds.length === 0) return [];
  const scope = filter.companyIds === null ? { sql: "1 = 1", args: [] as string[] } : {
    sql: `d.company_id IN (${filter.companyIds.map(() => "?").join(", ")})`,
    args: [...filter.companyIds],
  };
  const { rows } = await reader.execute({
    sql: `SELECT d.id, d.company_id, c.name AS company_name, d.statement_date, d.account_last_four,
            d.account_role, d.opening_cents, d.closing_cents, d.credit_cents, d.debit_cents,
            d.expected_net_cents, d.line_count, d.matched_count, d.exception_count,
            (SELECT count(*) FROM recon_exceptions x WHERE x.day_id = d.id AND x.status = 'open')
              AS open_exceptions,
            i.file_name, i.source
          FROM statement_days d JOIN companies c ON c.id = d.company_id
            JOIN statement_imports i ON i.id = d.import_id
          WHERE ${scope.sql}
          ORDER BY d.statement_date DESC, c.name, d.account_last_four LIMIT ?`,
    args: [...scope.args, filter.limit],
  });
  return rows.map((r) => ({
    id: String(r.id),
    companyId: String(r.company_id),
    companyName: String(r.company_name),
    date: String(r.statement_date),
    accountLastFour: String(r.account_last_four),
    role: String(r.account_role),
    openingCents: nullableNumber(r.opening_cents),
    closingCents: nullableNumber(r.closing_cents),
    bankNetCents: Number(r.credit_cents) - Number(r.debit_cents),
    expectedNetCents: Number(r.expected_net_cents),
    lines: Number(r.line_count),
    matched: Number(r.matched_count),
    exceptions: Number(r.exception_count),
    openExceptions: Number(r.open_exceptions),
    fileName: String(r.file_name),
    source: String(r.source),
  }));
}

/** Per environment: open exceptions by side, and how long the oldest has waited. */
export async function reconGauges(
  databases: Readonly<Record<string, Database>>,
  now: number,
): Promise<{ environment: string; side: string; open: number; oldestAgeSeconds: number }[]> {
  const gauges = [];
  for (const database of Object.values(databases)) {
    try {
      const { rows } = await database.readClient.execute(
        `SELECT side, count(*) AS n, min(created_at) AS oldest FROM recon_exceptions
          WHERE status = 'open' GROUP BY side`,
      );
      for (const side of ["bank", "service"]) {
        const row = rows.find((r) => r.side === side);
        gauges.push({
          environment: database.environment,
          side,
          open: row ? Number(row.n) : 0,
          oldestAgeSeconds: row ? Math.max(0, Math.floor((now - Number(row.oldest)) / 1000)) : 0,
        });
      }
    } catch {
      // Readiness reports an unreachable database; the other gauges still render.
    }
  }
  return gauges;
}
