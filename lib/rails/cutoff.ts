/**
 * The engine's cutoff, one for every batch rail: at a rail's cutoff, a company's queued entries
 * are claimed into a built batch and the rail builds its file or batch of them. A rail brings its
 * part as a `CutoffRail`: when its cutoffs are, what it reserves for a batch (ACH: a file name and
 * traces), what it keeps of each claimed entry, its build (outside every unit) and what it keeps
 * of the build. The engine owns, for every rail alike:
 * - finding the cutoff: a job without one finds the first after it fell due (after now when that
 *   one's window already closed: a late run never builds for a past cutoff) and runs there;
 * - the claiming unit: it measures the queue (the oldest first, at most `entriesMax`, none over
 *   the cutoff's entry limit) and opens the batch; a cutoff run after its window closed builds
 *   nothing, its entries wait for the next cutoff after now;
 * - the claim, a page per unit with the event loop given its turn between: of each page the
 *   entries whose payout or funding no longer waits for them are voided (the one stale filter,
 *   `STALE_ENTRY`), the others go into the batch in queue order;
 * - overflow: the rest of a full batch goes into the next batch of the same cutoff (the cutoff
 *   travels with the job, so another node's run builds it for this cutoff too), and a run that
 *   finds another run still building its cutoff's batch comes back shortly for the same cutoff;
 * - a crash anywhere before the build was kept leaves the batch built without it: the next run of
 *   the cutoff claims on from what the batch holds and builds it.
 */
import { newId } from "../platform/keys.ts";
import {
  externalJob,
  type JobHandler,
  type RunningJob,
  yieldToEventLoop,
} from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { GroupCommitWriter, WriteTx } from "../../db/writer.ts";
import { type BatchRow, holdBatch, loadBatch, openBatch, restUnderApiTraffic } from "./batch.ts";
import {
  batchBuilt,
  type BatchJobs,
  type EngineDeps,
  plannedCutoff,
  STALE_ENTRY,
} from "./engine.ts";

/** One cutoff of a rail: when it is, and when a batch built at it must have gone. */
export interface CutoffSlot {
  /** The cutoff's instant (ms). */
  readonly at: number;
  /** The last instant a batch built at this cutoff may be transmitted: never later. */
  readonly windowEndsAt: number;
}

/** A cutoff's claim: the batch it fills, and what the rail reserved for it. */
export interface CutoffClaim<Slot extends CutoffSlot, Reservation> {
  readonly batchId: string;
  readonly companyId: string;
  readonly slot: Slot;
  /** The rail's name of the batch from the start (an ACH file's name), or null. */
  readonly railReference: string | null;
  /** When the claim ran: the batch's creation time. */
  readonly builtAt: number;
  readonly reservation: Reservation;
}

