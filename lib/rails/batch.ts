/**
 * The batch shape of a rail (a bank file, a provider batch): a submitted payout (or an ACH
 * funding's debit) is queued as an entry; the rail's cutoff job gathers a company's queued
 * entries into one batch (`built`); its transmit job hands the batch over outside every write
 * unit (`transmitting`, then `transmitted`); the rail reports each entry's outcome later (a
 * return file, a settlement date), which moves its payout or funding. This module keeps the
 * batch state machine and the entries' rows; the rail engine (engine.ts) runs every rail's
 * release, transmission, window and in-doubt resolution through each rail's adapter, and a
 * `BatchRail` (lib/ach/rail.ts) brings its cutoff; both move batches only through the functions here.
 *
 * Batch states: built → transmitting → transmitted | in_doubt | voided. A transmission that
 * started and never recorded its answer (the process stopped during the call) is `in_doubt`,
 * unless the rail takes the same batch again without paying twice (`retransmitsSafely`): an
 * operator then asks the rail what it received. A built batch may be voided: its entries are
 * queued again under new references.
 */
import type { Row } from "@libsql/client";
import { and, asc, eq, getTableColumns } from "drizzle-orm";
import { railBatchEntries, railBatches } from "../../db/schema.ts";
import { externalJob, type JobHandler, yieldToEventLoop } from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import type { GroupCommitWriter, WriteTx } from "../../db/writer.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { MoneyInFlight, MoneyInFlightStage } from "../payouts/transition.ts";
import {
  type BatchAdapter,
  type EngineDeps,
  engineJobHandlers,
  type RailPolicy,
} from "./engine.ts";

/**
 * The kinds of ACH's cutoff and transmit jobs. An environment's job table is keyed by kind, so
 * each other batch rail names its own (`check.cutoff`, `paypal.transmit`, …).
 */
export type RailBatchJobKind = "rail.cutoff" | "rail.transmit";

export type RailBatchStatus = (typeof railBatches.$inferSelect)["status"];
export type BatchEntryStatus = (typeof railBatchEntries.$inferSelect)["status"];

/** At most this many entries go into one batch; a larger queue is cut into several. */
export const BATCH_ENTRIES_MAX = 10_000;

/** A transmit job's claim: the rail's whole transmission (an upload, an API call) must fit in it. */
export const BATCH_TRANSMIT_LEASE_MS = 5 * 60_000;

/** One payout's (credit) or one funding's (debit) place in a batch. */
export interface BatchEntry {
  readonly id: string;
  readonly companyId: string;
  readonly rail: string;
  /** The payout a credit pays; null for a funding debit. */
  readonly payoutId: string | null;
  /** The funding a debit collects; null for a payout credit. */
  readonly fundingId: string | null;
  readonly direction: "credit" | "debit";
  /** The submission's idempotency reference (payout id + submission number, funding id + attempt). */
  readonly reference: string;
  readonly amountCents: number;
}

/** What a queueing unit gives of a new entry. */
export type NewBatchEntry = Omit<BatchEntry, "id" | "rail">;

/** A batch and the entries it carries. */
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
  /** The rail was not reached, or refused the batch: nothing of it was taken. */
  | {
    readonly kind: "not_transmitted";
    readonly reason: string;
    /**
     * When to try again: by default the engine's backoff; null, never by itself (the batch waits,
     * built, for an operator who read the reason).
     */
    readonly retryAfterMs?: number | null;
  };

/** What a rail reports of one entry after its batch was transmitted. */
export type EntryOutcome =
  | { readonly kind: "completed" }
  | {
    readonly kind: "failed";
    readonly reason: string;
    /** The bank's return reason code (R03, …), kept on the entry. */
    readonly returnCode?: string;
  };

/** A rail that takes payouts in batches. */
export interface BatchRail {
  readonly shape: "batch";
  /** The rail's name in rail_batch_entries.rail. */
  readonly name: string;
  /** The engine's rules of the rail's environment (time, release), chosen at the composition root. */
  readonly policy: RailPolicy;
  /** Whether the company may use the rail (its bank settings exist, say). */
  configured(tx: WriteTx, companyId: string): Promise<boolean>;
  /** Queues an entry in the caller's unit for the rail's next cutoff. */
  queue(tx: WriteTx, entry: NewBatchEntry, now: number): Promise<void>;
  /** The handlers of the rail's own jobs (its cutoff, what its outcomes need). */
  jobHandlers(moves: BatchPayoutMoves): Readonly<Record<string, JobHandler>>;
  /** The adapters of the rail's batches (a rail may build several kinds), run by the engine. */
  adapters(moves: BatchPayoutMoves): readonly BatchAdapter[];
}

