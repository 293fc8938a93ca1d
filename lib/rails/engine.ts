/**
 * The one batch-rail engine: every batch rail (ACH files, check files, PayPal batches) runs its
 * batches through these rules, and a rail's adapter supplies only its file or batch, its transport
 * and what follows its transmission. The engine owns, for every rail alike:
 * - the stale filter at claim (`STALE_ENTRY`): an entry whose payout or funding no longer waits for
 *   it is voided, never put in a file;
 * - the release: a file over the approval limit goes only once a second admin approved its
 *   `bank_file.release` (one lookup, `releaseApproved`), and is not handed out for download before;
 * - the transmission: a lease (the job's claim), one attempt row per try with its answer
 *   (rail_batch_attempts), retry with backoff while the window is open, in doubt when a run stopped
 *   before its answer was kept (unless the rail takes the same batch again safely);
 * - the window: a file not sent before its window ends (no transport, no approval, the bank down)
 *   is voided and its entries queued again, never sent late; a file an operator downloaded and did
 *   not mark sent may be at the bank, so it goes in doubt instead, for a second admin's decision;
 * - in-doubt resolution: the bank has it (transmitted, with what follows) or has not (voided and
 *   queued again, or built again for a rail whose files keep their numbers).
 * Time is the environment's: in live a job decides and stamps with the real time it runs, in the
 * sandbox with its due time on the sandbox clock (`JobTime`, chosen at the composition root).
 */
import { asc, eq } from "drizzle-orm";
import { railBatchAttempts, railBatches } from "../../db/schema.ts";
import {
  externalJob,
  type JobHandler,
  type RunningJob,
  TransientJobError,
} from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { retryDelayMs } from "../../db/job_policy.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import {
  BATCH_TRANSMIT_LEASE_MS,
  type BatchEntry,
  type BatchPayoutMoves,
  type BatchRow,
  loadBatch,
  markInDoubt,
  markTransmitted,
  type NewBatchEntry,
  setBatch,
  transmissionFailed,
  type TransmitAnswer,
  voidBatch,
} from "./batch.ts";

/** The time a job decides and stamps with. */
export type JobTime = (job: RunningJob) => number;

/** Live: the real time the job runs (a job run late after an outage acts now, not in the past). */
export const realJobTime: JobTime = (job) => Math.max(job.dueAt, job.runUntil);

/** The sandbox: the job's due time on the sandbox clock, so an advance replays the days in order. */
export const domainJobTime: JobTime = (job) => job.dueAt;

/**
 * The cutoff a planning job (due when an entry was queued) goes to: the first after it fell
 * due, unless that one's window closed before the job ran (late, after an outage): then the first
 * after now. One rule for every rail's cutoffs.
 */
export function plannedCutoff<Slot extends { readonly windowEndsAt: number }>(
  job: RunningJob,
  now: number,
  nextAfter: (at: number) => Slot,
): Slot {
  const next = nextAfter(job.dueAt);
  return now >= next.windowEndsAt ? nextAfter(now) : next;
}

/** What the engine takes of its environment, chosen at the composition root. */
export interface RailPolicy {
  readonly environment: Environment;
  readonly jobTime: JobTime;
  /** A file over this total waits for a second admin's release; null: files never wait (the sandbox bank). */
  readonly releaseLimitCents: number | null;
  /** Whether an in-doubt resolution waits for a second admin (live) or applies at once. */
  readonly dualControl: boolean;
}

/**
 * A queued entry whose payout or funding no longer waits for it (canceled, or queued again under
 * a newer reference): `e` is the entry's alias. The one stale filter of every rail's claim.
 */
export const STALE_ENTRY = `(
  (e.payout_id IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM payouts p WHERE p.id = e.payout_id
      AND p.status IN ('modality_selected', 'failed')
      AND p.id || '-' || p.submission_count = e.reference))
  OR (e.funding_id IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM fundings f WHERE f.id = e.funding_id AND f.status = 'Pending')))`;

