/**
 * Runs due jobs, in due-time order, with the job's due time as the domain time of what it does.
 * A job runs in its own write unit that also marks it done, or, when it calls a rail, a bank or a
 * provider, as a claim with a lease, the call outside every unit, and a unit that records the
 * answer. A job that fails on storage or the network is retried with backoff; any other failure
 * parks it for an operator (db/job_policy.ts). Driven by the worker loop, a Deno.cron sweep each
 * minute, and sandbox clock advances.
 *
 * Several nodes may sweep one libSQL server at once: a unit job's effect commits only in the unit
 * whose `done_at IS NULL` check wins, and an external job's answer only while the claim that
 * called is still the job's (its lease), so no job's effect commits twice on any node.
 */
import { type Clock, systemClock } from "../lib/platform/clock.ts";
import type { Environment } from "../lib/platform/config.ts";
import type { Metrics } from "../lib/platform/metrics.ts";
import type { Database } from "./client.ts";
import { classifyJobFailure, retryDelayMs } from "./job_policy.ts";
import { purgeExpiredRows } from "./retention.ts";
import { advanceOffset, domainNow, latestDomainNow } from "../lib/sandbox/clock_store.ts";
import {
  claimedJobsDue,
  claimJob,
  companiesWithDueJobs,
  type DueJob,
  dueJobs,
  type FailedRun,
  finishClaimedJob,
  markJobDone,
  markJobsDone,
  openJobIds,
  parkJob,
  releaseHolderClaims,
  scheduleJobRetry,
} from "./scheduler_store.ts";
import { WorkerLoop } from "./worker_loop.ts";
import {
  RUN_ALONE,
  type RunAlone,
  type UnitBatch,
  type WriteTx,
  type WriteUnit,
} from "./writer.ts";

export { TransientJobError } from "./job_policy.ts";

/** A due job as its handler gets it. */
export interface RunningJob extends DueJob {
  /** The domain time its run goes to (the present, in a sweep): at or after `dueAt`. */
  readonly runUntil: number;
  /** Real time when the run started: what other runs' claims (leases) are compared with. */
  readonly realNow: number;
}

/** Runs inside the write unit that also marks the job done. */
export type UnitJob = (tx: WriteTx, job: RunningJob) => Promise<void>;

/**
 * A job that calls a rail, a bank or a provider: claimed with a lease in one write unit (which also
 * runs `prepare`), called outside every write unit, then answered in a second unit that runs
 * `record` and marks the job done. A crash between the two leaves the claim to expire; the job then
 * runs again, so `call` must be idempotent on the reference `prepare` gives it.
 */
export interface ExternalJob<Request, Answer> {
  readonly external: true;
  /** How long a claim keeps other runs away; the call must finish well within it. */
  readonly leaseMs: number;
  /** In the claiming unit: what the call needs, or null when there is nothing to call (the job is then done in that unit). */
  prepare(tx: WriteTx, job: RunningJob): Promise<Request | null>;
  /** Outside any write unit. Throw TransientJobError to retry with backoff; any other error parks the job. */
  call(request: Request, job: RunningJob): Promise<Answer>;
  /** In the unit that marks the job done. */
  record(tx: WriteTx, job: RunningJob, answer: Answer): Promise<void>;
}

/**
 * A unit job whose jobs due together may run set-based: `one` runs a job alone (as a UnitJob),
 * `many` several in one unit, leaving RUN_ALONE those it does not do (they run alone after it).
 * A throw of `many` undoes it, and each job runs alone.
 */
export interface BatchedUnitJob {
  readonly batched: true;
  readonly one: UnitJob;
  many(tx: WriteTx, jobs: readonly RunningJob[]): Promise<(void | RunAlone)[]>;
}

/** Any job's handler; an external job's request and answer types stay its own business. */
export type JobHandler = UnitJob | ExternalJob<unknown, unknown> | BatchedUnitJob;
export type JobHandlers = Readonly<Record<string, JobHandler>>;

/** Declares an external job with its request and answer types inferred. */
export function externalJob<Request, Answer>(
  job: Omit<ExternalJob<Request, Answer>, "external">,
): ExternalJob<Request, Answer> {
  return { external: true, ...job };
}

