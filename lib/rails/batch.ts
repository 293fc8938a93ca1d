/**
 * The batch shape of a rail (a bank file, a provider batch): a submitted payout is queued as an
 * entry; a cutoff job per company and rail gathers the queued entries into one batch (`built`);
 * a transmit job hands the batch to the rail outside every write unit (`transmitting`, then
 * `transmitted`); the rail reports each entry's outcome later (a return file, a provider's item
 * status), which moves its payout through the state machine. Rail-agnostic: a `BatchRail` builds
 * its own content and transmits it; the payout moves are given by lib/payouts/jobs.ts.
 *
 * Batch states: built → transmitting → transmitted | in_doubt | voided. A transmission that
 * started and never recorded its answer (the process stopped during the call) is `in_doubt`,
 * unless the rail takes the same batch id again without paying twice (`retransmitsSafely`): an
 * operator then asks the rail what it received.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import { railBatchEntries, railBatches } from "../../db/schema.ts";
import { type DueJob, scheduleJob } from "../../db/scheduler_store.ts";
import { externalJob, type JobHandler } from "../../db/scheduler.ts";
import { retryDelayMs } from "../../db/job_policy.ts";
import type { WriteTx } from "../../db/writer.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { RailDirectory } from "./seam.ts";

/** The job kinds of the batch pipeline. */
export type RailBatchJobKind = "rail.cutoff" | "rail.transmit";

export type RailBatchStatus = (typeof railBatches.$inferSelect)["status"];
export type BatchEntryStatus = (typeof railBatchEntries.$inferSelect)["status"];

/** At most this many entries go into one batch; a larger queue is cut into several. */
export const BATCH_ENTRIES_MAX = 10_000;

/** A transmit job's claim: the rail's whole transmission (an upload, an API call) must fit in it. */
export const BATCH_TRANSMIT_LEASE_MS = 5 * 60_000;

/** One payout's place in a batch. */
export interface BatchEntry {
  readonly id: string;
  readonly companyId: string;
  readonly rail: string;
  readonly payoutId: string;
  /** The submission's idempotency reference (payout id + submission number). */
  readonly reference: string;
  readonly amountCents: number;
}

/** A built batch and the entries it carries. */
export interface RailBatch {
  readonly id: string;
  readonly companyId: string;
  readonly rail: string;
  readonly cutoffAt: number;
  readonly entries: readonly BatchEntry[];
  readonly totalCents: number;
}

/** A rail's answer to a transmission. */
export type TransmitAnswer =
  | { readonly kind: "transmitted"; readonly railReference: string }
  /** The rail was not reached, so nothing of the batch was taken: it is transmitted again later. */
  | { readonly kind: "not_transmitted"; readonly reason: string };

/** What a rail reports of one entry after its batch was transmitted. */
export type EntryOutcome =
  | { readonly kind: "completed" }
  | { readonly kind: "failed"; readonly reason: string };

/** A rail that takes payouts in batches. */
export interface BatchRail {
  readonly shape: "batch";
  /** The rail's name in rail_batches.rail and in its jobs. */
  readonly name: string;
  /**
   * True when handing the same batch id again never pays twice (a provider that refuses a
   * repeated batch id); false for a file a bank may already have picked up.
   */
  readonly retransmitsSafely: boolean;
  /** The first cutoff after `after` (domain time). */
  nextCutoff(after: number): number;
  /** The batch's content as the rail takes it (a NACHA file, a provider's request body). */
  build(batch: RailBatch): Uint8Array;
  /**
   * Hands the batch to the rail, identified by its id. Throws when it is not known whether the
   * rail took it (a timeout during the upload): the batch then goes in doubt.
   */
  transmit(batch: RailBatch, content: Uint8Array): Promise<TransmitAnswer>;
}

/** How the pipeline moves the payouts of its entries (lib/payouts/jobs.ts). */
export interface BatchPayoutMoves {
  /** Whether the entry's payout still waits for this submission (not canceled, not superseded). */
  awaits(tx: WriteTx, entry: BatchEntry): Promise<boolean>;
  /** The entry's batch was transmitted: its payout's money is sent. */
  sent(tx: WriteTx, entry: BatchEntry, now: number): Promise<void>;
  /** The rail reported the entry's outcome. */
  settled(tx: WriteTx, entry: BatchEntry, outcome: EntryOutcome, now: number): Promise<void>;
}

type EntryRow = typeof railBatchEntries.$inferSelect;

const toEntry = (row: EntryRow): BatchEntry => ({
  id: row.id,
  companyId: row.companyId,
  rail: row.rail,
  payoutId: row.payoutId!,
  reference: row.reference,
  amountCents: row.amountCents,
});