/**
 * The job handlers of every batch rail, together, with the engine's transmission and window jobs
 * of each adapter; two rails naming the same job kind is a programmer error (one would silently
 * run the other's jobs).
 */
export function batchRailJobHandlers(
  rails: readonly BatchRail[],
  moves: BatchPayoutMoves,
): Record<string, JobHandler> {
  const handlers: Record<string, JobHandler> = {};
  const add = (kind: string, handler: JobHandler) => {
    if (kind in handlers) throw new Error(`two batch rails run the job kind ${kind}`);
    handlers[kind] = handler;
  };
  for (const rail of rails) {
    for (const [kind, handler] of Object.entries(rail.jobHandlers(moves))) add(kind, handler);
    for (const adapter of rail.adapters(moves)) {
      const engine = { policy: rail.policy, moves };
      for (const [kind, handler] of Object.entries(engineJobHandlers(engine, adapter))) {
        add(kind, handler);
      }
    }
  }
  return handlers;
}

/**
 * An environment's batch rails as the composition root built them, with the payout moves of their
 * entries: what the jobs, the operators' batch actions and an import's in-doubt resolution run on.
 */
export interface BatchRailSet {
  readonly rails: readonly BatchRail[];
  readonly moves: BatchPayoutMoves;
}

/** The adapter of the batches of `rail` (rail_batches.rail), with the engine it runs on. */
export function batchAdapterOf(
  { rails, moves }: BatchRailSet,
  rail: string,
): { adapter: BatchAdapter; engine: EngineDeps } | null {
  for (const batchRail of rails) {
    const adapter = batchRail.adapters(moves).find((candidate) => candidate.rails.includes(rail));
    if (adapter) return { adapter, engine: { policy: batchRail.policy, moves } };
  }
  return null;
}

/** How the pipeline moves the payouts and fundings of its entries (lib/payouts/jobs.ts). */
export interface BatchPayoutMoves {
  /**
   * A page of entries of a transmitted batch: their payouts' money is sent (a debit waits to
   * settle), the state machine deciding each payout's move and the writing done for the page.
   */
  sent(tx: WriteTx, entries: readonly BatchEntry[], now: number): Promise<void>;
  /** The rail reported the entry's outcome: its payout completes or fails, its funding clears or returns. */
  settled(tx: WriteTx, entry: BatchEntry, outcome: EntryOutcome, now: number): Promise<void>;
  /**
   * A page of sent entries completed with no return: their payouts complete and their fundings
   * clear, as `settled` moves one, the payouts' writing done for the page.
   */
  completed(tx: WriteTx, entries: readonly BatchEntry[], now: number): Promise<void>;
  /**
   * The entry's batch was voided: the reference its payout or funding is queued under next, or
   * null when it no longer waits (canceled meanwhile).
   */
  nextReference(tx: WriteTx, entry: BatchEntry): Promise<string | null>;
  /**
   * The rail stopped the entry before its voided batch reached anyone (a check an operator voided
   * while its file waited): its payout fails for `reason` instead of being queued again.
   */
  stopped(tx: WriteTx, entry: BatchEntry, reason: string, now: number): Promise<void>;
}

type EntryRow = typeof railBatchEntries.$inferSelect;

/** An entry as the pipeline sees it, from a statement's row of rail_batch_entries' columns. */
export const batchEntryOfRow = (row: Row): BatchEntry => ({
  id: String(row.id),
  companyId: String(row.company_id),
  rail: String(row.rail),
  payoutId: row.payout_id === null ? null : String(row.payout_id),
  fundingId: row.funding_id === null ? null : String(row.funding_id),
  direction: row.direction === "debit" ? "debit" : "credit",
  reference: String(row.reference),
  amountCents: Number(row.amount_cents),
});

/** An entry row as the pipeline sees it. */
export const toBatchEntry = (row: EntryRow): BatchEntry => ({
  id: row.id,
  companyId: row.companyId,
  rail: row.rail,
  payoutId: row.payoutId,
  fundingId: row.fundingId,
  direction: row.direction,
  reference: row.reference,
  amountCents: row.amountCents,
});