function isExternalJob(handler: JobHandler): handler is ExternalJob<unknown, unknown> {
  return typeof handler === "object" && "external" in handler && handler.external === true;
}

/** Declares a unit job whose jobs due together may run set-based. */
export function batchedUnitJob(job: Omit<BatchedUnitJob, "batched">): BatchedUnitJob {
  return { batched: true, ...job };
}

/** The unit of a job alone: marked done, then its handler. False when another run did it. */
function unitJobRun(job: RunningJob, handler: UnitJob | undefined): WriteUnit<boolean> {
  return async (tx) => {
    if (!(await markJobDone(tx, job.id, job.dueAt))) return false;
    if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
    await handler(tx, job);
    return true;
  };
}

/** The write batch of each batched handler, one identity each, for the writer to group. */
const jobBatches = new WeakMap<BatchedUnitJob, UnitBatch<RunningJob, boolean>>();

/**
 * A batched handler's jobs queued together: those no other run did are handed to `many` at once,
 * and the ones it did are marked done in one statement; a job `many` leaves runs alone after.
 */
function jobBatchOf(handler: BatchedUnitJob): UnitBatch<RunningJob, boolean> {
  let batch = jobBatches.get(handler);
  if (batch === undefined) {
    batch = {
      one: (job) => unitJobRun(job, handler.one),
      many: async (tx, jobs) => {
        const open = await openJobIds(tx, jobs.map((job) => job.id));
        const runnable = jobs.filter((job) => open.has(job.id));
        const done = await handler.many(tx, runnable);
        const doneJobs = runnable.filter((_, i) => done[i] !== RUN_ALONE);
        await markJobsDone(tx, doneJobs);
        const doneIds = new Set(doneJobs.map((job) => job.id));
        return jobs.map((job) =>
          !open.has(job.id) ? false : doneIds.has(job.id) ? true : RUN_ALONE
        );
      },
    };
    jobBatches.set(handler, batch);
  }
  return batch;
}

/**
 * Jobs a sweep runs side by side: each in its own unit, so they share group commits and one
 * failing job rolls back only itself.
 */
export const JOBS_PER_BATCH_MAX = 32;

/**
 * A run of jobs lets the event loop answer waiting requests at least this often. The embedded
 * database is synchronous and the writer starts each group with setImmediate, which Deno runs
 * before it polls for I/O: without a timer between jobs, a run of many units (a catastrophe day's
 * 20 units of ACH payouts sent) answered no request until it ended.
 */
export const JOBS_YIELD_AFTER_MS = 20;

/**
 * Timer turns a yield gives the event loop: a request takes several (its bytes read, the key's
 * digest, the answer written), so with one turn per unit it advanced one step per unit. Measured
 * with 32 clients against units of 50 ms: p99 245 ms with one turn, 88 ms with four (the chain
 * 13 % longer). An idle turn costs about 2 ms.
 */
export const JOBS_YIELD_TURNS = 3;

export async function yieldToEventLoop(): Promise<void> {
  for (let turn = 0; turn < JOBS_YIELD_TURNS; turn++) {
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
  }
}

/**
 * While the API answers requests, a sweep's batch of jobs is followed by a rest this many times as
 * long as the batch took, so that background work (each create's offer above all) takes about a
 * fifth of the service's thread and the creates the rest: the offers trail the creates under load
 * and catch up once the API quiets.
 */
export const JOBS_BUSY_REST_FACTOR = 4;

/** The longest rest after a batch under API traffic: background work always goes on. */
export const JOBS_BUSY_REST_MS_MAX = 100;

/** Expired rows are looked for at most this often (the first sweep looks at once). */
export const PURGE_INTERVAL_MS = 60_000;

export interface JobRunOptions {
  /** Jobs run side by side; 1 (the default) runs them strictly one after another. */
  readonly perBatch?: number;
  /** Real time, for the leases of external jobs (never the sandbox clock); the system clock by default. */
  readonly clock?: Clock;
  /** Counts failed jobs by kind and outcome. */
  readonly metrics?: Metrics;
  /** The node whose runs hold the claims (its DATA_DIR's node id); none by default. */
  readonly leaseHolder?: string;
  /**
   * True while the API answers requests: each batch is then followed by a rest of
   * JOBS_BUSY_REST_FACTOR times its length (at most JOBS_BUSY_REST_MS_MAX). Never, by default.
   */
  readonly apiBusy?: () => boolean;
}

