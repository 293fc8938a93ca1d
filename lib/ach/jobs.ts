/**
 * The ACH rail's own jobs; its files' release, transmission, window and in-doubt resolution are
 * the rail engine's (lib/rails/engine.ts, through the adapter in rail.ts). `rail.cutoff` (per
 * company): measures the queue and opens the batch in one short unit, claims its entries and
 * their traces a page per unit, builds and checks the NACHA file outside every unit (in a worker
 * for a large one), and keeps it in a last unit; a crash anywhere between finds the batch again,
 * claims on and builds the same file. A cutoff run after its window closed (the service was
 * down) builds nothing: its entries wait for the next cutoff after now. `ach.send` (per file)
 * sends a large file's entries a bounded number per unit; `ach.settle` (per file): at the end of
 * the return window, every entry still sent completes.
 */
import {
  externalJob,
  type JobHandler,
  type RunningJob,
  yieldToEventLoop,
} from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { holdBehindOutcomeReaders } from "../rails/outcome_fence.ts";
import { INBOUND_POLL_JOB } from "./inbound.ts";
import { SANDBOX_RETURNS_JOB } from "./sandbox_bank.ts";
import type { WriteTx } from "../../db/writer.ts";
import { newId } from "../platform/keys.ts";
import {
  BATCH_ENTRIES_MAX,
  type BatchPayoutMoves,
  type BatchRow,
  holdBatch,
  loadBatch,
  openBatch,
  sendTransmittedEntries,
  settleBatchEntry,
} from "../rails/batch.ts";
import { batchBuilt, plannedCutoff } from "../rails/engine.ts";
import { type BankSettings, SAME_DAY_ENTRY_MAX_CENTS } from "./bank_settings.ts";
import { type CutoffSlot, nextCutoffSlot } from "./cutoffs.ts";
import { buildFile, type BuiltFile, type FileClaim } from "./file_build.ts";
import {
  ACH_BATCH_JOBS,
  ACH_RAIL,
  claimedSoFar,
  claimQueuePage,
  closeClaim,
  countFilesNamed,
  findUnfinishedBatch,
  insertAchFile,
  loadAchFile,
  measureQueue,
  recordEntryFacts,
  recordSandboxAccounts,
  reserveTraceSequences,
  scheduleCutoff,
  sentReferences,
  setFundingsExpectedAt,
} from "./files_store.ts";
import { fileIdModifierAt } from "./nacha.ts";
import { achFileName, achFileNamePrefix } from "./file_model.ts";
import { type AchRailDeps, achSettingsOf } from "./rail.ts";
import type { FileWorkerAnswer, FileWorkerRequest } from "./file_worker.ts";

/** The job that completes a transmitted file's entries at the end of their return window. */
export const ACH_SETTLE_JOB = "ach.settle";
/** The job that sends the entries of a large transmitted file, a bounded number per unit. */
export const ACH_SEND_JOB = "ach.send";

/** A cutoff's claim: its build (reads, unsealing, the file and its check) must fit in it. */
export const CUTOFF_LEASE_MS = 5 * 60_000;

/**
 * Entries one unit sends or completes; a larger file goes over several units, so the one writer
 * is never held for a whole catastrophe day's file. Each payout moved costs about 1 ms of the
 * service's thread (its ledger transaction, payout row, timeline row and event, on the
 * synchronous embedded database), so a unit of 100 holds it about 0.1 s and requests are answered
 * between units (db/scheduler.ts yields); units of 500 held it 0.4 to 0.5 s each.
 */
export const SETTLE_ENTRIES_PER_UNIT_MAX = 100;

/**
 * Entries one unit claims into a file: 200 hold the service's thread about 1.5 ms (a catastrophe
 * day's 10,000 in one unit held it 60 ms); smaller pages lengthen the cutoff for little gain.
 */
export const CLAIM_ENTRIES_PER_UNIT_MAX = 200;
export const SEND_ENTRIES_PER_UNIT_MAX = 100;

/** A cutoff that finds another run building its file comes back this much later. */
const CUTOFF_BUSY_RETRY_MS = 5_000;