/** A rail's part of the cutoff. */
export interface CutoffRail<Slot extends CutoffSlot, Reservation, Built> {
  /** rail_batch_entries.rail of the entries it claims. */
  readonly entryRail: string;
  /** rail_batches.rail of the batches it opens. */
  readonly batchRail: string;
  /** Its cutoff job's kind (per company; its subject is the entry rail). */
  readonly cutoffJob: string;
  /** How logs name one of its batches (`ACH file`). */
  readonly label: string;
  /** The engine's jobs of its batches (their transmission, their window's end). */
  readonly jobs: BatchJobs;
  /** At most this many entries go in one batch. */
  readonly entriesMax: number;
  /** The company's cutoffs: the first strictly after (or, for a rail that takes batches any time, at) `after`. */
  cutoffs(tx: WriteTx, companyId: string): Promise<(after: number) => Slot>;
  /** The largest entry this cutoff takes (ACH's same-day limit), or null for any. */
  entryMaxCents(slot: Slot): number | null;
  /** Whether the cutoff has something for the rail besides queued entries (a check file's voids). */
  pendingBesidesEntries(tx: WriteTx, companyId: string): Promise<boolean>;
  /**
   * In the unit that opens a batch of at most `count` entries: what the rail reserves for it (ACH:
   * its file name and traces) and the batch's name, or null when nothing is built at this cutoff
   * (its entries wait for the next).
   */
  open(
    tx: WriteTx,
    opening: { readonly companyId: string; readonly slot: Slot; readonly count: number },
    now: number,
  ): Promise<{ readonly railReference: string | null; readonly reservation: Reservation } | null>;
  /** A batch whose claim is taken up again (a run stopped mid-way): its reservation, from what it holds. */
  resume(
    tx: WriteTx,
    batch: BatchRow & { readonly claimed: number },
    slot: Slot,
    now: number,
  ): Promise<Reservation>;
  /**
   * In each page's unit: what the rail keeps of the entries just claimed, in queue order
   * (`position`: how many the batch held before them).
   */
  claimed(
    tx: WriteTx,
    claim: CutoffClaim<Slot, Reservation>,
    entryIds: readonly string[],
    position: number,
  ): Promise<void>;
  /**
   * In the unit that ends the claim: what else the batch carries (a check file's voids); true when
   * it carries something, so that a batch without entries is kept.
   */
  closing(tx: WriteTx, claim: CutoffClaim<Slot, Reservation>): Promise<boolean>;
  /** Whether the batch's build was kept (a file row): a built batch without it is a claim in progress. */
  recorded(tx: WriteTx, batchId: string): Promise<boolean>;
  /** Builds the batch's file outside every unit (reads, unsealing, the file and its check). */
  build(claim: CutoffClaim<Slot, Reservation>, entries: number): Promise<Built>;
  /**
   * In the recording unit: keeps the build; answers why the batch cannot go as built (it is then
   * held with that reason), or null.
   */
  record(
    tx: WriteTx,
    claim: CutoffClaim<Slot, Reservation>,
    built: Built,
    now: number,
  ): Promise<string | null>;
}

/**
 * Entries one unit claims: 200 hold the service's thread about 2.9 ms of its CPU at load 10 (10,000
 * in one unit, 60 ms), besides the unit's commit and its fsync. 100 held it 1.9 ms, but each unit's
 * fsync (about 5 to 8 ms on a busy disk) then came twice as often: a cutoff of 3,000 took 660 ms
 * from its claim to its file's record against 400, and the file must be built within 2 s.
 */
export const CLAIM_ENTRIES_PER_UNIT_MAX = 200;

/** A cutoff's job claim: the build (reads, unsealing, the file and its check) must fit in it. */
export const CUTOFF_LEASE_MS = 5 * 60_000;

/** A cutoff that finds another run building its batch comes back this much later. */
const CUTOFF_BUSY_RETRY_MS = 5_000;

/** The rail's cutoff job as the engine schedules it. */
type CutoffJob = Pick<CutoffRail<CutoffSlot, unknown, unknown>, "cutoffJob" | "entryRail">;

/** Schedules a rail's cutoff job: at its cutoff, or (without one) due at `dueAt` to find it. */
export async function scheduleCutoff(
  tx: WriteTx,
  rail: CutoffJob,
  companyId: string,
  dueAt: number,
  slot: CutoffSlot | null,
  now: number,
): Promise<void> {
  await scheduleJob(tx, {
    companyId,
    kind: rail.cutoffJob,
    subjectId: rail.entryRail,
    dueAt,
    payload: slot === null ? {} : { slot },
  }, now);
}

/**
 * Makes sure a cutoff will take the company's queued entries, unless one is pending and not yet
 * running: at `slot` when the planner knows it, else due now to find it (a rail's schedule may be
 * in sealed settings a queueing unit cannot open).
 */