/** What a run needs to know about the run that found the job. */
interface RunContext {
  readonly database: Database;
  readonly handlers: JobHandlers;
  /** The domain time the run goes to: a transient failure is retried this long after it. */
  readonly until: number;
  readonly clock: Clock;
  readonly metrics: Metrics | undefined;
  readonly leaseHolder: string | null;
  /** True while the API answers requests (JobRunOptions.apiBusy). */
  readonly apiBusy: () => boolean;
}

/**
 * Runs every job of the company due at or before `until`, including jobs those jobs schedule.
 * `perBatch` 1 runs them strictly one after another in due order, as a sandbox clock advance
 * must (a job may schedule another that falls due before the next one found; an external job
 * runs claim, call and record before the next). A larger batch is for sweeps at the present time:
 * the jobs found run in due order within their batch, and any job they schedule runs in a later
 * batch. Rejects when a failure could not even be recorded (storage down): the caller tries later.
 */
export async function runDueJobs(
  database: Database,
  companyId: string,
  until: number,
  handlers: JobHandlers,
  options: JobRunOptions = {},
): Promise<number> {
  const run: RunContext = {
    database,
    handlers,
    until,
    clock: options.clock ?? systemClock,
    metrics: options.metrics,
    leaseHolder: options.leaseHolder ?? null,
    apiBusy: options.apiBusy ?? (() => false),
  };
  let ran = 0;
  let heldSince = performance.now();
  for (;;) {
    // A timer, not setImmediate: only a timer lets Deno poll for I/O (requests) in between.
    if (performance.now() - heldSince >= JOBS_YIELD_AFTER_MS) {
      await yieldToEventLoop();
      heldSince = performance.now();
    }
    const jobs = await dueJobs(
      database.readClient,
      companyId,
      until,
      options.perBatch ?? 1,
      run.clock.now(),
    );
    if (jobs.length === 0) return ran;
    const started = performance.now();
    // Settled, not raced: a sweep must not end while jobs of its batch still run.
    const outcomes = await Promise.allSettled(jobs.map((job) => runJob(run, job)));
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") throw outcome.reason;
      if (outcome.value) ran++;
    }
    if (run.apiBusy()) {
      const restMs = Math.min(
        JOBS_BUSY_REST_FACTOR * (performance.now() - started),
        JOBS_BUSY_REST_MS_MAX,
      );
      await new Promise((resolve) => setTimeout(resolve, restMs));
      heldSince = performance.now();
    }
  }
}

/** Runs one job; true when this run counted it (another runner may have taken it first). */
function runJob(run: RunContext, due: DueJob): Promise<boolean> {
  const job = { ...due, runUntil: run.until, realNow: run.clock.now() };
  const handler = run.handlers[job.kind];
  if (handler !== undefined && isExternalJob(handler)) return runExternalJob(run, job, handler);
  return runUnitJob(run, job, handler);
}

async function runUnitJob(
  run: RunContext,
  job: RunningJob,
  handler: UnitJob | BatchedUnitJob | undefined,
): Promise<boolean> {
  try {
    return handler !== undefined && typeof handler === "object"
      ? await run.database.writer.writeTogether(jobBatchOf(handler), job)
      : await run.database.writer.write(unitJobRun(job, handler));
  } catch (error) {
    // The job's changes were rolled back with it.
    await recordFailure(run, job, error, { leaseUntil: null });
    return true;
  }
}

