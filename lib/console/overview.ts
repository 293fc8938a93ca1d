/**
 * The console's Overview (issue 20): per company and line the held balances, payouts by status
 * today, the amount sent and payout count per day over 30 days, and what needs attention. Every
 * query is bounded by an index or by the days it reads, so the page costs the same at 100,000
 * payouts as at 100.
 */
import type { Client, InValue } from "@libsql/client";
import type { Database } from "../../db/client.ts";
import { isLedgerTransactionKind } from "../ledger/postings.ts";
import { computeTieOut, type DayMovement, heldAccounts } from "../ledger/tieout.ts";
import type { LedgerAccountCode } from "../ledger/types.ts";
import type { PayoutStatus } from "../payouts/states.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { balancesPerLine, type LineBalanceRow } from "./ledger.ts";
import { scopeCondition } from "./paging.ts";

const DAY_MS = 86_400_000;
/** Days the chart shows, today included. */
export const CHART_DAYS = 30;

export interface ChartDay {
  /** The day's start in the operator's zone (epoch ms). */
  readonly start: number;
  readonly sentCents: number;
  readonly payouts: number;
}

export interface TieOutDifference {
  readonly companyName: string;
  readonly lineId: string;
  readonly lineCode: string;
  /** The UTC day (YYYY-MM-DD). */
  readonly date: string;
  readonly differenceCents: number;
}

export interface Attention {
  readonly failedDeliveries: number;
  readonly parkedJobs: number;
  readonly failedNotifications: number;
  readonly fundingWaiting: number;
  readonly largeDisbursementsWaiting: number;
  readonly tieOutDifferences: TieOutDifference[];
  /** Rail outcomes a payout could not take, waiting for an operator (rails:resolve-exception). */
  readonly railExceptions: number;
  /** Lines owing a cleared ACH funding the bank took back: their new payouts wait. */
  readonly fundingShortfalls: FundingShortfall[];
}

export interface FundingShortfall {
  readonly companyName: string;
  readonly lineId: string;
  readonly lineCode: string;
  readonly owedCents: number;
}

export interface Overview {
  readonly lines: LineBalanceRow[];
  /** Payouts that changed state today, by the state they are in now. */
  readonly statusToday: Partial<Record<PayoutStatus, number>>;
  readonly chart: ChartDay[];
  readonly attention: Attention;
}

async function count(client: Client, sql: string, args: InValue[]): Promise<number> {
  const { rows } = await client.execute({ sql, args });
  return Number(rows[0].n);
}

/**
 * The overview of the companies in scope (null: all). `todayStart` is the start of the operator's
 * day; the chart's days are counted back from it in whole days of 24 hours.
 */