/** A new built batch, opened by a rail's cutoff (its entries are claimed into it afterwards). */
export interface NewBatch {
  readonly id: string;
  readonly companyId: string;
  /** rail_batches.rail: the kind of batch (ach, check_positive_pay, check_print, paypal). */
  readonly rail: string;
  readonly entryCount: number;
  readonly totalCents: number;
  readonly cutoffAt: number;
  /** What the rail calls it from the start (an ACH file's name), else null until transmitted. */
  readonly railReference?: string | null;
  readonly createdAt: number;
}

/**
 * Opens a built batch: the one way every rail's cutoff creates one. Written directly, as the
 * batch's other statements: a cutoff's claiming unit is one of its blocks.
 */
export async function openBatch(tx: WriteTx, batch: NewBatch): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO rail_batches
            (id, company_id, rail, status, entry_count, total_cents, cutoff_at, rail_reference,
             created_at)
          VALUES (?, ?, ?, 'built', ?, ?, ?, ?, ?)`,
    args: [
      batch.id,
      batch.companyId,
      batch.rail,
      batch.entryCount,
      batch.totalCents,
      batch.cutoffAt,
      batch.railReference ?? null,
      batch.createdAt,
    ],
  });
}

/** Inserts a queued entry; a reference already queued stays as it is. */
export async function insertQueuedEntry(
  tx: WriteTx,
  railName: string,
  entry: NewBatchEntry,
  now: number,
): Promise<void> {
  await tx.db.insert(railBatchEntries).values({
    id: newId("rbe"),
    companyId: entry.companyId,
    rail: railName,
    batchId: null,
    payoutId: entry.payoutId,
    fundingId: entry.fundingId,
    direction: entry.direction,
    reference: entry.reference,
    amountCents: entry.amountCents,
    status: "queued",
    createdAt: now,
  }).onConflictDoNothing({ target: railBatchEntries.reference });
}

/**
 * The entries of a batch still carried by it (batched, or sent once transmitted), in file order;
 * the first `limit` only when given (a unit that sends part of a large file reads only its part).
 */
export async function batchEntries(
  tx: Pick<WriteTx, "db">,
  batchId: string,
  status: BatchEntryStatus,
  limit?: number,
): Promise<BatchEntry[]> {
  const query = tx.db.select().from(railBatchEntries)
    .where(and(eq(railBatchEntries.batchId, batchId), eq(railBatchEntries.status, status)))
    .orderBy(asc(railBatchEntries.createdAt), asc(railBatchEntries.id));
  return (await (limit === undefined ? query : query.limit(limit))).map(toBatchEntry);
}

/** rail_batches' column of each field (its columns are plain text and integers). */
const BATCH_COLUMN: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(getTableColumns(railBatches)).map(([field, column]) => [field, column.name]),
);

/**
 * Changes a batch's row. Written directly, not built by the query builder: a transmission's units
 * are its short phase's blocks, and a query's first building after a restart compiles it there.
 */
export async function setBatch(
  tx: Pick<WriteTx, "execute">,
  batchId: string,
  change: Partial<typeof railBatches.$inferInsert>,
): Promise<void> {
  const fields = Object.keys(change) as (keyof typeof change)[];
  await tx.execute({
    sql: `UPDATE rail_batches SET ${
      fields.map((field) => `${BATCH_COLUMN[field]} = ?`).join(", ")
    } WHERE id = ?`,
    args: [...fields.map((field) => change[field] ?? null), batchId],
  });
}

export type BatchRow = typeof railBatches.$inferSelect;

const toBatchRow = rowMapper(columnsOf(railBatches));
const LOAD_BATCH_SQL = `SELECT ${toBatchRow.columns.join(", ")} FROM rail_batches WHERE id = ?`;

/**
 * A batch row, or null. Its statement is written once: a cutoff reads its batch at every claim
 * page, and a query built at each call costs the thread more than the read (and, after a restart,
 * the query builder's first compilation fell in a cutoff's claim).
 */
export async function loadBatch(
  tx: Pick<WriteTx, "execute">,
  batchId: string,
): Promise<BatchRow | null> {
  const { rows } = await tx.execute({ sql: LOAD_BATCH_SQL, args: [batchId] });
  return rows[0] ? toBatchRow(rows[0]) : null;
}

/** The rail may have the batch and nobody knows: an operator must ask it. */
export async function markInDoubt(tx: WriteTx, batchId: string): Promise<void> {
  await setBatch(tx, batchId, {
    status: "in_doubt",
    error: "the transmission was interrupted before its answer was recorded",
  });
  console.error(JSON.stringify({
    level: "error",
    msg: "a batch went in doubt: ask the bank whether it received it, then resolve it",
    batch_id: batchId,
  }));
}

/** The batch cannot go as it is (its content failed its check): it stays built, held with the reason. */
export async function holdBatch(tx: WriteTx, batchId: string, reason: string): Promise<void> {
  await setBatch(tx, batchId, { error: reason });
}

/** The rail was not reached: the batch is built again, waiting for its next transmission. */
export async function transmissionFailed(
  tx: WriteTx,
  batchId: string,
  reason: string,
): Promise<void> {
  await setBatch(tx, batchId, { status: "built", error: reason });
}

/**
 * The batch reached the rail (or an operator confirmed it did): it is transmitted. Its entries
 * are sent (`sendTransmittedEntries`), in bounded units for a large batch. Only a built,
 * transmitting or in-doubt batch can be.
 */
export async function markTransmitted(
  tx: WriteTx,
  batchId: string,
  railReference: string,
  at: number,
): Promise<void> {
  const batch = await loadBatch(tx, batchId);
  if (!batch || !["built", "transmitting", "in_doubt"].includes(batch.status)) {
    throw new Error(`batch ${batchId} is ${batch?.status ?? "missing"}; it cannot be transmitted`);
  }
  await setBatch(tx, batchId, {
    status: "transmitted",
    railReference,
    transmittedAt: at,
    error: null,
  });
}

/**
 * Entries sent per page: each page's entries, payouts, ledger postings, timeline rows and events
 * are written a statement (or a few) each, so a unit sending a whole batch (PayPal's) pages it.
 */
const SEND_PAGE_ENTRIES_MAX = 500;

/**
 * Sends at most `limit` entries of a transmitted batch still batched: each is sent and its
 * payout's money is sent, a page at a time. Returns how many; fewer than `limit` means none is left.
 */
export async function sendTransmittedEntries(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  batchId: string,
  limit: number,
  at: number,
): Promise<number> {
  const entries = await takeEntries(tx, {
    set: "status = 'sent'",
    setArgs: [],
    batchId,
    from: "batched",
    limit,
    batchStatus: "transmitted",
  });
  for (let start = 0; start < entries.length; start += SEND_PAGE_ENTRIES_MAX) {
    await moves.sent(tx, entries.slice(start, start + SEND_PAGE_ENTRIES_MAX), at);
  }
  return entries.length;
}

/**
 * The first `limit` entries of a batch in `from`, in file order, changed by `set` in one statement
 * that picks and writes them (only while the batch is in `batchStatus`, when given): a send or
 * settle unit's fixed statements are part of every unit's hold on the service's thread.
 */
async function takeEntries(
  tx: WriteTx,
  take: {
    readonly set: string;
    readonly setArgs: readonly (string | number | null)[];
    readonly batchId: string;
    readonly from: BatchEntryStatus;
    readonly limit: number;
    readonly batchStatus?: RailBatchStatus;
  },
): Promise<BatchEntry[]> {
  const batchIs = take.batchStatus === undefined
    ? ""
    : "AND (SELECT status FROM rail_batches WHERE id = ?) = ?";
  const { rows } = await tx.execute({
    sql: `UPDATE rail_batch_entries SET ${take.set}
          WHERE id IN (SELECT id FROM rail_batch_entries
                        WHERE batch_id = ? AND status = ? ${batchIs}
                        ORDER BY created_at, id LIMIT ?)
          RETURNING id, company_id, rail, payout_id, funding_id, direction, reference,
            amount_cents, created_at`,
    args: [
      ...take.setArgs,
      take.batchId,
      take.from,
      ...(take.batchStatus === undefined ? [] : [take.batchId, take.batchStatus]),
      take.limit,
    ],
  });
  // RETURNING answers in no promised order: the file's order is the page's.
  return rows.map((row) => ({
    entry: batchEntryOfRow(row),
    createdAt: Number(row.created_at),
  })).sort((a, b) =>
    a.createdAt - b.createdAt || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0)
  ).map(({ entry }) => entry);
}

async function sendPage(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  page: readonly BatchEntry[],
  at: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE rail_batch_entries SET status = 'sent'
          WHERE status = 'batched' AND id IN (${page.map(() => "?").join(", ")})`,
    args: page.map((entry) => entry.id),
  });
  await moves.sent(tx, page, at);
}

