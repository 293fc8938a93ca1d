/**
 * The ACH rail's own jobs; its cutoff (the claim, a page per unit), its files' release,
 * transmission, window and in-doubt resolution are the rail engine's (lib/rails/cutoff.ts and
 * lib/rails/engine.ts). What ACH brings to the cutoff (`rail.cutoff`, per company): a file name
 * and a range of traces reserved when the batch opens, each claimed entry's trace and effective
 * date, and the NACHA file built and checked outside every unit (in a worker for a large one)
 * with its entries' facts kept a page per unit. `ach.send` (per file)
 * sends the rest of a large file's entries, a bounded number per unit with requests answered
 * between units; `ach.settle` (per file): at the end of the return window, every entry still sent
 * completes.
 */
import { externalJob, type JobHandler, yieldToEventLoop } from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { holdBehindOutcomeReaders, outcomeReadersIdle } from "../rails/outcome_fence.ts";
import { INBOUND_POLL_JOB } from "./inbound.ts";
import { SANDBOX_RETURNS_JOB } from "./sandbox_bank.ts";
import { ACH_IMPORT_RESUME_JOB } from "./import_rules.ts";
import type { WriteTx } from "../../db/writer.ts";
import {
  BATCH_ENTRIES_MAX,
  BATCH_TRANSMIT_LEASE_MS,
  batchEntries,
  type BatchPayoutMoves,
  type BatchSend,
  batchSendJob,
  completeSentEntries,
  inUnits,
  restUnderApiTraffic,
  SEND_ENTRIES_PER_UNIT_MAX,
} from "../rails/batch.ts";
import {
  batchBuilding,
  type CutoffClaim,
  cutoffJobHandler,
  type CutoffRail,
} from "../rails/cutoff.ts";
import { type BankSettings, SAME_DAY_ENTRY_MAX_CENTS } from "./bank_settings.ts";
import { type CutoffSlot, nextCutoffSlot } from "./cutoffs.ts";
import {
  buildFile,
  type BuiltFile,
  type FileClaim,
  type OpenedFile,
  openKeptContent,
} from "./file_build.ts";
import {
  ACH_CUTOFF,
  countFilesNamed,
  filePiecesOf,
  giveTraces,
  insertAchFile,
  keepFilePiece,
  loadAchFile,
  loadAchFileSummary,
  recordEntryFacts,
  recordSandboxAccounts,
  reserveTraceSequences,
  setFundingsExpectedAt,
} from "./files_store.ts";
import { fileIdModifierAt } from "./nacha.ts";
import { workerModuleUrl } from "../platform/service_files.ts";
import { achFileName, achFileNamePrefix } from "./file_model.ts";
import { type AchRailDeps, achSettingsOf } from "./rail.ts";
import type { FileWorkerAnswer, FileWorkerRequest } from "./file_worker.ts";

/** The job that completes a transmitted file's entries at the end of their return window. */
export const ACH_SETTLE_JOB = "ach.settle";
/**
 * The job that sends the rest of a large transmitted file's entries, a bounded number per unit
 * with requests answered between units (one job for the whole file, its claim held meanwhile).
 */
export const ACH_SEND_JOB = "ach.send";

/** Offset entries a file may carry (one per batch: PPD credits, CCD credits, CCD debits). */
const OFFSET_TRACES_MAX = 3;

/** What an ACH cutoff reserves for its file: its settings, its name and its traces. */
interface FileReservation {
  readonly settings: BankSettings;
  readonly fileName: string;
  readonly fileIdModifier: string;
  /** The first trace sequence of the batch's reserved range. */
  readonly firstSequence: number;
}

type AchClaim = CutoffClaim<CutoffSlot, FileReservation>;

const scheduleOf = (settings: BankSettings) => ({
  timeZone: settings.timeZone,
  cutoffs: settings.cutoffs,
  transmitWindowMinutes: settings.transmitWindowMinutes,
});

const odfiOf = (settings: BankSettings) => settings.odfiRouting.slice(0, 8);

/** The last trace sequence a batch's entries took, or 0 for none. */
async function lastSequenceOf(tx: WriteTx, batchId: string): Promise<number> {
  const { rows } = await tx.execute({
    sql: "SELECT max(trace_number) AS last FROM rail_batch_entries WHERE batch_id = ?",
    args: [batchId],
  });
  return rows[0].last === null ? 0 : Number(String(rows[0].last).slice(8));
}