export async function readOverview(
  database: Database,
  companyIds: readonly string[] | null,
  options: { todayStart: number; realNow: number },
): Promise<Overview> {
  const client = database.readClient;
  const lines = await balancesPerLine(client, companyIds);
  const companies = [...new Set(lines.map((line) => line.companyId))];
  const scoped = (column: string) => scopeCondition(column, companyIds);
  // Leading with the company lets payouts_company_status serve the status filters.
  const inCompanies = (column: string) =>
    companies.length === 0
      ? { sql: "1 = 0", args: [] as InValue[] }
      : { sql: `${column} IN (${companies.map(() => "?").join(", ")})`, args: companies };
  const chartStart = options.todayStart - (CHART_DAYS - 1) * DAY_MS;

  const payoutsScope = scoped("p.company_id");
  const [statusRows, chartRows, attention] = await Promise.all([
    client.execute({
      sql: `SELECT p.status, count(*) AS n FROM payouts p
            WHERE p.updated_at >= ? AND ${payoutsScope.sql} GROUP BY p.status`,
      args: [options.todayStart, ...payoutsScope.args],
    }),
    chartDays(database, companyIds, chartStart, options.todayStart),
    (async (): Promise<Attention> => {
      const companiesIn = inCompanies("company_id");
      const deliveries = scoped("w.company_id");
      const jobs = scoped("company_id");
      const notifications = scoped("company_id");
      const [
        failedDeliveries,
        parkedJobs,
        failedNotifications,
        fundingWaiting,
        largeDisbursementsWaiting,
        tieOutDifferences,
        railExceptions,
      ] = await Promise.all([
        count(
          client,
          `SELECT count(*) AS n FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
            WHERE d.status = 'failed' AND ${deliveries.sql}`,
          deliveries.args,
        ),
        count(
          client,
          `SELECT count(*) AS n FROM scheduled_jobs
            WHERE done_at IS NOT NULL AND error IS NOT NULL AND ${jobs.sql}`,
          jobs.args,
        ),
        count(
          client,
          `SELECT count(*) AS n FROM notifications WHERE status = 'failed' AND ${notifications.sql}`,
          notifications.args,
        ),
        count(
          client,
          `SELECT count(*) AS n FROM fundings WHERE status = 'Pending' AND ${companiesIn.sql}`,
          companiesIn.args,
        ),
        count(
          client,
          `SELECT count(DISTINCT p.disbursement_id) AS n FROM payouts p
              JOIN disbursements d ON d.id = p.disbursement_id
            WHERE ${inCompanies("p.company_id").sql} AND p.status = 'pending_funds'
              AND d.large_disbursement = 1`,
          companies,
        ),
        tieOutDifferencesOf(database, lines, options.realNow),
        count(
          client,
          `SELECT count(*) AS n FROM rail_exceptions WHERE status = 'open' AND ${jobs.sql}`,
          jobs.args,
        ),
      ]);
      return {
        failedDeliveries,
        parkedJobs,
        failedNotifications,
        fundingWaiting,
        largeDisbursementsWaiting,
        tieOutDifferences,
        railExceptions,
        fundingShortfalls: lines.filter((line) => line.balances.funding_shortfall < 0).map((
          line,
        ) => ({
          companyName: line.companyName,
          lineId: line.lineId,
          lineCode: line.lineCode,
          owedCents: -line.balances.funding_shortfall,
        })),
      };
    })(),
  ]);

  const chart: ChartDay[] = [];
  for (let day = 0; day < CHART_DAYS; day++) {
    const sent = chartRows.get(day);
    chart.push({
      start: chartStart + day * DAY_MS,
      sentCents: sent?.cents ?? 0,
      payouts: sent?.payouts ?? 0,
    });
  }
  return {
    lines,
    statusToday: Object.fromEntries(
      statusRows.rows.map((row) => [String(row.status), Number(row.n)]),
    ),
    chart,
    attention,
  };
}

/** Payouts sent and their amount on one day of the chart. */
interface DaySent {
  readonly payouts: number;
  readonly cents: number;
}

/** Finished days of the chart kept per database, by scope and first day, at most this many. */
const FINISHED_CHARTS_MAX = 64;
const finishedCharts = new WeakMap<Database, Map<string, Map<number, DaySent>>>();

/**
 * The chart's days (0 = its first), from the payouts that moved to funds_sent. Days before today
 * are read once and kept: a transition is stamped with the time it happens (the sandbox clock in
 * test, which is never behind real time), so no later one lands on a finished day. Only today's
 * transitions are read on every request.
 */