/** Whether a second admin approved the release of this batch (the one lookup of every rail). */
export async function releaseApproved(reader: SqlReader, batchId: string): Promise<boolean> {
  const { rows } = await reader.execute({
    sql: `SELECT 1 FROM approvals
          WHERE kind = 'bank_file.release' AND object_id = ? AND status = 'approved' LIMIT 1`,
    args: [batchId],
  });
  return rows.length > 0;
}

/**
 * Whether a built file waits for a second admin before it may go or be downloaded: its total is
 * over the limit and its release was not approved. `releaseCents` null: it needs no release of its
 * own (a print file follows its positive-pay file).
 */
export async function awaitsRelease(
  policy: Pick<RailPolicy, "releaseLimitCents">,
  reader: SqlReader,
  batchId: string,
  releaseCents: number | null,
): Promise<boolean> {
  if (policy.releaseLimitCents === null || releaseCents === null) return false;
  if (releaseCents <= policy.releaseLimitCents) return false;
  return !await releaseApproved(reader, batchId);
}

/** The job kinds of a rail's batches (an environment's job table is keyed by kind). */
export interface BatchJobs {
  readonly transmit: string;
  readonly windowClose: string;
}

/** What a rail's adapter says of one of its built batches. */
export interface HeldBatch<Request> {
  /** What the transport is handed. */
  readonly request: Request;
  /** True: the transport hands it over; false: it waits for an operator's download and mark-sent. */
  readonly uploads: boolean;
  /** The total its release is judged on; null: it needs no release of its own. */
  readonly releaseCents: number | null;
  /** When its transmission window ends (its dates no longer hold after), or null for none. */
  readonly windowEndsAt: number | null;
  /** Why it may not go yet though complete (a print file before its positive-pay file), or null. */
  readonly heldBy: string | null;
}

/** A rail's part of the engine: its batches' format, its transport, what follows a transmission. */
export interface BatchAdapter<Request = unknown> {
  /** rail_batches.rail of its batches (a rail may build several kinds, as checks do). */
  readonly rails: readonly string[];
  /** How operators and messages name one (`ACH file`). */
  readonly label: string;
  /** The audit object type of its batches. */
  readonly objectType: string;
  /** The prefix of its audit actions (`ach` → `ach:void`, `ach:resolve`). */
  readonly commandPrefix: string;
  /** The kinds of its transmission and window-close jobs. */
  readonly jobs: BatchJobs;
  /**
   * What an in-doubt batch the rail did not receive becomes: voided and its entries queued again
   * (new references, new file), or built again and transmitted again (its numbers stay its own).
   */
  readonly notReceived: "void" | "transmit_again";
  /** Whether handing the same batch again never pays twice (a provider that refuses a repeated id). */
  retransmitsSafely(batch: BatchRow, now: number): boolean;
  /** The batch's file as the rail keeps it, or null while it has none (its build is unfinished). */
  hold(tx: WriteTx, batch: BatchRow): Promise<HeldBatch<Request> | null>;
  /** Hands the batch over, outside every unit; throws when nobody knows whether the rail has it. */
  transmit(request: Request, attempt: number): Promise<TransmitAnswer>;
  /** In the unit that records a transmission: what follows it (entries sent, outcomes planned). */
  transmitted(tx: WriteTx, batch: BatchRow, at: number): Promise<void>;
  /** Queues an entry of a voided batch again under its new reference (the rail's queue). */
  requeue(tx: WriteTx, entry: NewBatchEntry, now: number): Promise<void>;
  /**
   * Why the rail already stopped an entry of a batch being voided (an operator voided its check
   * while the file waited), so that its payout fails instead of being queued again; else null.
   */
  stoppedBy?(tx: WriteTx, entry: BatchEntry): Promise<string | null>;
  /** In the unit that voids a batch: what else of the rail it undoes (a check file's checks). */
  voided?(tx: WriteTx, batch: BatchRow, now: number): Promise<void>;
  /** Keeps the approval a batch's release was given, when the rail shows it. */
  released?(tx: WriteTx, batch: BatchRow, approvalId: string): Promise<void>;
}