/**
 * Sends one entry of a transmitted batch now if it is still batched (a bank's file names it
 * before the batch's send reached it); false when it is not waiting to be sent.
 */
export async function sendTransmittedEntry(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  entryId: string,
  at: number,
): Promise<boolean> {
  const [row] = await tx.db.select().from(railBatchEntries)
    .where(and(eq(railBatchEntries.id, entryId), eq(railBatchEntries.status, "batched")));
  if (!row || row.batchId === null) return false;
  if ((await loadBatch(tx, row.batchId))?.status !== "transmitted") return false;
  await sendPage(tx, moves, [toBatchEntry(row)], at);
  return true;
}

/**
 * Entries one unit of a batch's send (and of an ACH file's settlement) moves, on every batch rail.
 * A unit writes its page set-based (a statement or two each for the entries, payouts, postings,
 * timeline rows and events) and holds the service's thread for its statements and its commit:
 * about 1.2 ms of its CPU for the unit and 0.1 ms a payout at load 10 (25: 3.5 to 3.9 ms; 10: 2.3
 * to 2.5 ms), so a request that came meanwhile waited that long. The event loop gets its turns
 * before every unit (`inUnits`).
 */
export const SEND_ENTRIES_PER_UNIT_MAX = 10;

/** How a rail's transmitted batches are sent: the one way for every batch rail. */
export interface BatchSend {
  /** The kind of the rail's job that sends a batch's entries beyond the transmission's unit. */
  readonly job: string;
  /** What follows once every entry is sent, in the unit that sent the last (or found none left). */
  readonly allSent?: (tx: WriteTx, batch: BatchRow, at: number) => Promise<void>;
}