/** Whether another run of the company's cutoff holds its claim (it is building a file). */
async function anotherCutoffRunning(tx: WriteTx, job: RunningJob): Promise<boolean> {
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM scheduled_jobs
          WHERE company_id = ? AND kind = 'rail.cutoff' AND id <> ? AND done_at IS NULL
            AND lease_until IS NOT NULL
          LIMIT 1`,
    args: [job.companyId, job.id],
  });
  return rows.length > 0;
}

/** Offset entries a file may carry (one per batch: PPD credits, CCD credits, CCD debits). */
const OFFSET_TRACES_MAX = 3;

function slotOf(job: RunningJob): CutoffSlot | null {
  const slot = job.payload.slot;
  return slot && typeof slot === "object" ? slot as CutoffSlot : null;
}

const scheduleOf = (settings: BankSettings) => ({
  timeZone: settings.timeZone,
  cutoffs: settings.cutoffs,
  transmitWindowMinutes: settings.transmitWindowMinutes,
});

/**
 * The cutoff's claiming unit: without a slot, the job finds its cutoff and schedules itself
 * there. At the cutoff, the queued entries it may take (same-day: none over the same-day limit)
 * are measured and a new built batch reserves their traces and claims the first page of them,
 * set-based; an interrupted build's batch is taken up again instead. Null when there is nothing
 * to build.
 */
async function claimFile(
  deps: AchRailDeps,
  tx: WriteTx,
  job: RunningJob,
): Promise<FileClaim | null> {
  const settings = await achSettingsOf(deps, tx, job.companyId);
  const now = deps.policy.jobTime(job);
  const slot = slotOf(job);
  if (slot === null) {
    const next = plannedCutoff(job, now, (at) => nextCutoffSlot(scheduleOf(settings), at));
    await scheduleCutoff(tx, job.companyId, next.at, next, now);
    return null;
  }
  const entriesMax = deps.batchEntriesMax ?? BATCH_ENTRIES_MAX;
  const scope = {
    companyId: job.companyId,
    maxCents: slot.kind === "same_day" ? SAME_DAY_ENTRY_MAX_CENTS : null,
    limit: entriesMax,
  };
  const odfi = settings.odfiRouting.slice(0, 8);
  const unfinished = await findUnfinishedBatch(tx, job.companyId, slot.at);
  if (unfinished && await anotherCutoffRunning(tx, job)) {
    // Another run (on this node or another) is building that file right now: it is not
    // interrupted. This run comes back shortly for what is left of the same cutoff.
    await scheduleCutoff(tx, job.companyId, now + CUTOFF_BUSY_RETRY_MS, slot, now);
    return null;
  }
  if (unfinished) {
    // Entries queued since the interrupted claim saw this job pending: the rest of a full file
    // stays in this cutoff, others wait for the next one.
    if ((await measureQueue(tx, scope)).queued > 0) {
      const full = unfinished.entryCount >= entriesMax;
      await scheduleCutoff(tx, job.companyId, now, full ? slot : null, now);
    }
    const sofar = await claimedSoFar(tx, unfinished.id);
    return {
      batchId: unfinished.id,
      companyId: job.companyId,
      slot,
      settings,
      fileName: unfinished.fileName,
      fileIdModifier: unfinished.fileName.slice(-5, -4),
      // Interrupted before its first page: its traces are reserved again (a gap is harmless).
      firstSequence: sofar.count > 0 ? sofar.lastSequence + 1 : await reserveTraceSequences(
        tx,
        odfi,
        unfinished.entryCount + OFFSET_TRACES_MAX,
        now,
      ),
    };
  }
  if (now >= slot.windowEndsAt) {
    // Run after its window closed (the service was down): a file now would go late with dates
    // already past, so nothing is built and the entries wait for the next cutoff after now.
    console.error(JSON.stringify({
      level: "warn",
      msg: "an ACH cutoff ran after its window closed: its entries wait for the next cutoff",
      company_id: job.companyId,
      cutoff_at: new Date(slot.at).toISOString(),
    }));
    await scheduleCutoff(tx, job.companyId, now, null, now);
    return null;
  }
  const prefix = achFileNamePrefix(settings.immediateOrigin, slot.bankDate);
  const fileIdModifier = fileIdModifierAt(await countFilesNamed(tx, prefix));
  const queue = await measureQueue(tx, scope);
  if (fileIdModifier === null || queue.count === 0) {
    if (fileIdModifier === null) {
      console.error(JSON.stringify({
        level: "error",
        msg: "every file ID modifier of the day is used: the entries wait for the next cutoff",
        company_id: job.companyId,
        bank_date: slot.bankDate,
      }));
    }
    // Entries too large for a same-day cutoff wait for the next one that takes them.
    if (queue.queued > 0) await scheduleCutoff(tx, job.companyId, now, null, now);
    return null;
  }
  const firstSequence = await reserveTraceSequences(
    tx,
    odfi,
    queue.count + OFFSET_TRACES_MAX,
    now,
  );
  const batchId = newId("rbt");
  const fileName = achFileName(settings.immediateOrigin, slot.bankDate, fileIdModifier);
  await openBatch(tx, {
    id: batchId,
    companyId: job.companyId,
    rail: ACH_RAIL,
    entryCount: queue.count,
    totalCents: queue.totalCents,
    cutoffAt: slot.at,
    railReference: fileName,
    createdAt: now,
  });
  if (queue.queued > queue.count) {
    // A full file: the rest go into the next file of the same cutoff (its slot travels with the
    // job, so another node's run builds it for this cutoff too); otherwise the next cutoff.
    const full = queue.count === entriesMax;
    await scheduleCutoff(tx, job.companyId, full ? slot.at : now, full ? slot : null, now);
  }
  return {
    batchId,
    companyId: job.companyId,
    slot,
    settings,
    fileName,
    fileIdModifier,
    firstSequence,
  };
}

/**
 * The cutoff's entries, claimed a page per unit with the event loop given its turn between (a
 * catastrophe day's 10,000 in one unit held the service's thread 60 ms). Each page takes the
 * oldest eligible entries, up to what the batch was measured to hold, voids those that proved
 * stale and gives the others the next traces of the batch's reserved range; a run taken up after
 * a crash goes on from what the batch holds. Answers how many entries the batch holds once
 * claimed (none: the batch is gone), or null when it is no longer a build in progress (voided by
 * an operator, or recorded by another run).
 */
async function claimEntries(deps: AchRailDeps, claim: FileClaim): Promise<number | null> {
  for (;;) {
    // The claiming unit just held the thread: requests go first, before every page.
    await yieldToEventLoop();
    const progress = await deps.database.writer.write((tx) => claimPage(tx, claim));
    if (progress.done) return progress.entries;
  }
}

async function claimPage(
  tx: WriteTx,
  claim: FileClaim,
): Promise<{ done: false } | { done: true; entries: number | null }> {
  const batch = await batchBuilding(tx, claim.batchId);
  if (!batch) return { done: true, entries: null };
  const sofar = await claimedSoFar(tx, claim.batchId);
  const wanted = Math.min(CLAIM_ENTRIES_PER_UNIT_MAX, batch.entryCount - sofar.count);
  if (wanted > 0) {
    const page = await claimQueuePage(tx, {
      companyId: claim.companyId,
      maxCents: claim.slot.kind === "same_day" ? SAME_DAY_ENTRY_MAX_CENTS : null,
      limit: wanted,
    }, {
      batchId: claim.batchId,
      odfi: claim.settings.odfiRouting.slice(0, 8),
      firstSequence: sofar.count > 0 ? sofar.lastSequence + 1 : claim.firstSequence,
      effectiveDate: claim.slot.effectiveDate,
    });
    // Stale entries were voided: more of the queue may still fit.
    if (page.seen === wanted && sofar.count + page.claimed < batch.entryCount) {
      return { done: false };
    }
  }
  const entries = await closeClaim(tx, claim.batchId);
  return { done: true, entries: entries === 0 ? null : entries };
}

/**
 * Files of at least this many entries are built in a worker: reading, unsealing, writing and
 * checking take about 0.015 ms per entry, and a worker's start holds the thread about 9 ms, so a
 * smaller file is built here in a few milliseconds.
 */
export const FILE_WORKER_ENTRIES_MIN = 300;

/** The build (file_build.ts), in a worker for a large file. */
async function buildClaimedFile(
  deps: AchRailDeps,
  claim: FileClaim,
  entries: number,
): Promise<BuiltFile> {
  if (entries < FILE_WORKER_ENTRIES_MIN) {
    return await buildFile({
      reader: deps.database.readClient,
      secretBox: deps.secretBox,
      sandboxTestAccounts: deps.sandboxBank?.testAccounts ?? false,
    }, claim);
  }
  const request: FileWorkerRequest = {
    reader: deps.database.readerOptions,
    keyBase64: deps.secretBox.keyForWorker(),
    sandboxTestAccounts: deps.sandboxBank?.testAccounts ?? false,
    claim,
  };
  const worker = new Worker(new URL("./file_worker.ts", import.meta.url), { type: "module" });
  try {
    const answer = await new Promise<FileWorkerAnswer>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<FileWorkerAnswer>) => {
        resolve(event.data);
      };
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(`the file worker failed: ${event.message}`));
      };
      worker.postMessage(request);
    });
    if (!answer.ok) throw new Error(`the file worker failed: ${answer.error}`);
    return answer.built;
  } finally {
    worker.terminate();
  }
}

/**
 * The cutoff's call, outside the claiming and recording units: its entries claimed, the file
 * built and checked, and the entries' facts (and the sandbox test accounts used) kept a
 * page per unit, each only while the batch is still this build's. A crash anywhere here leaves
 * the batch built without a file: the next run claims on and builds the same file again.
 */
async function claimAndBuild(deps: AchRailDeps, claim: FileClaim): Promise<BuiltFile> {
  const entries = await claimEntries(deps, claim);
  // Voided, recorded or emptied meanwhile: the recording unit finds it so and does nothing.
  if (entries === null) return { ok: false, batchId: claim.batchId, error: "no longer built" };
  // Starting a worker holds the thread about 9 ms: not right after the last claiming unit.
  await yieldToEventLoop();
  const built = await buildClaimedFile(deps, claim, entries);
  if (!built.ok) return built;
  for (const page of built.pages) {
    await yieldToEventLoop();
    await deps.database.writer.write(async (tx) => {
      if (!await batchBuilding(tx, claim.batchId)) return;
      await recordEntryFacts(tx, page.facts);
      if (page.sandboxAccounts !== null) await recordSandboxAccounts(tx, page.sandboxAccounts);
    });
  }
  return built;
}

/** The batch while it is a build in progress (built, not held, without its file), else null. */
async function batchBuilding(tx: WriteTx, batchId: string): Promise<BatchRow | null> {
  const batch = await loadBatch(tx, batchId);
  const building = batch?.status === "built" && batch.error === null &&
    !await loadAchFile(tx, batchId);
  return building ? batch : null;
}

/** The recording unit: the file is kept and its transmission scheduled; a refused file is held. */
async function recordFile(
  deps: AchRailDeps,
  tx: WriteTx,
  job: RunningJob,
  built: BuiltFile,
): Promise<void> {
  const batch = await batchBuilding(tx, built.batchId);
  // Another run recorded or held it first, or an operator voided it meanwhile.
  if (!batch) return;
  if (!built.ok) {
    await holdBatch(tx, built.batchId, built.error);
    console.error(JSON.stringify({
      level: "error",
      msg:
        "an ACH file was not released: it does not match the database (void it to queue its entries again)",
      batch_id: built.batchId,
      company_id: batch.companyId,
      error: built.error,
    }));
    return;
  }
  await insertAchFile(tx, built.row);
  await setFundingsExpectedAt(tx, built.batchId, built.settlesAt);
  const now = deps.policy.jobTime(job);
  await batchBuilt(tx, ACH_BATCH_JOBS, batch, built.row.windowEndsAt, now);
}

/** Sends a bounded number of a transmitted file's entries; the rest in the next `ach.send`. */
export async function sendEntries(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  companyId: string,
  batchId: string,
  at: number,
): Promise<void> {
  const sent = await sendTransmittedEntries(tx, moves, batchId, SEND_ENTRIES_PER_UNIT_MAX, at);
  if (sent < SEND_ENTRIES_PER_UNIT_MAX) return;
  await scheduleJob(tx, { companyId, kind: ACH_SEND_JOB, subjectId: batchId, dueAt: at }, at);
}

/** The jobs that read a company's ACH returns from outside: a settlement waits for them. */
export const ACH_OUTCOME_READERS: readonly string[] = [SANDBOX_RETURNS_JOB, INBOUND_POLL_JOB];

/**
 * Completes a transmitted file's entries still sent, a bounded number per unit, once no return
 * read before its time is still being imported (lib/rails/outcome_fence.ts).
 */
async function settleFile(moves: BatchPayoutMoves, tx: WriteTx, job: RunningJob): Promise<void> {
  if (await holdBehindOutcomeReaders(tx, job, ACH_OUTCOME_READERS)) return;
  const references = await sentReferences(tx, job.subjectId, SETTLE_ENTRIES_PER_UNIT_MAX);
  for (const reference of references) {
    const settled = await settleBatchEntry(tx, moves, reference, { kind: "completed" }, job.dueAt);
    if (!settled.ok) throw new Error(`ach.settle ${job.subjectId}: ${settled.message}`);
  }
  if (references.length === SETTLE_ENTRIES_PER_UNIT_MAX) {
    await scheduleJob(tx, {
      companyId: job.companyId,
      kind: ACH_SETTLE_JOB,
      subjectId: job.subjectId,
      dueAt: job.dueAt,
    }, job.dueAt);
  }
}

/** The handlers of the ACH rail's own jobs. */
export function achJobHandlers(
  deps: AchRailDeps,
  moves: BatchPayoutMoves,
): Readonly<Record<string, JobHandler>> {
  return {
    "rail.cutoff": externalJob<FileClaim, BuiltFile>({
      leaseMs: CUTOFF_LEASE_MS,
      prepare: (tx, job) => claimFile(deps, tx, job),
      call: (claim) => claimAndBuild(deps, claim),
      record: (tx, job, built) => recordFile(deps, tx, job, built),
    }),
    [ACH_SEND_JOB]: (tx, job) => sendEntries(tx, moves, job.companyId, job.subjectId, job.dueAt),
    [ACH_SETTLE_JOB]: (tx, job) => settleFile(moves, tx, job),
  };
}