export async function ensureCutoffPlanned(
  tx: WriteTx,
  rail: CutoffJob,
  companyId: string,
  now: number,
  slot: CutoffSlot | null = null,
): Promise<void> {
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM scheduled_jobs
          WHERE company_id = ? AND done_at IS NULL AND kind = ? AND subject_id = ?
            AND lease_until IS NULL
          LIMIT 1`,
    args: [companyId, rail.cutoffJob, rail.entryRail],
  });
  if (rows.length > 0) return;
  await scheduleCutoff(tx, rail, companyId, slot?.at ?? now, slot, now);
}

function slotOf<Slot extends CutoffSlot>(job: RunningJob): Slot | null {
  const slot = job.payload.slot;
  return slot && typeof slot === "object" ? slot as Slot : null;
}

/** Which queued entries a cutoff takes: the oldest first, at most `limit`, none over `maxCents`. */
interface ClaimScope {
  readonly companyId: string;
  readonly entryRail: string;
  readonly maxCents: number | null;
  readonly limit: number;
}

const ELIGIBLE = `SELECT id, amount_cents, created_at, rowid AS queued_order
  FROM rail_batch_entries
  WHERE company_id = ? AND rail = ? AND status = 'queued' AND batch_id IS NULL
    AND (? IS NULL OR amount_cents <= ?)
  ORDER BY created_at, rowid LIMIT ?`;

const eligibleArgs = (scope: ClaimScope) => [
  scope.companyId,
  scope.entryRail,
  scope.maxCents,
  scope.maxCents,
  scope.limit,
];

/**
 * How many queued entries a cutoff would take (some may prove stale when claimed) and how many wait
 * in all, from the queue's index alone when the cutoff takes entries of any size: no entry's row
 * is read (reading 10,000 queued entries' amounts held the service's thread about 5 ms). Their
 * total is counted as the claim's pages commit.
 */
export async function measureQueue(
  tx: WriteTx,
  scope: ClaimScope,
): Promise<{ count: number; queued: number }> {
  const queuedSql = `SELECT 1 FROM rail_batch_entries
    WHERE company_id = ? AND rail = ? AND status = 'queued' AND batch_id IS NULL`;
  const queued = await tx.execute({
    sql: `SELECT count(*) AS n FROM (${queuedSql})`,
    args: [scope.companyId, scope.entryRail],
  });
  const waiting = Number(queued.rows[0].n);
  if (scope.maxCents === null) return { count: Math.min(waiting, scope.limit), queued: waiting };
  const { rows } = await tx.execute({
    sql: `SELECT count(*) AS n FROM (${queuedSql} AND amount_cents <= ? LIMIT ?)`,
    args: [scope.companyId, scope.entryRail, scope.maxCents, scope.limit],
  });
  return { count: Number(rows[0].n), queued: waiting };
}

/**
 * Claims the next page of the company's queue into the batch: of the oldest `scope.limit`
 * eligible entries, those whose payout or funding no longer waits for them are voided, and the
 * others go into the batch. Answers how many the page looked at and the claimed ones' ids in
 * queue order.
 */
async function claimQueuePage(
  tx: WriteTx,
  scope: ClaimScope,
  batchId: string,
): Promise<{ seen: number; claimed: string[]; claimedCents: number }> {
  const { rows } = await tx.execute({
    sql: `SELECT e.id, e.amount_cents, ${STALE_ENTRY} AS stale
          FROM (${ELIGIBLE}) AS q JOIN rail_batch_entries e ON e.id = q.id
          ORDER BY q.created_at, q.queued_order`,
    args: eligibleArgs(scope),
  });
  const stale = rows.filter((row) => Number(row.stale) === 1).map((row) => String(row.id));
  const freshRows = rows.filter((row) => Number(row.stale) !== 1);
  const fresh = freshRows.map((row) => String(row.id));
  if (stale.length > 0) {
    await tx.execute({
      sql: `UPDATE rail_batch_entries SET status = 'voided'
            WHERE id IN (SELECT value FROM json_each(?))`,
      args: [JSON.stringify(stale)],
    });
  }
  if (fresh.length > 0) {
    await tx.execute({
      sql: `UPDATE rail_batch_entries SET batch_id = ?, status = 'batched'
            WHERE id IN (SELECT value FROM json_each(?))`,
      args: [batchId, JSON.stringify(fresh)],
    });
  }
  return {
    seen: rows.length,
    claimed: fresh,
    claimedCents: freshRows.reduce((sum, row) => sum + Number(row.amount_cents), 0),
  };
}

/**
 * A batch's entries claimed so far and their total, counted as this run's pages commit (from the
 * batch once when a run takes up a stopped claim): closing the claim then reads none of them back
 * (counting and summing 10,000 entries held the service's thread 7 to 9 ms, and counting them
 * again at every page about as much over the claim).
 */
interface ClaimTally {
  readonly count: number;
  readonly totalCents: number;
}

/** A cutoff run's claim and its tally. */
interface ClaimRun<Slot extends CutoffSlot, Reservation> {
  readonly claim: CutoffClaim<Slot, Reservation>;
  readonly tally: ClaimTally;
}

/**
 * Ends a batch's claim: its count and total become what its entries say (entries that proved
 * stale were voided instead), and a batch left carrying nothing goes, its file never built.
 * Answers how many entries the kept batch holds, or null when it went.
 */
async function closeClaim(
  tx: WriteTx,
  batchId: string,
  carriesMore: boolean,
  { count, totalCents }: ClaimTally,
): Promise<number | null> {
  if (count === 0 && !carriesMore) {
    await tx.execute({ sql: "DELETE FROM rail_batches WHERE id = ?", args: [batchId] });
    return null;
  }
  await tx.execute({
    sql: "UPDATE rail_batches SET entry_count = ?, total_cents = ? WHERE id = ?",
    args: [count, totalCents, batchId],
  });
  return count;
}

async function claimedTally(tx: WriteTx, batchId: string): Promise<ClaimTally> {
  const { rows } = await tx.execute({
    sql: `SELECT count(*) AS n, coalesce(sum(amount_cents), 0) AS total FROM rail_batch_entries
          WHERE batch_id = ?`,
    args: [batchId],
  });
  return { count: Number(rows[0].n), totalCents: Number(rows[0].total) };
}

/** The batch while it is a build in progress (built, not held, its build not kept), else null. */
export async function batchBuilding(
  tx: WriteTx,
  rail: Pick<CutoffRail<CutoffSlot, unknown, unknown>, "recorded">,
  batchId: string,
): Promise<BatchRow | null> {
  const batch = await loadBatch(tx, batchId);
  const building = batch?.status === "built" && batch.error === null &&
    !await rail.recorded(tx, batchId);
  return building ? batch : null;
}

/** A built batch of this cutoff whose build was never kept (its claim or build was interrupted). */
async function unfinishedBatch<Slot extends CutoffSlot>(
  tx: WriteTx,
  rail: CutoffRail<Slot, unknown, unknown>,
  companyId: string,
  cutoffAt: number,
): Promise<BatchRow | null> {
  const { rows } = await tx.execute({
    sql: `SELECT id FROM rail_batches
          WHERE company_id = ? AND rail = ? AND cutoff_at = ? AND status = 'built'
            AND error IS NULL
          ORDER BY created_at, rowid`,
    args: [companyId, rail.batchRail, cutoffAt],
  });
  for (const row of rows) {
    const batch = await batchBuilding(tx, rail, String(row.id));
    if (batch) return batch;
  }
  return null;
}

/** Whether another run of the company's cutoff holds its claim (it is building a batch). */
async function anotherCutoffRunning(
  tx: WriteTx,
  rail: CutoffJob,
  job: RunningJob,
): Promise<boolean> {
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM scheduled_jobs
          WHERE company_id = ? AND kind = ? AND subject_id = ? AND id <> ? AND done_at IS NULL
            AND lease_until IS NOT NULL
          LIMIT 1`,
    args: [job.companyId, rail.cutoffJob, rail.entryRail, job.id],
  });
  return rows.length > 0;
}