/**
 * In the unit that records a transmission: a batch of at most a unit's entries is sent there and
 * `allSent` runs; a larger one is sent wholly by the rail's send job (`batchSendJob`), so that the
 * transmission's unit holds the service's thread only for its record. A process's first send unit
 * prepares its statements (18 ms against 2.5 ms warm at load 5 to 7): in the transmission's unit
 * it made the transmission's few hundred milliseconds of requests wait behind it.
 */
export async function sendAfterTransmission(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  send: BatchSend,
  batch: BatchRow,
  at: number,
): Promise<void> {
  if (batch.entryCount > SEND_ENTRIES_PER_UNIT_MAX) {
    await scheduleJob(tx, {
      companyId: batch.companyId,
      kind: send.job,
      subjectId: batch.id,
      dueAt: at,
    }, at);
    return;
  }
  await sendTransmittedEntries(tx, moves, batch.id, SEND_ENTRIES_PER_UNIT_MAX, at);
  await send.allSent?.(tx, batch, at);
}

/**
 * A rail's send job: the rest of a transmitted batch's entries, SEND_ENTRIES_PER_UNIT_MAX per unit
 * outside the job's claiming and recording units (`sendTransmittedInUnits`), then `allSent` in the
 * recording unit. A run stopped midway leaves its claim to expire, and the next run sends what is
 * still batched.
 */
export function batchSendJob(
  deps: { readonly writer: GroupCommitWriter; readonly apiBusy: () => boolean },
  moves: BatchPayoutMoves,
  send: BatchSend,
): JobHandler {
  return externalJob<string, number>({
    leaseMs: BATCH_TRANSMIT_LEASE_MS,
    prepare: async (tx, job) =>
      (await loadBatch(tx, job.subjectId))?.status === "transmitted" ? job.subjectId : null,
    call: (batchId, job) =>
      sendTransmittedInUnits(
        deps.writer,
        moves,
        { id: batchId, perUnit: SEND_ENTRIES_PER_UNIT_MAX, at: job.dueAt },
        deps.apiBusy,
      ),
    record: async (tx, job) => {
      const batch = await loadBatch(tx, job.subjectId);
      if (batch?.status === "transmitted") await send.allSent?.(tx, batch, job.dueAt);
    },
  }) as JobHandler;
}