/** A bank's answer to an upload: it took the file, or nothing reached it. */
export type UploadAnswer =
  | { readonly kind: "uploaded"; readonly remotePath: string }
  | { readonly kind: "not_uploaded"; readonly reason: string };

/**
 * What a rail of bank files (ACH, checks) brings to `bankFileAdapter`: its kept file and the
 * settings it goes with, the opening of the file's kept content, and its own upload of it.
 */
export interface BankFileRail<File extends { readonly fileName: string }, Settings, Opened>
  extends
    Pick<
      BatchAdapter,
      | "rails"
      | "label"
      | "objectType"
      | "commandPrefix"
      | "jobs"
      | "notReceived"
      | "transmitted"
      | "requeue"
      | "stoppedBy"
      | "voided"
      | "released"
    > {
  /** The batch's kept file, or null while its build is unfinished. */
  file(tx: WriteTx, batchId: string): Promise<File | null>;
  settings(tx: WriteTx, companyId: string): Promise<Settings>;
  /** What the engine judges the file on (see `HeldBatch`). */
  judge(
    tx: WriteTx,
    file: File,
    settings: Settings,
    batch: BatchRow,
  ): Promise<Omit<HeldBatch<unknown>, "request">>;
  /**
   * Reads and opens the kept content, found to be the file its build checked; throws when it
   * cannot be (altered, another key, unreadable). Nothing reaches the bank here.
   */
  open(file: File): Promise<Opened>;
  /** Hands the opened content to the bank; throws when nobody knows whether the bank has it. */
  upload(file: File, settings: Settings, opened: Opened, attempt: number): Promise<UploadAnswer>;
}

/**
 * The adapter of a rail of bank files: a file a bank may already have picked up is never handed
 * over twice on its own, and an upload that ended without an answer leaves it for the next run
 * to find transmitting (in doubt). A kept file that cannot be opened was handed to nobody: that
 * attempt is not transmitted, and the file waits for its retry, or for the end of its window.
 */
export function bankFileAdapter<File extends { readonly fileName: string }, Settings, Opened>(
  rail: BankFileRail<File, Settings, Opened>,
): BatchAdapter {
  type Request = { readonly batchId: string; readonly file: File; readonly settings: Settings };
  const adapter: BatchAdapter<Request> = {
    ...rail,
    retransmitsSafely: () => false,
    async hold(tx, batch) {
      const file = await rail.file(tx, batch.id);
      if (!file) return null;
      const settings = await rail.settings(tx, batch.companyId);
      return {
        request: { batchId: batch.id, file, settings },
        ...await rail.judge(tx, file, settings, batch),
      };
    },
    async transmit(request, attempt) {
      let opened: Opened;
      try {
        opened = await rail.open(request.file);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        // Altered content or another sealing key: nothing left, but someone must look.
        logRail("error", `a kept ${rail.label} could not be opened: nothing was handed over`, {
          batch_id: request.batchId,
          reason,
        });
        return { kind: "not_transmitted", reason: `the kept file could not be opened: ${reason}` };
      }
      let answer: UploadAnswer;
      try {
        answer = await rail.upload(request.file, request.settings, opened, attempt);
      } catch (error) {
        throw new TransientJobError(
          `the upload of ${rail.label} ${request.batchId} ended without an answer: ${
            error instanceof Error ? error.message : String(error)
          }`,
          { cause: error },
        );
      }
      return answer.kind === "uploaded"
        ? { kind: "transmitted", railReference: request.file.fileName }
        : { kind: "not_transmitted", reason: answer.reason };
    },
  };
  return adapter as BatchAdapter;
}

/** The actor of what the pipeline does by itself (a file voided when its window closed). */
export const SYSTEM_ACTOR: AuditActor = { operator: null, origin: "system" };

/** Schedules a batch's `attempt`-th transmission. */
export async function scheduleTransmission(
  tx: WriteTx,
  jobs: BatchJobs,
  batch: { readonly companyId: string; readonly id: string },
  dueAt: number,
  attempt: number,
): Promise<void> {
  await scheduleJob(tx, {
    companyId: batch.companyId,
    kind: jobs.transmit,
    subjectId: batch.id,
    dueAt,
    payload: { attempt },
  }, dueAt);
}