/**
 * Queues a submitted payout for its rail's next cutoff, and schedules that cutoff when none is
 * pending for the company and rail. A reference already queued stays as it is.
 */
export async function queueBatchEntry(
  tx: WriteTx,
  rail: BatchRail,
  entry: Omit<BatchEntry, "id" | "rail">,
  now: number,
): Promise<void> {
  await tx.db.insert(railBatchEntries).values({
    id: newId("rbe"),
    companyId: entry.companyId,
    rail: rail.name,
    batchId: null,
    payoutId: entry.payoutId,
    reference: entry.reference,
    amountCents: entry.amountCents,
    status: "queued",
    createdAt: now,
  }).onConflictDoNothing({ target: railBatchEntries.reference });
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM scheduled_jobs
          WHERE company_id = ? AND done_at IS NULL AND kind = 'rail.cutoff' AND subject_id = ?
          LIMIT 1`,
    args: [entry.companyId, rail.name],
  });
  if (rows.length > 0) return;
  await scheduleJob(tx, {
    companyId: entry.companyId,
    kind: "rail.cutoff" satisfies RailBatchJobKind,
    subjectId: rail.name,
    dueAt: rail.nextCutoff(now),
  }, now);
}

/**
 * The cutoff: the company's queued entries of the rail become one built batch, in queue order,
 * and its transmission is scheduled at once. Entries whose payout no longer waits for them are
 * voided instead. Returns the batch id, or null when nothing was queued.
 */
export async function cutBatch(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  companyId: string,
  railName: string,
  cutoffAt: number,
): Promise<string | null> {
  const queued = (await tx.db.select().from(railBatchEntries)
    .where(and(
      eq(railBatchEntries.companyId, companyId),
      eq(railBatchEntries.rail, railName),
      isNull(railBatchEntries.batchId),
      eq(railBatchEntries.status, "queued"),
    ))
    .orderBy(asc(railBatchEntries.createdAt), asc(railBatchEntries.id))
    .limit(BATCH_ENTRIES_MAX + 1)).map(toEntry);
  if (queued.length > BATCH_ENTRIES_MAX) {
    // The rest go into the next batch, cut right after this one.
    await scheduleJob(tx, {
      companyId,
      kind: "rail.cutoff" satisfies RailBatchJobKind,
      subjectId: railName,
      dueAt: cutoffAt,
    }, cutoffAt);
  }
  const entries: BatchEntry[] = [];
  for (const entry of queued.slice(0, BATCH_ENTRIES_MAX)) {
    if (await moves.awaits(tx, entry)) entries.push(entry);
    else await setEntryStatus(tx, entry.id, "voided");
  }
  if (entries.length === 0) return null;
  const batchId = newId("rbt");
  await tx.db.insert(railBatches).values({
    id: batchId,
    companyId,
    rail: railName,
    status: "built",
    entryCount: entries.length,
    totalCents: entries.reduce((sum, entry) => sum + entry.amountCents, 0),
    cutoffAt,
    createdAt: cutoffAt,
  });
  for (const entry of entries) {
    await tx.db.update(railBatchEntries).set({ batchId, status: "batched" })
      .where(eq(railBatchEntries.id, entry.id));
  }
  await scheduleTransmit(tx, companyId, batchId, cutoffAt, 1);
  return batchId;
}

async function scheduleTransmit(
  tx: WriteTx,
  companyId: string,
  batchId: string,
  dueAt: number,
  attempt: number,
): Promise<void> {
  await scheduleJob(tx, {
    companyId,
    kind: "rail.transmit" satisfies RailBatchJobKind,
    subjectId: batchId,
    dueAt,
    payload: { attempt },
  }, dueAt);
}

async function setEntryStatus(tx: WriteTx, entryId: string, status: BatchEntryStatus) {
  await tx.db.update(railBatchEntries).set({ status }).where(eq(railBatchEntries.id, entryId));
}

async function setBatch(
  tx: WriteTx,
  batchId: string,
  change: Partial<typeof railBatches.$inferInsert>,
): Promise<void> {
  await tx.db.update(railBatches).set(change).where(eq(railBatches.id, batchId));
}

/**
 * The transmit job's claiming unit: what to hand to the rail, or null when there is nothing to
 * hand (the batch is no longer built, went in doubt, or every entry's payout stopped waiting).
 */
async function prepareTransmission(
  tx: WriteTx,
  rails: RailDirectory,
  moves: BatchPayoutMoves,
  batchId: string,
): Promise<RailBatch | null> {
  const [batch] = await tx.db.select().from(railBatches).where(eq(railBatches.id, batchId));
  if (!batch) throw new Error(`rail.transmit: no batch ${batchId}`);
  const rail = rails.batchRail(batch.rail);
  if (!rail) throw new Error(`rail.transmit: no batch rail ${batch.rail} for batch ${batchId}`);
  if (batch.status === "transmitting" && !rail.retransmitsSafely) {
    // An earlier run started handing it over and never recorded the answer: the bank may have it.
    await setBatch(tx, batchId, {
      status: "in_doubt",
      error: "the transmission was interrupted before its answer was recorded",
    });
    return null;
  }
  if (batch.status !== "built" && batch.status !== "transmitting") return null;
  const carried = (await tx.db.select().from(railBatchEntries)
    .where(and(eq(railBatchEntries.batchId, batchId), eq(railBatchEntries.status, "batched")))
    .orderBy(asc(railBatchEntries.createdAt), asc(railBatchEntries.id))).map(toEntry);
  const entries: BatchEntry[] = [];
  for (const entry of carried) {
    if (batch.status === "transmitting" || await moves.awaits(tx, entry)) entries.push(entry);
    else await setEntryStatus(tx, entry.id, "voided");
  }
  if (entries.length === 0) {
    await setBatch(tx, batchId, { status: "voided", entryCount: 0, totalCents: 0 });
    return null;
  }
  const totalCents = entries.reduce((sum, entry) => sum + entry.amountCents, 0);
  await setBatch(tx, batchId, { status: "transmitting", entryCount: entries.length, totalCents });
  return {
    id: batch.id,
    companyId: batch.companyId,
    rail: batch.rail,
    cutoffAt: batch.cutoffAt,
    entries,
    totalCents,
  };
}

/** What the transmit job's call hands to its answer unit. */
interface Transmission {
  readonly batch: RailBatch;
  readonly answer: TransmitAnswer;
}

/** The transmit job's answer unit: the batch is transmitted and its payouts' money sent, or it waits again. */
async function recordTransmission(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  job: DueJob,
  batch: RailBatch,
  answer: TransmitAnswer,
): Promise<void> {
  if (answer.kind === "not_transmitted") {
    await setBatch(tx, batch.id, { status: "built", error: answer.reason });
    const attempt = typeof job.payload.attempt === "number" ? job.payload.attempt : 1;
    await scheduleTransmit(
      tx,
      batch.companyId,
      batch.id,
      job.dueAt + retryDelayMs(attempt),
      attempt + 1,
    );
    return;
  }
  await setBatch(tx, batch.id, {
    status: "transmitted",
    railReference: answer.railReference,
    transmittedAt: job.dueAt,
    error: null,
  });
  for (const entry of batch.entries) {
    await setEntryStatus(tx, entry.id, "sent");
    await moves.sent(tx, entry, job.dueAt);
  }
}

/**
 * A rail's report of one entry's outcome (from a return file, a provider's item status): the
 * entry settles and its payout completes or fails. Each entry settles once.
 */
export async function settleBatchEntry(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  reference: string,
  outcome: EntryOutcome,
  now: number,
): Promise<Result<BatchEntry, "entry_not_found" | "entry_not_sent">> {
  const [row] = await tx.db.select().from(railBatchEntries)
    .where(eq(railBatchEntries.reference, reference));
  if (!row) return refuse("entry_not_found", `no batch entry has the reference ${reference}`);
  if (row.status !== "sent") {
    return refuse(
      "entry_not_sent",
      `batch entry ${reference} is ${row.status}; only a sent entry can settle`,
      { details: { status: row.status } },
    );
  }
  const entry = toEntry(row);
  await setEntryStatus(tx, entry.id, outcome.kind);
  await moves.settled(tx, entry, outcome, now);
  return ok(entry);
}

/** The handlers of the batch pipeline's jobs for the rails of one environment. */
export function batchJobHandlers(
  rails: RailDirectory,
  moves: BatchPayoutMoves,
): Record<RailBatchJobKind, JobHandler> {
  return {
    "rail.cutoff": async (tx, job) => {
      await cutBatch(tx, moves, job.companyId, job.subjectId, job.dueAt);
    },
    "rail.transmit": externalJob<RailBatch, Transmission>({
      leaseMs: BATCH_TRANSMIT_LEASE_MS,
      prepare: (tx, job) => prepareTransmission(tx, rails, moves, job.subjectId),
      call: async (batch) => {
        const rail = rails.batchRail(batch.rail)!;
        return { batch, answer: await rail.transmit(batch, rail.build(batch)) };
      },
      record: (tx, job, { batch, answer }) => recordTransmission(tx, moves, job, batch, answer),
    }),
  };
}