/**
 * Under API traffic, a unit of a batch's claim, facts, send or settlement is followed by a rest
 * this many times as long as it held the service's thread, so that the paging takes at most a
 * seventh of the thread while requests are answered. Each of the 32 requests a steady load keeps
 * in flight waits for the others' answers, so the thread's share a cutoff takes lengthens every
 * answer (a third, at 2: 1.5 times idle before any unit's own wait); a thread kept busy also
 * waits longer for a core on a loaded machine.
 */
export const UNIT_BUSY_REST_FACTOR = 6;

/**
 * A unit's rest is at most this long: a unit's length counts its commit's wait for the disk, which
 * a disk busy with other writers stretched to tens of milliseconds (the send of 10,000 then took
 * 200 s under load), and a send or settlement job must end within its claim (5 minutes).
 */
export const UNIT_BUSY_REST_MS_MAX = 40;

/**
 * After a unit of a batch's paging that began at `startedAt` (performance.now()): while `apiBusy`
 * says requests are answered, a rest of UNIT_BUSY_REST_FACTOR times its length, at most
 * UNIT_BUSY_REST_MS_MAX; else none.
 */
export async function restUnderApiTraffic(
  startedAt: number,
  apiBusy: () => boolean,
): Promise<void> {
  if (!apiBusy()) return;
  const restMs = Math.min(
    UNIT_BUSY_REST_FACTOR * (performance.now() - startedAt),
    UNIT_BUSY_REST_MS_MAX,
  );
  await new Promise((resolve) => setTimeout(resolve, restMs));
}

/**
 * Sends a transmitted batch's entries still batched, at most `perUnit` in each write unit
 * (`inUnits`). Each unit sends only what is still batched, so a run stopped anywhere is taken up
 * where it stopped. Returns how many it sent.
 */
export function sendTransmittedInUnits(
  writer: GroupCommitWriter,
  moves: BatchPayoutMoves,
  batch: { readonly id: string; readonly perUnit: number; readonly at: number },
  apiBusy: () => boolean = () => false,
): Promise<number> {
  return inUnits(
    writer,
    batch.perUnit,
    (tx) => sendTransmittedEntries(tx, moves, batch.id, batch.perUnit, batch.at),
    apiBusy,
  );
}

/**
 * The paging of a batch's send and of its settlement: `unit` runs in write units, each doing at
 * most `perUnit` entries, until one does fewer, the event loop given its turns before every unit
 * (and, while `apiBusy` says requests are answered, a rest of UNIT_BUSY_REST_FACTOR times the
 * unit's length): the embedded database holds the service's thread for a unit's statements and its
 * commit, and requests are answered between units. Runs outside every unit. Returns how many
 * entries the units did.
 */
export async function inUnits(
  writer: GroupCommitWriter,
  perUnit: number,
  unit: (tx: WriteTx) => Promise<number>,
  apiBusy: () => boolean = () => false,
): Promise<number> {
  let total = 0;
  for (;;) {
    await yieldToEventLoop();
    const started = performance.now();
    const done = await writer.write(unit);
    total += done;
    if (done < perUnit) return total;
    await restUnderApiTraffic(started, apiBusy);
  }
}

/** What becomes of the entries of a voided batch, from the rail. */
export interface VoidedEntries {
  /** Queues an entry again under its new reference (the rail's queue, which plans its cutoff). */
  requeue(entry: NewBatchEntry): Promise<void>;
  /** Why the rail stopped the entry itself (its payout fails instead), or null to queue it again. */
  stoppedBy?(entry: BatchEntry): Promise<string | null>;
  readonly now: number;
}

/**
 * A built (or in-doubt, once the rail said it has nothing) batch is voided: its entries are voided
 * and queued again under new references, each whose payout or funding still waits, except those
 * the rail stopped itself, whose payouts fail. Returns the entries queued again.
 */
