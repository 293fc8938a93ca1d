/**
 * Runs due jobs: each in its own write unit that also marks it done, in due-time order, with the
 * job's due time as the domain time of what it does. Driven by an in-process loop, a Deno.cron
 * sweep each minute, and sandbox clock advances.
 */
import type { Clock } from "../lib/platform/clock.ts";
import type { Environment } from "../lib/platform/config.ts";
import type { Database } from "./client.ts";
import { purgeExpiredRows } from "./retention.ts";
import { advanceOffset, domainNow, latestDomainNow } from "../lib/sandbox/clock_store.ts";
import { companiesWithDueJobs, type DueJob, dueJobs, markJobDone } from "./scheduler_store.ts";
import type { WriteTx } from "./writer.ts";

export type JobHandler = (tx: WriteTx, job: DueJob) => Promise<void>;
export type JobHandlers = Readonly<Record<string, JobHandler>>;

/**
 * Jobs a sweep runs side by side: each in its own unit, so they share group commits and one
 * failing job rolls back only itself.
 */
export const JOBS_PER_BATCH_MAX = 32;

/** Expired rows are looked for at most this often (the first sweep looks at once). */
export const PURGE_INTERVAL_MS = 60_000;

/**
 * Runs every job of the company due at or before `until`, including jobs those jobs schedule.
 * `perBatch` 1 runs them strictly one after another in due order, as a sandbox clock advance
 * must (a job may schedule another that falls due before the next one found). A larger batch is
 * for sweeps at the present time: the jobs found run in due order within their batch, and any job
 * they schedule runs in a later batch.
 */
export async function runDueJobs(
  database: Database,
  companyId: string,
  until: number,
  handlers: JobHandlers,
  perBatch = 1,
): Promise<number> {
  let ran = 0;
  for (;;) {
    const jobs = await dueJobs(database.readClient, companyId, until, perBatch);
    if (jobs.length === 0) return ran;
    const outcomes = await Promise.all(jobs.map((job) => runJob(database, job, handlers)));
    ran += outcomes.filter((counted) => counted).length;
  }
}

/** Runs one job in its own unit that also marks it done; true when this run counted it. */
async function runJob(database: Database, job: DueJob, handlers: JobHandlers): Promise<boolean> {
  try {
    return await database.writer.write(async (tx) => {
      // Another runner (the sweep, a clock advance) may have taken it first.
      if (!(await markJobDone(tx, job.id, job.dueAt))) return false;
      const handler = handlers[job.kind];
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler(tx, job);
      return true;
    });
  } catch (error) {
    // The job's changes were rolled back with it; it is parked so one bad row cannot stall the queue.
    const message = error instanceof Error ? error.message : String(error);
    console.error(
      JSON.stringify({
        level: "error",
        msg: "job failed",
        job_id: job.id,
        kind: job.kind,
        error: message,
      }),
    );
    await database.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE scheduled_jobs SET done_at = ?, error = ? WHERE id = ? AND done_at IS NULL",
        args: [job.dueAt, message, job.id],
      })
    );
    return true;
  }
}

/**
 * DESIGN 10: a test-environment webhook retry is due at its real-time schedule or when the
 * sandbox clock passes it, whichever comes first, so pending retries the new sandbox time has
 * passed become due now.
 */
async function bringRetriesDue(
  tx: WriteTx,
  companyId: string,
  realNow: number,
  sandboxNow: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE webhook_deliveries SET next_attempt_at = ?
            WHERE status = 'pending' AND next_attempt_at > ? AND next_attempt_at <= ?
              AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE company_id = ?)`,
    args: [realNow, realNow, sandboxNow, companyId],
  });
}

/** Moves a company's sandbox clock and runs everything that falls due, in time order. */
export async function advanceSandboxClock(
  database: Database,
  companyId: string,
  seconds: number,
  realNow: number,
  handlers: JobHandlers,
): Promise<{ now: number; jobsRun: number }> {
  if (database.environment !== "test") {
    throw new Error("only the test environment has a sandbox clock");
  }
  const offset = await database.writer.write(async (tx) => {
    const offset = await advanceOffset(tx, companyId, seconds * 1000, realNow);
    await bringRetriesDue(tx, companyId, realNow, realNow + offset);
    return offset;
  });
  const now = realNow + offset;
  return { now, jobsRun: await runDueJobs(database, companyId, now, handlers) };
}

/** The background loop over both databases; one sweep at a time. */
export class Scheduler {
  #timer: ReturnType<typeof setInterval> | null = null;
  #sweeping: Promise<void> | null = null;
  #purgedAt = -Infinity;

  constructor(
    private readonly databases: Readonly<Record<Environment, Database>>,
    private readonly handlers: Readonly<Record<Environment, JobHandlers>>,
    private readonly clock: Clock,
  ) {}

  /**
   * Runs every company's due jobs at its own domain time, and purges expired rows each
   * PURGE_INTERVAL_MS; skipped while a sweep runs.
   */
  sweep(): Promise<void> {
    this.#sweeping ??= this.#sweepAll().finally(() => {
      this.#sweeping = null;
    });
    return this.#sweeping;
  }

  async #sweepAll(): Promise<void> {
    for (
      const [environment, database] of Object.entries(this.databases) as [Environment, Database][]
    ) {
      const latest = await latestDomainNow(database, this.clock.now());
      for (const { companyId, dueAt } of await companiesWithDueJobs(database.readClient, latest)) {
        const until = await domainNow(database, companyId, this.clock.now());
        if (dueAt <= until) {
          await runDueJobs(
            database,
            companyId,
            until,
            this.handlers[environment],
            JOBS_PER_BATCH_MAX,
          );
        }
      }
    }
    const realNow = this.clock.now();
    if (realNow - this.#purgedAt < PURGE_INTERVAL_MS) return;
    this.#purgedAt = realNow;
    for (const [environment, database] of Object.entries(this.databases)) {
      try {
        await purgeExpiredRows(database, realNow);
      } catch (error) {
        // Nothing is lost by purging later; the next interval tries again.
        console.error(JSON.stringify({
          level: "error",
          msg: "purge of expired rows failed",
          environment,
          error: error instanceof Error ? error.message : String(error),
        }));
      }
    }
  }

  /** Sweeps every `intervalMs` in this process, and each minute from Deno.cron when available. */
  start(intervalMs: number): void {
    this.#timer = setInterval(() => void this.sweep(), intervalMs);
    const cron = (Deno as {
      cron?: (name: string, schedule: string, fn: () => Promise<void>) => Promise<void>;
    })
      .cron;
    if (typeof cron === "function") {
      // Deno.cron needs --unstable-cron; without it the in-process loop alone drives the jobs.
      cron("scheduler-sweep", "* * * * *", () => this.sweep()).catch(() => {});
    }
  }

  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#sweeping) await this.#sweeping;
  }
}