/** What the ACH rail brings to the engine's cutoff: NACHA files, their names and traces. */
function achCutoffRail(
  deps: AchRailDeps,
): CutoffRail<CutoffSlot, FileReservation, BuiltFile> {
  return {
    ...ACH_CUTOFF,
    entriesMax: deps.batchEntriesMax ?? BATCH_ENTRIES_MAX,
    async cutoffs(tx, companyId) {
      const schedule = scheduleOf(await achSettingsOf(deps, tx, companyId));
      return (after) => nextCutoffSlot(schedule, after);
    },
    // A same-day cutoff takes no entry over the same-day limit: it waits for a next-day one.
    entryMaxCents: (slot) => slot.kind === "same_day" ? SAME_DAY_ENTRY_MAX_CENTS : null,
    pendingBesidesEntries: () => Promise.resolve(false),
    async open(tx, { companyId, slot, count }, now) {
      const settings = await achSettingsOf(deps, tx, companyId);
      const prefix = achFileNamePrefix(settings.immediateOrigin, slot.bankDate);
      const fileIdModifier = fileIdModifierAt(await countFilesNamed(tx, prefix));
      if (fileIdModifier === null) {
        console.error(JSON.stringify({
          level: "error",
          msg: "every file ID modifier of the day is used: the entries wait for the next cutoff",
          company_id: companyId,
          bank_date: slot.bankDate,
        }));
        return null;
      }
      const fileName = achFileName(settings.immediateOrigin, slot.bankDate, fileIdModifier);
      const firstSequence = await reserveTraceSequences(
        tx,
        odfiOf(settings),
        count + OFFSET_TRACES_MAX,
        now,
      );
      return {
        railReference: fileName,
        reservation: { settings, fileName, fileIdModifier, firstSequence },
      };
    },
    async resume(tx, batch, _slot, now) {
      const settings = await achSettingsOf(deps, tx, batch.companyId);
      const fileName = String(batch.railReference);
      const base = { settings, fileName, fileIdModifier: fileName.slice(-5, -4) };
      if (batch.claimed > 0) {
        const last = await lastSequenceOf(tx, batch.id);
        return { ...base, firstSequence: last - batch.claimed + 1 };
      }
      // Interrupted before its first page: its traces are reserved again (a gap is harmless).
      const firstSequence = await reserveTraceSequences(
        tx,
        odfiOf(settings),
        batch.entryCount + OFFSET_TRACES_MAX,
        now,
      );
      return { ...base, firstSequence };
    },
    claimed: (tx, claim, entryIds, position) =>
      giveTraces(tx, entryIds, {
        odfi: odfiOf(claim.reservation.settings),
        firstSequence: claim.reservation.firstSequence + position,
        effectiveDate: claim.slot.effectiveDate,
      }),
    closing: () => Promise.resolve(false),
    recorded: async (tx, batchId) => await loadAchFileSummary(tx, batchId) !== null,
    build: (claim, entries) => buildAndKeepFacts(deps, fileClaimOf(claim), entries),
    record: (tx, claim, built) => recordFile(tx, claim, built),
  };
}

const fileClaimOf = (claim: AchClaim): FileClaim => ({
  batchId: claim.batchId,
  companyId: claim.companyId,
  slot: claim.slot,
  settings: claim.reservation.settings,
  fileName: claim.reservation.fileName,
  fileIdModifier: claim.reservation.fileIdModifier,
  firstSequence: claim.reservation.firstSequence,
});

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
  const answer = await askFileWorker({
    kind: "build",
    reader: deps.database.readerOptions,
    keyBase64: deps.secretBox.keyForWorker(),
    sandboxTestAccounts: deps.sandboxBank?.testAccounts ?? false,
    claim,
  });
  if (!("built" in answer)) throw new Error("the file worker answered no build");
  return answer.built;
}

/**
 * A kept file read, opened and found to be the file its build checked, before its transmission
 * (file_build.ts), outside every unit, in a worker for a large one: reading a catastrophe day's
 * sealed content (about 1.25 MB), unsealing and hashing it take about 9 ms of CPU, which would
 * hold the service's thread in the transmission's short phase.
 */
export async function openKeptFile(
  deps: Pick<AchRailDeps, "secretBox" | "database">,
  file: { readonly batchId: string; readonly entryCount: number },
): Promise<OpenedFile> {
  if (file.entryCount < FILE_WORKER_ENTRIES_MIN) {
    const kept = await loadAchFile(deps.database.readClient, file.batchId);
    if (!kept) throw new Error(`ACH batch ${file.batchId} has no file`);
    return await openKeptContent(deps.secretBox, kept);
  }
  const answer = await askFileWorker({
    kind: "open",
    reader: deps.database.readerOptions,
    keyBase64: deps.secretBox.keyForWorker(),
    batchId: file.batchId,
  });
  if (!("opened" in answer)) throw new Error("the file worker answered no opened file");
  return answer.opened;
}