export async function voidBatch(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  batchId: string,
  reason: string,
  voided: VoidedEntries,
): Promise<NewBatchEntry[]> {
  const batch = await loadBatch(tx, batchId);
  if (!batch || !["built", "transmitting", "in_doubt"].includes(batch.status)) {
    throw new Error(`batch ${batchId} is ${batch?.status ?? "missing"}; it cannot be voided`);
  }
  await setBatch(tx, batchId, { status: "voided", error: reason });
  const entries = await batchEntries(tx, batchId, "batched");
  await tx.db.update(railBatchEntries).set({ status: "voided" })
    .where(and(eq(railBatchEntries.batchId, batchId), eq(railBatchEntries.status, "batched")));
  const requeued: NewBatchEntry[] = [];
  for (const entry of entries) {
    const stoppedBy = await voided.stoppedBy?.(entry) ?? null;
    if (stoppedBy !== null) {
      await tx.db.update(railBatchEntries).set({ status: "failed", settledAt: voided.now })
        .where(eq(railBatchEntries.id, entry.id));
      await moves.stopped(tx, entry, stoppedBy, voided.now);
      continue;
    }
    const reference = await moves.nextReference(tx, entry);
    if (reference === null) continue;
    const { id: _id, rail: _rail, ...queued } = entry;
    const next = { ...queued, reference };
    await voided.requeue(next);
    requeued.push(next);
  }
  return requeued;
}

/** The batch that carries an entry, or null while it is queued. */
export async function batchOfEntry(
  tx: Pick<WriteTx, "execute">,
  entryId: string,
): Promise<string | null> {
  const { rows } = await tx.execute({
    sql: "SELECT batch_id FROM rail_batch_entries WHERE id = ?",
    args: [entryId],
  });
  return rows[0]?.batch_id == null ? null : String(rows[0].batch_id);
}

/**
 * Where the entry queued under `reference` (a payout's current submission) holds its money: null
 * when there is no such entry or it is no longer in flight (settled, returned, voided).
 */
export async function moneyInFlight(
  tx: Pick<WriteTx, "execute">,
  reference: string,
): Promise<MoneyInFlight | null> {
  const { rows } = await tx.execute({
    sql: `SELECT e.rail, e.status, e.batch_id, b.status AS batch_status
          FROM rail_batch_entries e LEFT JOIN rail_batches b ON b.id = e.batch_id
          WHERE e.reference = ?`,
    args: [reference],
  });
  const row = rows[0];
  if (!row) return null;
  const stage = stageOf(
    String(row.status),
    row.batch_status === null ? null : String(row.batch_status),
  );
  return stage === null ? null : {
    stage,
    rail: String(row.rail),
    batchId: row.batch_id === null ? null : String(row.batch_id),
  };
}

function stageOf(entryStatus: string, batchStatus: string | null): MoneyInFlightStage | null {
  if (entryStatus === "queued") return "queued";
  if (entryStatus === "sent") return "transmitted";
  if (entryStatus !== "batched") return null;
  if (batchStatus === "transmitting" || batchStatus === "in_doubt") return "transmitting";
  return batchStatus === "transmitted" ? "transmitted" : "batched";
}

/**
 * Voids the entry queued under `reference` in the caller's unit (its payout was canceled or
 * offered again before a cutoff took it); false when it is no longer only queued.
 */
export async function voidQueuedEntry(tx: WriteTx, reference: string): Promise<boolean> {
  const voided = await tx.execute({
    sql: `UPDATE rail_batch_entries SET status = 'voided'
          WHERE reference = ? AND status = 'queued' AND batch_id IS NULL`,
    args: [reference],
  });
  return voided.rowsAffected === 1;
}

/**
 * A rail's report of one entry's outcome (a return file's line, a settlement date): the entry
 * settles and its payout completes or fails, its funding clears or returns. Each entry settles once.
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
  const entry = toBatchEntry(row);
  await tx.db.update(railBatchEntries).set({
    status: outcome.kind,
    settledAt: now,
    returnCode: outcome.kind === "failed" ? outcome.returnCode ?? null : null,
  }).where(eq(railBatchEntries.id, entry.id));
  await moves.settled(tx, entry, outcome, now);
  return ok(entry);
}

/**
 * Completes at most `limit` entries of a batch still sent (their return window closed with no
 * return): the entries read and completed in one statement, their payouts and fundings by the
 * pipeline's page move. An entry returned meanwhile is no longer sent, so it is not read. Returns
 * how many it completed.
 */
export async function completeSentEntries(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  batchId: string,
  limit: number,
  at: number,
): Promise<number> {
  const entries = await takeEntries(tx, {
    set: "status = 'completed', settled_at = ?, return_code = NULL",
    setArgs: [at],
    batchId,
    from: "sent",
    limit,
  });
  if (entries.length === 0) return 0;
  await moves.completed(tx, entries, at);
  return entries.length;
}