function logCutoff(level: "warn" | "error", msg: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ level, msg, ...fields }));
}

/**
 * The cutoff's claiming unit: without a cutoff, the job finds its cutoff and schedules itself
 * there. At the cutoff, an interrupted claim's batch is taken up again; else the queue is measured
 * and a new built batch opened for it (the rail reserving what it needs). Null when there is
 * nothing to claim now.
 */
async function claimAtCutoff<Slot extends CutoffSlot, Reservation, Built>(
  engine: EngineDeps,
  rail: CutoffRail<Slot, Reservation, Built>,
  tx: WriteTx,
  job: RunningJob,
): Promise<ClaimRun<Slot, Reservation> | null> {
  const now = engine.policy.jobTime(job);
  const slot = slotOf<Slot>(job);
  if (slot === null) {
    const cutoffs = await rail.cutoffs(tx, job.companyId);
    const next = plannedCutoff(job, now, cutoffs);
    await scheduleCutoff(tx, rail, job.companyId, Math.max(next.at, now), next, now);
    return null;
  }
  const scope = {
    companyId: job.companyId,
    entryRail: rail.entryRail,
    maxCents: rail.entryMaxCents(slot),
    limit: rail.entriesMax,
  };
  const unfinished = await unfinishedBatch(tx, rail, job.companyId, slot.at);
  if (unfinished && await anotherCutoffRunning(tx, rail, job)) {
    // Another run (on this node or another) is building that batch right now: it is not
    // interrupted. This run comes back shortly for what is left of the same cutoff.
    await scheduleCutoff(tx, rail, job.companyId, now + CUTOFF_BUSY_RETRY_MS, slot, now);
    return null;
  }
  if (unfinished) {
    // Entries queued since the interrupted claim saw this job pending: the rest of a full batch
    // stays in this cutoff, others wait for the next one.
    if ((await measureQueue(tx, scope)).queued > 0) {
      const full = unfinished.entryCount >= rail.entriesMax;
      await scheduleCutoff(tx, rail, job.companyId, now, full ? slot : null, now);
    }
    const tally = await claimedTally(tx, unfinished.id);
    const claim = {
      batchId: unfinished.id,
      companyId: job.companyId,
      slot,
      railReference: unfinished.railReference,
      builtAt: unfinished.createdAt,
      reservation: await rail.resume(tx, { ...unfinished, claimed: tally.count }, slot, now),
    };
    return { claim, tally };
  }
  if (now >= slot.windowEndsAt) {
    // Run after its window closed (the service was down): a batch now would go late, so nothing
    // is built and the entries wait for the next cutoff after now.
    logCutoff("warn", `a cutoff ran after its window closed: its entries wait for the next one`, {
      rail: rail.batchRail,
      company_id: job.companyId,
      cutoff_at: new Date(slot.at).toISOString(),
    });
    await scheduleCutoff(tx, rail, job.companyId, now, null, now);
    return null;
  }
  const queue = await measureQueue(tx, scope);
  if (queue.count === 0 && !await rail.pendingBesidesEntries(tx, job.companyId)) {
    // Entries too large for this cutoff wait for the next one that takes them.
    if (queue.queued > 0) await scheduleCutoff(tx, rail, job.companyId, now, null, now);
    return null;
  }
  const opened = await rail.open(tx, { companyId: job.companyId, slot, count: queue.count }, now);
  if (opened === null) {
    if (queue.queued > 0) await scheduleCutoff(tx, rail, job.companyId, now, null, now);
    return null;
  }
  const batchId = newId("rbt");
  await openBatch(tx, {
    id: batchId,
    companyId: job.companyId,
    rail: rail.batchRail,
    entryCount: queue.count,
    // Its total is its claimed entries', none yet: each page's unit adds its own.
    totalCents: 0,
    cutoffAt: slot.at,
    railReference: opened.railReference,
    createdAt: now,
  });
  if (queue.queued > queue.count) {
    // A full batch: the rest go into the next batch of the same cutoff (its slot travels with the
    // job, so another node's run builds it for this cutoff too); otherwise the next cutoff.
    const full = queue.count === rail.entriesMax;
    await scheduleCutoff(tx, rail, job.companyId, now, full ? slot : null, now);
  }
  const claim = {
    batchId,
    companyId: job.companyId,
    slot,
    railReference: opened.railReference,
    builtAt: now,
    reservation: opened.reservation,
  };
  return { claim, tally: { count: 0, totalCents: 0 } };
}