async function runExternalJob(
  run: RunContext,
  job: RunningJob,
  handler: ExternalJob<unknown, unknown>,
): Promise<boolean> {
  const realNow = run.clock.now();
  const leaseUntil = realNow + handler.leaseMs;
  let claim: { taken: true } | { taken: false; request: unknown };
  try {
    claim = await run.database.writer.write(async (tx) => {
      const claim = { realNow, leaseUntil, holder: run.leaseHolder };
      if (!(await claimJob(tx, job.id, claim))) return { taken: true };
      const request = await handler.prepare(tx, job);
      if (request === null) {
        // Nothing to call: the job is done in its claiming unit.
        await finishClaimedJob(tx, job.id, job.dueAt, leaseUntil);
      }
      return { taken: false, request };
    });
  } catch (error) {
    // The claim was rolled back with the unit.
    await recordFailure(run, job, error, { leaseUntil: null });
    return true;
  }
  if (claim.taken) return false;
  if (claim.request === null) return true;
  // While the API answers, the claim's commit, the call's start and its answer's recording each
  // take their own turns of the event loop: run back to back they held it for 4 to 7 ms at a time
  // in a cutoff's transmission (its claim, then the opened file's answer and the recording unit).
  if (run.apiBusy()) await yieldToEventLoop();
  let answer: unknown;
  try {
    answer = await handler.call(claim.request, job);
  } catch (error) {
    await recordFailure(run, job, error, { leaseUntil });
    return true;
  }
  if (run.apiBusy()) await yieldToEventLoop();
  try {
    const recorded = await run.database.writer.write(async (tx) => {
      if (!(await finishClaimedJob(tx, job.id, job.dueAt, leaseUntil))) return false;
      await handler.record(tx, job, answer);
      return true;
    });
    if (!recorded) {
      logJob("warn", "job answer not recorded: its claim ended and another run took the job", job);
    }
    return recorded;
  } catch (error) {
    await recordFailure(run, job, error, { leaseUntil });
    return true;
  }
}

/**
 * Retries a job that failed on storage or the network, later; parks any other failure so one bad
 * row cannot stall the queue. Throws when even that cannot be written.
 */
async function recordFailure(
  run: RunContext,
  job: DueJob,
  error: unknown,
  failedRun: FailedRun,
): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  const outcome = classifyJobFailure(error) === "transient" ? "retried" : "parked";
  let recorded: { attempts: number; dueAt: number | null } | null;
  try {
    recorded = await run.database.writer.write(async (tx) => {
      if (outcome === "retried") {
        return await scheduleJobRetry(tx, job.id, {
          error: message,
          from: run.until,
          delayMs: retryDelayMs,
          run: failedRun,
        });
      }
      const attempts = await parkJob(tx, job.id, {
        error: message,
        doneAt: job.dueAt,
        run: failedRun,
      });
      return attempts === null ? null : { attempts, dueAt: null };
    });
  } catch (recordError) {
    logJob("error", "job failed", job, {
      outcome: "unrecorded",
      error: message,
      record_error: recordError instanceof Error ? recordError.message : String(recordError),
    });
    throw recordError;
  }
  // Null: another run took the job meanwhile, and its outcome stands.
  if (recorded === null) return;
  logJob(outcome === "parked" ? "error" : "warn", "job failed", job, {
    attempts: recorded.attempts,
    outcome,
    ...(recorded.dueAt === null ? {} : { retry_at: new Date(recorded.dueAt).toISOString() }),
    error: message,
  });
  run.metrics?.jobFailed(job.kind, outcome);
}

function logJob(
  level: "warn" | "error",
  msg: string,
  job: DueJob,
  fields: Record<string, unknown> = {},
): void {
  console.error(JSON.stringify({ level, msg, job_id: job.id, kind: job.kind, ...fields }));
}

/**
 * contract §10: a test-environment webhook retry is due at its real-time schedule or when the
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

/**
 * Moves a company's sandbox clock and runs everything that falls due, in time order. `clock` is
 * real time, for the leases of external jobs.
 */
export async function advanceSandboxClock(
  database: Database,
  companyId: string,
  seconds: number,
  realNow: number,
  handlers: JobHandlers,
  options: Omit<JobRunOptions, "perBatch"> = {},
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
  const clock = options.clock ?? systemClock;
  let jobsRun = await runDueJobs(database, companyId, now, handlers, options);
  // A job the background sweep claimed is still running: what it schedules falls due too, and
  // the caller reads the outcome right after this answer, so wait for it (bounded, in case its
  // holder died; its lease then lets the next sweep take it over).
  const waitUntil = performance.now() + CLAIMED_JOBS_WAIT_MS;
  while (
    await claimedJobsDue(database.readClient, companyId, now, clock.now()) &&
    performance.now() < waitUntil
  ) {
    await new Promise((resolve) => setTimeout(resolve, CLAIMED_JOBS_POLL_MS));
    jobsRun += await runDueJobs(database, companyId, now, handlers, options);
  }
  return { now, jobsRun };
}