/**
 * How long a file worker is kept after a build, for the opening of the same file before its
 * upload, which follows at once: a worker's start holds the service's thread while its runtime is
 * created (9 to 18 ms at load 5; 177 ms once at load 6, the new thread waiting for a core), and a
 * cutoff otherwise started two, one of them in its short transmitted phase.
 */
export const FILE_WORKER_KEPT_MS = 10_000;

/** The worker kept since the last build, and the timer that ends it (none: kept for life), or null. */
let keptWorker: {
  readonly worker: Worker;
  readonly timer: ReturnType<typeof setTimeout> | null;
} | null = null;

/** Whether this process keeps a file worker for its life (a service, from its start). */
let keptForLife = false;

const newFileWorker = () =>
  new Worker(workerModuleUrl("lib/ach/file_worker.ts"), { type: "module" });

/** The kept worker, or a new one. */
function takeFileWorker(): Worker {
  if (keptWorker === null) return newFileWorker();
  const { worker, timer } = keptWorker;
  if (timer !== null) clearTimeout(timer);
  keptWorker = null;
  return worker;
}

/**
 * Keeps a worker that answered, for FILE_WORKER_KEPT_MS or for the process's life (one at most:
 * another is terminated).
 */
function keepFileWorker(worker: Worker): void {
  if (keptWorker !== null) return worker.terminate();
  if (keptForLife) {
    keptWorker = { worker, timer: null };
    return;
  }
  const timer = setTimeout(() => {
    if (keptWorker?.worker !== worker) return;
    keptWorker = null;
    worker.terminate();
  }, FILE_WORKER_KEPT_MS);
  // The worker itself keeps the process alive until its timer ends it.
  Deno.unrefTimer(Number(timer));
  keptWorker = { worker, timer };
}

/**
 * A service starts its file worker with its other workers and keeps it for its life, so that no
 * cutoff starts one: the start holds the service's thread (see FILE_WORKER_KEPT_MS) once, half a
 * second after the API answers, not in the middle of a cutoff.
 */
export function startFileWorker(): void {
  keptForLife = true;
  if (keptWorker === null) keepFileWorker(newFileWorker());
}

/** Ends the file worker kept for the process's life; later files start their own again. */
export function stopFileWorker(): void {
  keptForLife = false;
  if (keptWorker === null) return;
  if (keptWorker.timer !== null) clearTimeout(keptWorker.timer);
  keptWorker.worker.terminate();
  keptWorker = null;
}

/**
 * One request to a file worker: the kept one, or a new one. A worker that built a file is kept for
 * the opening of that file, and every worker that answered while the process keeps one for its
 * life; any other is terminated once it answered.
 */
async function askFileWorker(request: FileWorkerRequest): Promise<FileWorkerAnswer & { ok: true }> {
  const worker = takeFileWorker();
  let answered = false;
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
    answered = true;
    if (!answer.ok) throw new Error(`the file worker failed: ${answer.error}`);
    return answer;
  } finally {
    if (answered && (keptForLife || request.kind === "build")) keepFileWorker(worker);
    else worker.terminate();
  }
}

/**
 * The build, outside the claiming and recording units: the file built and checked, the entries'
 * facts (and the sandbox test accounts used) kept a page per unit, then its sealed content a piece
 * per unit (ACH_FILE_PIECE_CHARS), with the claim's turns and rests between units, each only while
 * the batch is still this build's. A crash anywhere here leaves the batch built without a file:
 * the next run claims on, builds the same file again and writes its pieces over the earlier ones.
 */
async function buildAndKeepFacts(
  deps: AchRailDeps,
  claim: FileClaim,
  entries: number,
): Promise<BuiltFile> {
  const built = await buildClaimedFile(deps, claim, entries);
  if (!built.ok) return built;
  const rail = {
    recorded: async (tx: WriteTx, id: string) => await loadAchFileSummary(tx, id) !== null,
  };
  const pieces = filePiecesOf(built.row.contentSealed);
  const units = [
    ...built.pages.map((page) => async (tx: WriteTx) => {
      await recordEntryFacts(tx, page.facts);
      if (page.sandboxAccounts !== null) await recordSandboxAccounts(tx, page.sandboxAccounts);
    }),
    ...pieces.map((content, part) => (tx: WriteTx) =>
      keepFilePiece(tx, claim.batchId, { part, count: pieces.length, content })
    ),
  ];
  for (const [index, unit] of units.entries()) {
    await yieldToEventLoop();
    const started = performance.now();
    await deps.database.writer.write(async (tx) => {
      if (await batchBuilding(tx, rail, claim.batchId)) await unit(tx);
    });
    if (index < units.length - 1) await restUnderApiTraffic(started, deps.runtime.apiBusy);
  }
  return built;
}

