/**
 * The console's Overview (issue 20): per company and line the held balances, payouts by status
 * today, the amount sent and payout count per day over 30 days, and what needs attention. Every
 * query is bounded by an index or by the days it reads, so the page costs the same at 100,000
 * payouts as at 100.
 */
import type { Client, InValue } from "@libsql/client";
import type { Database } from "../../db/client.ts";
import type { PayoutStatus } from "../payouts/states.ts";
import { latestDomainNow } from "../sandbox/clock_store.ts";
import { balancesPerLine, type LineBalanceRow } from "./ledger.ts";
import { type NeedsAction, readNeedsAction } from "./needs_action.ts";
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

export interface Attention {
  readonly fundingWaiting: number;
  readonly largeDisbursementsWaiting: number;
  /** The counts of the Needs action queue (its items are on its own page). */
  readonly needsAction: NeedsAction;
}

export interface Overview {
  readonly lines: LineBalanceRow[];
  /** Payouts that changed state today, by the state they are in now. */
  readonly statusToday: Partial<Record<PayoutStatus, number>>;
  readonly chart: ChartDay[];
  readonly attention: Attention;
}

/** The Overview's "now": the sandbox clock in test (the furthest any company's runs ahead). */
export function overviewNow(database: Database, realNow: number): Promise<number> {
  return latestDomainNow(database, realNow);
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
  options: { todayStart: number; realNow: number; live: Client },
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
      const [fundingWaiting, largeDisbursementsWaiting, needsAction] = await Promise.all([
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
        readNeedsAction(database, companyIds, {
          realNow: options.realNow,
          live: options.live,
          itemsMax: 0,
        }),
      ]);
      return { fundingWaiting, largeDisbursementsWaiting, needsAction };
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