/** How long a sandbox clock advance waits for jobs another run holds, and how often it looks. */
const CLAIMED_JOBS_WAIT_MS = 30_000;
const CLAIMED_JOBS_POLL_MS = 10;

/** The scheduler's name in worker logs and metrics. */
export const SCHEDULER_WORKER = "scheduler";

/**
 * Work a sweep does on each database after its jobs, for no company in particular (an index that
 * catches up): a step that fails is logged, and the next sweep runs it again.
 */
export interface UpkeepStep {
  readonly name: string;
  run(database: Database): Promise<unknown>;
}

/** The background sweep over both databases; one sweep at a time. */
export class Scheduler {
  #loop: WorkerLoop | null = null;
  #sweeping: Promise<void> | null = null;
  #purgedAt = -Infinity;
  /** A sweep's jobs rest between batches while the API answers requests. */
  readonly #apiBusy = () => this.options.metrics?.apiBusy ?? false;

  constructor(
    private readonly databases: Readonly<Record<Environment, Database>>,
    private readonly handlers: Readonly<Record<Environment, JobHandlers>>,
    private readonly clock: Clock,
    private readonly options: {
      readonly metrics?: Metrics;
      readonly leaseHolder?: string;
      /** Run on each database at every sweep, after its jobs. */
      readonly upkeep?: readonly UpkeepStep[];
    } = {},
  ) {}

  /**
   * Ends the claims this node held when its process stopped (a crash in the middle of a cutoff or
   * a transmission), so that their jobs run again at the first sweep, not after their leases. Only
   * a node holding its DATA_DIR's lock calls this: no run of it is alive then.
   */
  async takeOverOwnClaims(): Promise<number> {
    const holder = this.options.leaseHolder;
    if (holder === undefined) return 0;
    let taken = 0;
    for (const database of Object.values(this.databases)) {
      taken += await database.writer.write((tx) => releaseHolderClaims(tx, holder));
    }
    if (taken > 0) {
      console.error(JSON.stringify({
        level: "warn",
        msg: "claims of this node's stopped process taken over: their jobs run again now",
        node_id: holder,
        jobs: taken,
      }));
    }
    return taken;
  }

  /**
   * Runs every company's due jobs at its own domain time, then the upkeep steps, and purges
   * expired rows each PURGE_INTERVAL_MS; joins the sweep in flight. Rejects when storage fails.
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
      const realNow = this.clock.now();
      const latest = await latestDomainNow(database, realNow);
      for (
        const { companyId, dueAt } of await companiesWithDueJobs(
          database.readClient,
          latest,
          realNow,
        )
      ) {
        const until = await domainNow(database, companyId, this.clock.now());
        if (dueAt <= until) {
          await runDueJobs(database, companyId, until, this.handlers[environment], {
            perBatch: JOBS_PER_BATCH_MAX,
            clock: this.clock,
            metrics: this.options.metrics,
            leaseHolder: this.options.leaseHolder,
            apiBusy: this.#apiBusy,
          });
        }
      }
      for (const step of this.options.upkeep ?? []) {
        try {
          await step.run(database);
        } catch (error) {
          console.error(JSON.stringify({
            level: "error",
            msg: "upkeep step failed",
            step: step.name,
            environment,
            error: error instanceof Error ? error.message : String(error),
          }));
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

  /** Sweeps on the worker loop every `intervalMs`, and each minute from Deno.cron when available. */
  start(intervalMs: number): void {
    this.#loop = new WorkerLoop({
      name: SCHEDULER_WORKER,
      sweep: () => this.sweep(),
      intervalMs,
      metrics: this.options.metrics,
    });
    this.#loop.start();
  }

  /** Stops sweeping and waits for the sweep in flight (its jobs included) to end. */
  async stop(): Promise<void> {
    await this.#loop?.stop();
    this.#loop = null;
    if (this.#sweeping) await this.#sweeping.catch(() => {});
  }
}
