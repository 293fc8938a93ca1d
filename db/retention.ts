/**
 * Rows kept only for a while. Idempotency records go once their 24 hours are over (contract §7:
 * purged after, never before). Scheduled jobs go 30 days after they ran: the payout's timeline and
 * events are its record, and a job is one row per reminder, offer and rail outcome, so keeping
 * them would grow the database with every payout. A parked job (done with an error) stays for an
 * operator (`jobs:list --parked`), and a job waiting for its retry is not done, so it stays too.
 * Deleted in small units so a backlog never holds the writer for long.
 */
import type { Database } from "./client.ts";
import { purgeExpiredIdempotency } from "../lib/idempotency/store.ts";
import { purgeDoneJobs } from "./scheduler_store.ts";
import type { WriteUnit } from "./writer.ts";

const DONE_JOB_RETENTION_MS = 30 * 86_400_000;
const ROWS_PER_UNIT = 500;

export interface Purged {
  readonly idempotencyRecords: number;
  readonly doneJobs: number;
}

/** Deletes every expired row of `database`, `ROWS_PER_UNIT` per write unit. */
export async function purgeExpiredRows(database: Database, realNow: number): Promise<Purged> {
  const drain = async (purge: WriteUnit<number>) => {
    let total = 0;
    for (;;) {
      const deleted = await database.writer.write(purge);
      total += deleted;
      if (deleted < ROWS_PER_UNIT) return total;
    }
  };
  return {
    idempotencyRecords: await drain((tx) => purgeExpiredIdempotency(tx, realNow, ROWS_PER_UNIT)),
    // Sandbox jobs are stamped with their company's clock, which may run ahead of real time:
    // those wait until real time passes their stamp too.
    doneJobs: await drain((tx) =>
      purgeDoneJobs(tx, realNow - DONE_JOB_RETENTION_MS, ROWS_PER_UNIT)
    ),
  };
}