/**
 * The recording unit's part of ACH: the file is kept, its content already in pieces; a file that
 * failed its check, or whose pieces are not all kept, is refused.
 */
async function recordFile(tx: WriteTx, claim: AchClaim, built: BuiltFile): Promise<string | null> {
  if (!built.ok) return built.error;
  const { contentSealed, ...row } = built.row;
  const refused = await insertAchFile(tx, {
    ...row,
    contentPieces: filePiecesOf(contentSealed).length,
  });
  if (refused !== null) return refused;
  // Only debits collect fundings; finding them reads every entry of the file (a catastrophe
  // day's 10,000 credits: 9 ms of the service's thread at load 6).
  if (built.row.debitTotalCents > 0) {
    await setFundingsExpectedAt(tx, claim.batchId, built.settlesAt);
  }
  return null;
}

/** How ACH files are sent after their transmission: by the engine's send, `ach.send` beyond its first unit. */
export const ACH_SEND: BatchSend = { job: ACH_SEND_JOB };

/** The jobs that read a company's ACH returns from outside: a settlement waits for them. */
export const ACH_OUTCOME_READERS: readonly string[] = [
  SANDBOX_RETURNS_JOB,
  INBOUND_POLL_JOB,
  ACH_IMPORT_RESUME_JOB,
];

/**
 * Completes a transmitted file's entries still sent at the end of their return window, once no
 * return read before its time is still being imported (lib/rails/outcome_fence.ts): outside the
 * job's claiming and recording units, a page per unit with the send's unit size and rests
 * (`inUnits`), each unit moving its payouts set-based. A unit finding a reader of returns begun
 * meanwhile applies nothing, and the job is taken up again behind it; a run stopped anywhere
 * leaves its claim to expire and the next run completes what is still sent.
 */
function settleFileJob(deps: AchRailDeps, moves: BatchPayoutMoves): JobHandler {
  const stillSent = async (tx: WriteTx, batchId: string) =>
    (await batchEntries(tx, batchId, "sent", 1)).length > 0;
  return externalJob<string, number>({
    leaseMs: BATCH_TRANSMIT_LEASE_MS,
    prepare: async (tx, job) => {
      if (await holdBehindOutcomeReaders(tx, job, ACH_OUTCOME_READERS)) return null;
      return await stillSent(tx, job.subjectId) ? job.subjectId : null;
    },
    call: (batchId, job) =>
      inUnits(
        deps.database.writer,
        SEND_ENTRIES_PER_UNIT_MAX,
        async (tx) =>
          await outcomeReadersIdle(tx, job, ACH_OUTCOME_READERS)
            ? await completeSentEntries(tx, moves, batchId, SEND_ENTRIES_PER_UNIT_MAX, job.dueAt)
            : 0,
        deps.runtime.apiBusy,
      ),
    record: async (tx, job) => {
      if (!await stillSent(tx, job.subjectId)) return;
      await scheduleJob(tx, {
        companyId: job.companyId,
        kind: ACH_SETTLE_JOB,
        subjectId: job.subjectId,
        dueAt: job.dueAt,
      }, job.dueAt);
    },
  }) as JobHandler;
}

/** The handlers of the ACH rail's own jobs. */
export function achJobHandlers(
  deps: AchRailDeps,
  moves: BatchPayoutMoves,
): Readonly<Record<string, JobHandler>> {
  return {
    [ACH_CUTOFF.cutoffJob]: cutoffJobHandler(
      { policy: deps.policy, moves },
      achCutoffRail(deps),
      { writer: deps.database.writer, apiBusy: deps.runtime.apiBusy },
    ),
    [ACH_SEND_JOB]: batchSendJob(
      { writer: deps.database.writer, apiBusy: deps.runtime.apiBusy },
      moves,
      ACH_SEND,
    ),
    [ACH_SETTLE_JOB]: settleFileJob(deps, moves),
  };
}