/**
 * A claim page's unit: the batch's tally after it while more is to be claimed, else the end. The
 * batch's total is its claimed entries' after every page.
 */
async function claimPage<Slot extends CutoffSlot, Reservation>(
  tx: WriteTx,
  rail: CutoffRail<Slot, Reservation, unknown>,
  { claim, tally }: ClaimRun<Slot, Reservation>,
): Promise<{ done: false; tally: ClaimTally } | { done: true; entries: number | null }> {
  const batch = await batchBuilding(tx, rail, claim.batchId);
  if (!batch) return { done: true, entries: null };
  const sofar = tally.count;
  const wanted = Math.min(CLAIM_ENTRIES_PER_UNIT_MAX, batch.entryCount - sofar);
  let after = tally;
  if (wanted > 0) {
    const page = await claimQueuePage(tx, {
      companyId: claim.companyId,
      entryRail: rail.entryRail,
      maxCents: rail.entryMaxCents(claim.slot),
      limit: wanted,
    }, claim.batchId);
    if (page.claimed.length > 0) await rail.claimed(tx, claim, page.claimed, sofar);
    after = {
      count: tally.count + page.claimed.length,
      totalCents: tally.totalCents + page.claimedCents,
    };
    // Stale entries were voided: more of the queue may still fit.
    if (page.seen === wanted && sofar + page.claimed.length < batch.entryCount) {
      await tx.execute({
        sql: "UPDATE rail_batches SET total_cents = ? WHERE id = ?",
        args: [after.totalCents, claim.batchId],
      });
      return { done: false, tally: after };
    }
  }
  const carriesMore = await rail.closing(tx, claim);
  return { done: true, entries: await closeClaim(tx, claim.batchId, carriesMore, after) };
}

