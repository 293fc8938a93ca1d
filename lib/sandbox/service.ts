/**
 * The test environment's sandbox (contract §10 and §13): each company's sandbox clock, which moves
 * only forward and runs what falls due, and the inbox of the messages it "sent".
 */
import { desc } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { advanceSandboxClock, type JobHandlers } from "../../db/scheduler.ts";
import { notifications } from "../../db/schema.ts";
import { domainNow } from "./clock_store.ts";

/** The company's current domain time: real time in live, its sandbox clock in test. */
export function companyNow(
  database: Database,
  companyId: string,
  realNow: number,
): Promise<number> {
  return domainNow(database, companyId, realNow);
}

/** The company's sandbox time and how far it runs ahead of real time (the sum of its advances). */
export async function readCompanyClock(
  database: Database,
  companyId: string,
  realNow: number,
): Promise<{ now: number; aheadMs: number }> {
  const now = await domainNow(database, companyId, realNow);
  return { now, aheadMs: now - realNow };
}

/** Moves the company's sandbox clock and runs everything that falls due, in time order. */
export function advanceCompanyClock(
  database: Database,
  companyId: string,
  seconds: number,
  options: { realNow: number; handlers: JobHandlers },
): Promise<{ now: number; jobsRun: number }> {
  return advanceSandboxClock(database, companyId, seconds, options.realNow, options.handlers);
}

/** A message the sandbox kept instead of sending. */
export interface SandboxMessage {
  readonly id: string;
  readonly channel: "email" | "sms";
  readonly recipient: string;
  readonly subject: string | null;
  readonly body: string;
  readonly links: string[];
  readonly code: string | null;
  /** When it was "sent", else when it was queued. */
  readonly at: number;
}

/** The newest `limit` messages of the test environment, newest first. */
export async function sandboxInbox(database: Database, limit: number): Promise<SandboxMessage[]> {
  const rows = await database.read.select().from(notifications)
    .orderBy(desc(notifications.createdAt), desc(notifications.id)).limit(limit);
  return rows.map((row) => ({
    id: row.id,
    channel: row.channel,
    recipient: row.recipient,
    subject: row.subject,
    body: row.body,
    links: JSON.parse(row.links) as string[],
    code: row.code,
    at: row.sentAt ?? row.createdAt,
  }));
}