/**
 * A batch was built: its transmission is scheduled, and the end of its window, when it has one,
 * so that a file that never goes (no transport, no approval) is voided then.
 */
export async function batchBuilt(
  tx: WriteTx,
  jobs: BatchJobs,
  batch: { readonly companyId: string; readonly id: string },
  windowEndsAt: number | null,
  now: number,
): Promise<void> {
  await scheduleTransmission(tx, jobs, batch, now, 1);
  if (windowEndsAt === null) return;
  await scheduleJob(tx, {
    companyId: batch.companyId,
    kind: jobs.windowClose,
    subjectId: batch.id,
    dueAt: windowEndsAt,
  }, now);
}

/** One transmission attempt as kept. */
export type AttemptRow = typeof railBatchAttempts.$inferSelect;

/** A batch's transmission attempts, first first. */
export async function batchAttempts(
  reader: Pick<WriteTx, "db">,
  batchId: string,
): Promise<AttemptRow[]> {
  return await reader.db.select().from(railBatchAttempts)
    .where(eq(railBatchAttempts.batchId, batchId))
    .orderBy(asc(railBatchAttempts.attempt));
}

/**
 * Opens the batch's next attempt in one statement written directly, as the transmission's other
 * statements: they are its short phase's blocks.
 */
async function beginAttempt(tx: WriteTx, batchId: string, now: number): Promise<number> {
  const { rows } = await tx.execute({
    sql: `INSERT INTO rail_batch_attempts (id, batch_id, attempt, started_at)
          SELECT ?, ?, count(*) + 1, ? FROM rail_batch_attempts WHERE batch_id = ?
          RETURNING attempt`,
    args: [newId("rba"), batchId, now, batchId],
  });
  return Number(rows[0].attempt);
}