/** What a cutoff's paging writes with, and whether the API is answering requests meanwhile. */
export interface CutoffPaging {
  readonly writer: GroupCommitWriter;
  readonly apiBusy: () => boolean;
}

/**
 * The cutoff's entries, claimed a page per unit with the event loop given its turn before each
 * (and, under API traffic, the send's rest after each: `restUnderApiTraffic`). Answers how many
 * entries the batch holds once claimed, or null when it is no longer a build in progress (voided
 * by an operator, recorded by another run, or left carrying nothing).
 */
async function claimEntries<Slot extends CutoffSlot, Reservation>(
  paging: CutoffPaging,
  rail: CutoffRail<Slot, Reservation, unknown>,
  run: ClaimRun<Slot, Reservation>,
): Promise<number | null> {
  // The tally moves only once a page's unit committed.
  let tally = run.tally;
  for (;;) {
    // The claiming unit just held the thread: requests go first, before every page.
    await yieldToEventLoop();
    const started = performance.now();
    const progress = await paging.writer.write((tx) =>
      claimPage(tx, rail, { claim: run.claim, tally })
    );
    if (progress.done) return progress.entries;
    tally = progress.tally;
    await restUnderApiTraffic(started, paging.apiBusy);
  }
}

/** What the cutoff's call answers: the build, or nothing when the batch is no longer claimed. */
type CutoffBuild<Built> = { readonly built: Built } | null;

/** The recording unit: the build is kept and the batch's transmission scheduled, or it is held. */
async function recordBuild<Slot extends CutoffSlot, Reservation, Built>(
  engine: EngineDeps,
  rail: CutoffRail<Slot, Reservation, Built>,
  tx: WriteTx,
  job: RunningJob,
  claim: CutoffClaim<Slot, Reservation>,
  build: CutoffBuild<Built>,
): Promise<void> {
  const batch = await batchBuilding(tx, rail, claim.batchId);
  // Another run recorded or held it first, or an operator voided it meanwhile.
  if (!batch || build === null) return;
  const now = engine.policy.jobTime(job);
  const refused = await rail.record(tx, claim, build.built, now);
  if (refused !== null) {
    await holdBatch(tx, batch.id, refused);
    const article = /^[AEIOU]/i.test(rail.label) ? "an" : "a";
    logCutoff(
      "error",
      `${article} ${rail.label} was not released: void it to queue its entries again`,
      {
        batch_id: batch.id,
        company_id: batch.companyId,
        error: refused,
      },
    );
    return;
  }
  await batchBuilt(tx, rail.jobs, batch, claim.slot.windowEndsAt, now);
}

/**
 * A rail's cutoff job: the claiming unit (`claimAtCutoff`), then outside every unit the claim a
 * page per unit and the rail's build, then the recording unit.
 */
export function cutoffJobHandler<Slot extends CutoffSlot, Reservation, Built>(
  engine: EngineDeps,
  rail: CutoffRail<Slot, Reservation, Built>,
  paging: CutoffPaging,
): JobHandler {
  type Claim = CutoffClaim<Slot, Reservation>;
  return externalJob<ClaimRun<Slot, Reservation>, { claim: Claim; build: CutoffBuild<Built> }>({
    leaseMs: CUTOFF_LEASE_MS,
    prepare: (tx, job) => claimAtCutoff(engine, rail, tx, job),
    call: async (run) => {
      const { claim } = run;
      const entries = await claimEntries(paging, rail, run);
      if (entries === null) return { claim, build: null };
      // Building may start a worker, which holds the thread: not right after the last page.
      await yieldToEventLoop();
      return { claim, build: { built: await rail.build(claim, entries) } };
    },
    record: (tx, job, { claim, build }) => recordBuild(engine, rail, tx, job, claim, build),
  }) as JobHandler;
}
