/**
 * The console's Sandbox page (test environment only): each company's sandbox clock, and the
 * messages the sandbox kept instead of sending, with their links and codes, for the operator's
 * companies, and an operator's advance of one clock.
 */
import type { Database } from "../../db/client.ts";
import type { JobHandlers } from "../../db/scheduler.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import { advanceCompanyClock, readCompanyClock } from "../sandbox/service.ts";
import { scopedCompanies } from "./companies.ts";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export interface CompanyClock {
  readonly companyId: string;
  readonly companyName: string;
  readonly tin: string;
  readonly now: number;
  readonly aheadMs: number;
}

/** The sandbox time of every company of the scope. */
export async function companyClocks(
  database: Database,
  companyIds: readonly string[] | null,
  realNow: number,
): Promise<CompanyClock[]> {
  if (database.environment !== "test") throw new Error("only the test environment has clocks");
  const clocks: CompanyClock[] = [];
  for (const company of await scopedCompanies(database.readClient, companyIds)) {
    const clock = await readCompanyClock(database, company.id, realNow);
    clocks.push({
      companyId: company.id,
      companyName: company.name,
      tin: company.tin,
      now: clock.now,
      aheadMs: clock.aheadMs,
    });
  }
  return clocks;
}

export const inboxSorts: Sortable = {
  sent: "coalesce(n.sent_at, n.created_at)",
  to: "n.recipient",
};

export interface InboxMessage {
  readonly id: string;
  readonly companyName: string | null;
  readonly channel: "email" | "sms";
  readonly recipient: string;
  readonly subject: string | null;
  readonly body: string;
  readonly links: string[];
  readonly code: string | null;
  readonly at: number;
}

/** A page of the sandbox inbox, the scope's companies only. */
export async function sandboxInboxPage(
  database: Database,
  companyIds: readonly string[] | null,
  window: PageWindow,
): Promise<Page<InboxMessage>> {
  if (database.environment !== "test") throw new Error("only the test environment has an inbox");
  const where = allOf([scopeCondition("n.company_id", companyIds)]);
  const order = orderAndPage(window, inboxSorts, "n.rowid");
  const { rows } = await database.readClient.execute({
    sql: `SELECT n.id, c.name AS company_name, n.channel, n.recipient, n.subject, n.body, n.links,
            n.code, coalesce(n.sent_at, n.created_at) AS at
          FROM notifications n LEFT JOIN companies c ON c.id = n.company_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  const text = (value: unknown) => value === null ? null : String(value);
  return pageOf(
    window,
    rows.map((row) => ({
      id: String(row.id),
      companyName: text(row.company_name),
      channel: String(row.channel) as "email" | "sms",
      recipient: String(row.recipient),
      subject: text(row.subject),
      body: String(row.body),
      links: JSON.parse(String(row.links)) as string[],
      code: text(row.code),
      at: Number(row.at),
    })),
  );
}

/** One advance moves a clock at most a year, as the API's. */
export const CLOCK_ADVANCE_SECONDS_MAX = 31_536_000;

/**
 * Moves a company's sandbox clock as an operator and runs what falls due (lib/sandbox/service.ts),
 * then appends the audit row with the clock before and after. The advance runs its own units (one
 * for the clock, then one per job), so the row follows them rather than sharing the first one:
 * test data only, where no approval applies.
 */
export async function advanceClockAsOperator(
  database: Database,
  companyId: string,
  seconds: number,
  options: { realNow: number; handlers: JobHandlers; actor: AuditActor },
): Promise<{ before: number; now: number; jobsRun: number }> {
  const before = await readCompanyClock(database, companyId, options.realNow);
  const advanced = await advanceCompanyClock(database, companyId, seconds, options);
  await database.writer.write((tx) =>
    appendAudit(tx, "test", options.actor, {
      at: options.realNow,
      action: "sandbox:advance",
      objectType: "sandbox_clock",
      objectId: companyId,
      companyId,
      before: { now: new Date(before.now).toISOString() },
      after: {
        now: new Date(advanced.now).toISOString(),
        advanced_seconds: seconds,
        jobs_run: advanced.jobsRun,
      },
    })
  );
  return { before: before.now, now: advanced.now, jobsRun: advanced.jobsRun };
}