/** Keeps the answer of the batch's open attempt (the one without one); a no-op without one. */
async function answerAttempt(
  tx: WriteTx,
  batchId: string,
  outcome: NonNullable<AttemptRow["outcome"]>,
  detail: string,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE rail_batch_attempts SET outcome = ?, detail = ?, answered_at = ?
          WHERE batch_id = ? AND outcome IS NULL`,
    args: [outcome, detail, now, batchId],
  });
}

/** What the last failed run of a job said, if any: the reason a transmission went unanswered. */
async function lastJobError(tx: WriteTx, jobId: string): Promise<string | null> {
  const { rows } = await tx.execute({
    sql: "SELECT error FROM scheduled_jobs WHERE id = ?",
    args: [jobId],
  });
  return rows[0]?.error == null ? null : String(rows[0].error);
}

const attemptOf = (job: RunningJob) =>
  typeof job.payload.attempt === "number" ? job.payload.attempt : 1;

function logRail(level: "warn" | "error", msg: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, msg, ...fields }));
}

/** What a transmission hands to its call. */
interface Transmission<Request> {
  readonly batch: BatchRow;
  readonly request: Request;
  readonly attempt: number;
  readonly windowEndsAt: number | null;
}

/**
 * A batch reached the rail (its transport answered, an operator marked it sent, or resolved it):
 * it is transmitted and what follows runs, in the caller's unit.
 */
export async function recordTransmitted(
  tx: WriteTx,
  adapter: BatchAdapter,
  batchId: string,
  railReference: string,
  at: number,
): Promise<void> {
  await markTransmitted(tx, batchId, railReference, at);
  const batch = await loadBatch(tx, batchId);
  await adapter.transmitted(tx, batch!, at);
}

/**
 * Voids a built batch and queues its entries again, audited, unless it was downloaded and never
 * marked sent: it may then be at the bank, so it goes in doubt for a second admin's decision
 * instead, and its entries wait. Answers what it became.
 */
export async function voidOrDoubt(
  tx: WriteTx,
  engine: EngineDeps,
  adapter: BatchAdapter,
  batchId: string,
  audit: { readonly actor: AuditActor; readonly reason: string },
  now: number,
): Promise<{ status: "voided" | "in_doubt"; requeued: number }> {
  const batch = await loadBatch(tx, batchId);
  if (!batch) throw new Error(`no batch ${batchId}`);
  const record = (after: Record<string, unknown>) =>
    appendAudit(tx, engine.policy.environment, audit.actor, {
      at: now,
      action: `${adapter.commandPrefix}:void`,
      objectType: adapter.objectType,
      objectId: batchId,
      companyId: batch.companyId,
      before: { status: batch.status },
      after: { ...after, reason: audit.reason },
    });
  if (batch.status === "built" && batch.downloadedAt !== null) {
    await tx.db.update(railBatches).set({
      status: "in_doubt",
      error: `downloaded and not marked sent, it may be at the bank: ${audit.reason}`,
    }).where(eq(railBatches.id, batchId));
    await record({ status: "in_doubt" });
    logRail("error", "a downloaded file was not marked sent: it is in doubt, resolve it", {
      batch_id: batchId,
      company_id: batch.companyId,
    });
    return { status: "in_doubt", requeued: 0 };
  }
  const requeued = await voidAndRequeue(tx, engine, adapter, batch, audit.reason, now);
  await record({ status: "voided", entries_queued_again: requeued });
  return { status: "voided", requeued };
}

/**
 * Voids a batch the rail does not have: its entries go to the rail's queue again under new
 * references, and the rail undoes what else it kept of it. Answers how many were queued again.
 */
async function voidAndRequeue(
  tx: WriteTx,
  engine: EngineDeps,
  adapter: BatchAdapter,
  batch: BatchRow,
  reason: string,
  now: number,
): Promise<number> {
  const requeued = await voidBatch(tx, engine.moves, batch.id, reason, {
    requeue: (entry) => adapter.requeue(tx, entry, now),
    ...(adapter.stoppedBy ? { stoppedBy: (entry) => adapter.stoppedBy!(tx, entry) } : {}),
    now,
  });
  await adapter.voided?.(tx, batch, now);
  return requeued.length;
}

/** What the engine runs on: its environment's policy and the payout moves of its entries. */
export interface EngineDeps {
  readonly policy: RailPolicy;
  readonly moves: BatchPayoutMoves;
}

async function prepareTransmission<Request>(
  engine: EngineDeps,
  adapter: BatchAdapter<Request>,
  tx: WriteTx,
  job: RunningJob,
): Promise<Transmission<Request> | null> {
  const now = engine.policy.jobTime(job);
  const batch = await loadBatch(tx, job.subjectId);
  if (!batch) throw new Error(`${adapter.jobs.transmit}: no batch ${job.subjectId}`);
  if (batch.status === "transmitting") {
    const reason = await lastJobError(tx, job.id) ??
      "the transmission was interrupted before its answer was recorded";
    if (!adapter.retransmitsSafely(batch, now)) {
      await answerAttempt(tx, batch.id, "in_doubt", reason, now);
      await markInDoubt(tx, batch.id);
      return null;
    }
    await answerAttempt(tx, batch.id, "not_transmitted", reason, now);
  } else if (batch.status !== "built") {
    return null;
  }
  const held = await adapter.hold(tx, batch);
  if (!held) return null;
  if (batch.status === "built") {
    // Held (a print file before its positive-pay file) or by hand: what releases it schedules this again.
    if (held.heldBy !== null || !held.uploads) return null;
    if (await awaitsRelease(engine.policy, tx, batch.id, held.releaseCents)) return null;
    if (held.windowEndsAt !== null && now >= held.windowEndsAt) {
      await voidOrDoubt(tx, engine, adapter, batch.id, {
        actor: SYSTEM_ACTOR,
        reason: "the transmission window closed before the file was sent",
      }, now);
      return null;
    }
    await setBatch(tx, batch.id, { status: "transmitting" });
  }
  await beginAttempt(tx, batch.id, now);
  return { batch, request: held.request, attempt: attemptOf(job), windowEndsAt: held.windowEndsAt };
}

async function recordAnswer<Request>(
  engine: EngineDeps,
  adapter: BatchAdapter<Request>,
  tx: WriteTx,
  job: RunningJob,
  transmission: Transmission<Request>,
  answer: TransmitAnswer,
): Promise<void> {
  const now = engine.policy.jobTime(job);
  const { batch } = transmission;
  if (answer.kind === "transmitted") {
    await answerAttempt(tx, batch.id, "transmitted", answer.railReference, now);
    await recordTransmitted(tx, adapter, batch.id, answer.railReference, now);
    return;
  }
  await answerAttempt(tx, batch.id, "not_transmitted", answer.reason, now);
  await transmissionFailed(tx, batch.id, answer.reason);
  logRail("warn", `the ${adapter.label} did not reach the rail`, {
    batch_id: batch.id,
    company_id: batch.companyId,
    attempt: transmission.attempt,
    reason: answer.reason,
  });
  const delayMs = answer.retryAfterMs === undefined
    ? retryDelayMs(transmission.attempt)
    : answer.retryAfterMs;
  // Loud on purpose: the batch waits, built, until an operator reads the rail's reason.
  if (delayMs === null) {
    logRail("error", `the rail refused the ${adapter.label}; it waits for an operator`, {
      batch_id: batch.id,
      reason: answer.reason,
    });
    return;
  }
  const retryAt = now + delayMs;
  if (transmission.windowEndsAt !== null && retryAt >= transmission.windowEndsAt) {
    await voidOrDoubt(tx, engine, adapter, batch.id, {
      actor: SYSTEM_ACTOR,
      reason: `the transmission window closed before the bank took the file: ${answer.reason}`,
    }, now);
    return;
  }
  await scheduleTransmission(tx, adapter.jobs, batch, retryAt, transmission.attempt + 1);
}

/**
 * The end of a file's window: still built (never sent: no transport, no release, the bank down),
 * it is voided and its entries queued again, or, downloaded and not marked sent, it goes in doubt.
 */
async function closeWindow(
  engine: EngineDeps,
  adapter: BatchAdapter,
  tx: WriteTx,
  job: RunningJob,
): Promise<void> {
  const batch = await loadBatch(tx, job.subjectId);
  if (batch?.status !== "built") return;
  const held = await adapter.hold(tx, batch);
  if (!held || held.windowEndsAt === null) return;
  const now = engine.policy.jobTime(job);
  if (now < held.windowEndsAt) return;
  const why = !held.uploads
    ? "it waited for a download and mark-sent"
    : await awaitsRelease(engine.policy, tx, batch.id, held.releaseCents)
    ? "its release was not approved"
    : "the bank did not take it";
  await voidOrDoubt(tx, engine, adapter, batch.id, {
    actor: SYSTEM_ACTOR,
    reason: `the transmission window closed before the file was sent: ${why}`,
  }, now);
}

/** The engine's jobs of one adapter: its transmission and its window's end. */
export function engineJobHandlers(
  engine: EngineDeps,
  adapter: BatchAdapter,
): Record<string, JobHandler> {
  return {
    [adapter.jobs.transmit]: externalJob<
      Transmission<unknown>,
      { transmission: Transmission<unknown>; answer: TransmitAnswer }
    >({
      leaseMs: BATCH_TRANSMIT_LEASE_MS,
      prepare: (tx, job) => prepareTransmission(engine, adapter, tx, job),
      call: async (transmission) => ({
        transmission,
        answer: await adapter.transmit(transmission.request, transmission.attempt),
      }),
      record: (tx, job, { transmission, answer }) =>
        recordAnswer(engine, adapter, tx, job, transmission, answer),
    }),
    [adapter.jobs.windowClose]: (tx, job) => closeWindow(engine, adapter, tx, job),
  };
}

/** Why an operator's batch action was refused. */
export type BatchActionRefusal =
  | "batch_not_found"
  | "batch_not_built"
  | "batch_not_in_doubt"
  | "batch_uploads"
  | "batch_awaits_release"
  | "batch_held";

/** What the bank or provider said of an in-doubt batch. */
export type InDoubtAnswer = "transmitted" | "not_received";

const notInDoubt = (adapter: BatchAdapter, batch: BatchRow) =>
  refuse(
    "batch_not_in_doubt",
    `${adapter.label} ${batch.id} is ${batch.status}; only an in-doubt batch is resolved`,
    { field: "file", details: { status: batch.status } },
  );

/** Whether an in-doubt batch may be resolved (found, in doubt), outside a unit. */
export function checkInDoubt(
  adapter: BatchAdapter,
  batch: BatchRow,
): Result<BatchRow, BatchActionRefusal> {
  return batch.status === "in_doubt" ? ok(batch) : notInDoubt(adapter, batch);
}

/**
 * Resolves an in-doubt batch in the caller's unit with what the rail said: it has it
 * (transmitted, with what follows) or has not (voided and queued again, or built again and
 * transmitted again, as the rail's files need). Audited as `<rail>:resolve`.
 */
export async function resolveInDoubt(
  tx: WriteTx,
  engine: EngineDeps,
  adapter: BatchAdapter,
  actor: AuditActor,
  batchId: string,
  as: InDoubtAnswer,
  now: number,
): Promise<Result<{ batchId: string; status: string }, BatchActionRefusal>> {
  const batch = await loadBatch(tx, batchId);
  if (!batch || !adapter.rails.includes(batch.rail)) {
    return refuse("batch_not_found", `no ${adapter.label} ${batchId}`, { field: "file" });
  }
  if (batch.status !== "in_doubt") return notInDoubt(adapter, batch);
  let status: string;
  if (as === "transmitted") {
    await recordTransmitted(tx, adapter, batchId, batch.railReference ?? batchId, now);
    status = "transmitted";
  } else if (adapter.notReceived === "void") {
    await voidAndRequeue(tx, engine, adapter, batch, "the bank did not receive it", now);
    status = "voided";
  } else {
    // The operator asked the bank: it does not have the file, so it is no longer possibly sent.
    await tx.db.update(railBatches).set({ downloadedAt: null }).where(eq(railBatches.id, batchId));
    await transmissionFailed(tx, batchId, "the bank did not receive the file");
    await scheduleTransmission(tx, adapter.jobs, batch, now, 1);
    status = "built";
  }
  await appendAudit(tx, engine.policy.environment, actor, {
    at: now,
    action: `${adapter.commandPrefix}:resolve`,
    objectType: adapter.objectType,
    objectId: batchId,
    companyId: batch.companyId,
    before: { id: batchId, status: "in_doubt" },
    after: { id: batchId, status, bank_answer: as },
  });
  return ok({ batchId, status });
}

/**
 * An operator downloads a built file to hand it over: refused while it awaits its release; the
 * first download is kept, and from then on the file counts as possibly sent.
 */
export async function recordDownload(
  tx: WriteTx,
  engine: EngineDeps,
  adapter: BatchAdapter,
  batchId: string,
  now: number,
): Promise<Result<BatchRow, BatchActionRefusal>> {
  const batch = await loadBatch(tx, batchId);
  if (!batch || !adapter.rails.includes(batch.rail)) {
    return refuse("batch_not_found", `no ${adapter.label} ${batchId}`, { field: "file" });
  }
  if (batch.status !== "built") return ok(batch);
  const held = await adapter.hold(tx, batch);
  if (held && await awaitsRelease(engine.policy, tx, batchId, held.releaseCents)) {
    return refuse(
      "batch_awaits_release",
      `${adapter.label} ${batchId} is over the approval limit and its release is not approved: it cannot be downloaded before a second admin approves it`,
      { field: "file" },
    );
  }
  if (batch.downloadedAt === null) {
    await tx.db.update(railBatches).set({ downloadedAt: now }).where(eq(railBatches.id, batchId));
  }
  return ok(batch);
}