async function chartDays(
  database: Database,
  companyIds: readonly string[] | null,
  chartStart: number,
  todayStart: number,
): Promise<Map<number, DaySent>> {
  const scope = scopeCondition("p.company_id", companyIds);
  const read = async (from: number, until: number | null) => {
    const { rows } = await database.readClient.execute({
      sql: `SELECT CAST((t.at - ?) / ${DAY_MS} AS INTEGER) AS day, count(*) AS n,
              sum(p.amount_cents) AS cents
            FROM payout_transitions t JOIN payouts p ON p.id = t.payout_id
            WHERE t.to_status = 'funds_sent' AND t.at >= ? ${until === null ? "" : "AND t.at < ?"}
              AND ${scope.sql}
            GROUP BY day`,
      args: [chartStart, from, ...(until === null ? [] : [until]), ...scope.args],
    });
    return new Map(
      rows.map((row) => [Number(row.day), { payouts: Number(row.n), cents: Number(row.cents) }]),
    );
  };
  let charts = finishedCharts.get(database);
  if (!charts) {
    charts = new Map();
    finishedCharts.set(database, charts);
  }
  const key = `${
    companyIds === null ? "*" : [...companyIds].sort().join(",")
  }|${chartStart}|${todayStart}`;
  let finished = charts.get(key);
  if (!finished) {
    finished = await read(chartStart, todayStart);
    if (charts.size >= FINISHED_CHARTS_MAX) charts.delete(charts.keys().next().value!);
    charts.set(key, finished);
  }
  const days = new Map(finished);
  for (const [day, sent] of await read(todayStart, null)) days.set(day, sent);
  return days;
}

/** Differences of finished days, per database, by line and date; at most this many kept. */
const FINISHED_TIE_OUTS_MAX = 10_000;
const finishedTieOuts = new WeakMap<Database, Map<string, number>>();

/**
 * A line's tie-out difference of one UTC day. It depends only on that day's movements (closing −
 * opening is the sum of its held entries), so only the day's entries are read, through the
 * line's posted_at index.
 */
async function dayDifference(database: Database, lineId: string, start: number): Promise<number> {
  const { rows } = await database.readClient.execute({
    sql: `SELECT t.kind, a.code, sum(e.amount_cents) AS cents
          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
            JOIN ledger_accounts a ON a.id = e.account_id
          WHERE t.line_id = ? AND t.posted_at >= ? AND t.posted_at < ?
          GROUP BY t.kind, a.code`,
    args: [lineId, start, start + DAY_MS],
  });
  const movements: DayMovement[] = rows
    .filter((row) => isLedgerTransactionKind(String(row.kind)))
    .map((row) => ({
      kind: String(row.kind) as DayMovement["kind"],
      account: String(row.code) as LedgerAccountCode,
      cents: Number(row.cents),
    }));
  const heldChange = movements.filter((m) => heldAccounts.includes(m.account))
    .reduce((sum, m) => sum + m.cents, 0);
  return computeTieOut(new Date(start).toISOString().slice(0, 10), 0, heldChange, movements)
    .difference;
}

/**
 * Lines whose tie-out of yesterday or today (UTC days on each company's clock: the sandbox clock
 * in test) is not zero. Yesterday is read once and kept: entries are posted at the time they
 * happen on a clock that only moves forward, so no later entry lands on a finished day.
 */
async function tieOutDifferencesOf(
  database: Database,
  lines: readonly LineBalanceRow[],
  realNow: number,
): Promise<TieOutDifference[]> {
  let finished = finishedTieOuts.get(database);
  if (!finished) {
    finished = new Map();
    finishedTieOuts.set(database, finished);
  }
  const kept = finished;
  const perLine = await Promise.all(lines.map(async (line) => {
    const now = await domainNow(database, line.companyId, realNow);
    const todayStart = Math.floor(now / DAY_MS) * DAY_MS;
    const yesterdayStart = todayStart - DAY_MS;
    const yesterdayKey = `${line.lineId}|${yesterdayStart}`;
    let yesterday = kept.get(yesterdayKey);
    if (yesterday === undefined) {
      yesterday = await dayDifference(database, line.lineId, yesterdayStart);
      if (kept.size >= FINISHED_TIE_OUTS_MAX) kept.delete(kept.keys().next().value!);
      kept.set(yesterdayKey, yesterday);
    }
    const today = await dayDifference(database, line.lineId, todayStart);
    return ([[yesterdayStart, yesterday], [todayStart, today]] as const)
      .filter(([, difference]) => difference !== 0)
      .map(([start, difference]) => ({
        companyName: line.companyName,
        lineId: line.lineId,
        lineCode: line.lineCode,
        date: new Date(start).toISOString().slice(0, 10),
        differenceCents: difference,
      }));
  }));
  return perLine.flat();
}
