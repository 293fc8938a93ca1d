/**
 * The ACH rail's jobs. `rail.cutoff` (per company): claims the queued entries and their traces in
 * one short unit, builds and checks the NACHA file outside every unit, and keeps it in a second
 * unit; a crash between the two finds the claimed batch again and builds the same file.
 * `rail.transmit` (per file): hands the file to the bank under a lease; a failure is retried while
 * the cutoff's window is open, then the file is voided and its entries queued again; a run that
 * finds the file `transmitting` marks it in doubt and never uploads it again. `ach.settle` (per
 * file): at the end of the return window, every entry still sent completes.
 */
import { externalJob, type JobHandler, TransientJobError } from "../../db/scheduler.ts";
import { type DueJob, scheduleJob } from "../../db/scheduler_store.ts";
import { retryDelayMs } from "../../db/job_policy.ts";
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit } from "../audit/store.ts";
import { newId, sha256Hex } from "../platform/keys.ts";
import {
  BATCH_ENTRIES_MAX,
  BATCH_TRANSMIT_LEASE_MS,
  type BatchPayoutMoves,
  beginTransmission,
  holdBatch,
  loadBatch,
  markTransmitted,
  type RailBatchJobKind,
  sendTransmittedEntries,
  settleBatchEntry,
  transmissionFailed,
  voidBatch,
} from "../rails/batch.ts";
import type { SandboxScenario } from "../rails/seam.ts";
import { sandboxTestDetails } from "../rails/sandbox.ts";
import { type BankSettings, SAME_DAY_ENTRY_MAX_CENTS } from "./bank_settings.ts";
import { readBankSettings } from "./bank_store.ts";
import { correctedAccount } from "./corrections.ts";
import {
  bankLocal,
  type CutoffSlot,
  nextCutoffSlot,
  sandboxReturnsAt,
  settlementAt,
} from "./cutoffs.ts";
import {
  ACH_RAIL,
  type AchFileRow,
  claimEntries,
  countFilesNamed,
  ensureCutoffPlanned,
  entriesForFile,
  type EntryFacts,
  type EntryForFile,
  fileApprovalStatus,
  findUnfinishedBatch,
  hasCorrections,
  insertAchFile,
  loadAchFile,
  measureQueue,
  openFileContent,
  recordEntryFacts,
  reserveTraceSequences,
  scheduleCutoff,
  sealFileContent,
  sentReferences,
  setFundingsExpectedAt,
  voidStaleQueuedEntries,
} from "./files_store.ts";
import { buildNachaFile, checkNachaFile, fileIdModifierAt } from "./nacha.ts";
import {
  achFileName,
  achFileNamePrefix,
  entryClassOf,
  type FileLine,
  fileModelOf,
  type ReceivingAccount,
  transactionCodeOf,
} from "./file_model.ts";
import type { AchRailDeps } from "./rail.ts";
import { SANDBOX_RETURNS_JOB } from "./sandbox_bank.ts";
import type { FileWorkerAnswer, FileWorkerRequest } from "./file_worker.ts";
import type { UploadAnswer } from "./transport.ts";

/** The job that completes a transmitted file's entries at the end of their return window. */
export const ACH_SETTLE_JOB = "ach.settle";
/** The job that sends the entries of a large transmitted file, a bounded number per unit. */
export const ACH_SEND_JOB = "ach.send";

export type AchJobKind = RailBatchJobKind | typeof ACH_SETTLE_JOB | typeof ACH_SEND_JOB;

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
export const SEND_ENTRIES_PER_UNIT_MAX = 100;

/** Offset entries a file may carry (one per batch: PPD credits, CCD credits, CCD debits). */
const OFFSET_TRACES_MAX = 3;

/** The actor of what the pipeline does by itself (a file voided when its window closed). */
const SYSTEM_ACTOR = { operator: null, origin: "system" } as const;

/** What a cutoff's claim hands to its build. */
interface FileClaim {
  readonly batchId: string;
  readonly companyId: string;
  readonly slot: CutoffSlot;
  readonly settings: BankSettings;
  readonly fileName: string;
  readonly fileIdModifier: string;
}

/**
 * The sandbox test account given to a test payee who chose ACH without entering details, kept
 * on its payout as entered details are, so the sandbox bank's returns see it as any other.
 */
interface SandboxAccountChosen {
  readonly payoutId: string;
  readonly routingNumber: string;
  readonly accountSealed: string;
}

/** What the build hands to the recording unit: a checked file, or why it may not be released. */
type BuiltFile =
  | {
    readonly ok: true;
    readonly batchId: string;
    readonly row: AchFileRow;
    readonly facts: readonly EntryFacts[];
    /** When its entries' return window closes. */
    readonly settlesAt: number;
    readonly sandboxAccounts: readonly SandboxAccountChosen[];
  }
  | { readonly ok: false; readonly batchId: string; readonly error: string };

function slotOf(job: DueJob): CutoffSlot | null {
  const slot = job.payload.slot;
  return slot && typeof slot === "object" ? slot as CutoffSlot : null;
}

async function settingsOf(
  deps: AchRailDeps,
  tx: Pick<WriteTx, "execute">,
  companyId: string,
): Promise<BankSettings> {
  const settings = await readBankSettings(tx, deps.secretBox, deps.environment, companyId);
  if (!settings) {
    throw new Error(
      `company ${companyId} has no bank settings in ${deps.environment}: its ACH entries wait (deno task admin bank:set)`,
    );
  }
  return settings;
}

const scheduleOf = (settings: BankSettings) => ({
  timeZone: settings.timeZone,
  cutoffs: settings.cutoffs,
  transmitWindowMinutes: settings.transmitWindowMinutes,
});

/**
 * The cutoff's claiming unit: without a slot, the job finds its cutoff and schedules itself
 * there. At the cutoff, the queued entries it may take (same-day: none over the same-day limit)
 * go into a new built batch with their traces, set-based; an interrupted build's batch is taken
 * up again instead. Null when there is nothing to build.
 */
async function claimFile(
  deps: AchRailDeps,
  tx: WriteTx,
  job: DueJob,
): Promise<FileClaim | null> {
  const settings = await settingsOf(deps, tx, job.companyId);
  const slot = slotOf(job);
  if (slot === null) {
    const next = nextCutoffSlot(scheduleOf(settings), job.dueAt);
    await scheduleCutoff(tx, job.companyId, next.at, next, job.dueAt);
    return null;
  }
  const scope = {
    companyId: job.companyId,
    maxCents: slot.kind === "same_day" ? SAME_DAY_ENTRY_MAX_CENTS : null,
    limit: BATCH_ENTRIES_MAX,
  };
  const unfinished = await findUnfinishedBatch(tx, job.companyId, slot.at);
  if (unfinished) {
    // Entries queued since the interrupted claim saw this job pending: the next cutoff takes them.
    if ((await measureQueue(tx, scope)).queued > 0) {
      await scheduleCutoff(tx, job.companyId, slot.at, null, slot.at);
    }
    return {
      batchId: unfinished.id,
      companyId: job.companyId,
      slot,
      settings,
      fileName: unfinished.fileName,
      fileIdModifier: unfinished.fileName.slice(-5, -4),
    };
  }
  await voidStaleQueuedEntries(tx, job.companyId);
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
    if (queue.queued > 0) await scheduleCutoff(tx, job.companyId, slot.at, null, slot.at);
    return null;
  }
  const odfi = settings.odfiRouting.slice(0, 8);
  const firstSequence = await reserveTraceSequences(tx, odfi, queue.count + OFFSET_TRACES_MAX);
  const batchId = newId("rbt");
  const fileName = achFileName(settings.immediateOrigin, slot.bankDate, fileIdModifier);
  await tx.execute({
    sql: `INSERT INTO rail_batches (id, company_id, rail, status, entry_count, total_cents,
            cutoff_at, rail_reference, created_at)
          VALUES (?, ?, ?, 'built', ?, ?, ?, ?, ?)`,
    args: [
      batchId,
      job.companyId,
      ACH_RAIL,
      queue.count,
      queue.totalCents,
      slot.at,
      fileName,
      slot.at,
    ],
  });
  await claimEntries(tx, scope, {
    batchId,
    odfi,
    firstSequence,
    effectiveDate: slot.effectiveDate,
  });
  if (queue.queued > queue.count) {
    // A full file: the rest go into the next file of the same cutoff; otherwise the next cutoff.
    const full = queue.count === BATCH_ENTRIES_MAX;
    await scheduleCutoff(tx, job.companyId, slot.at, full ? slot : null, slot.at);
  }
  return { batchId, companyId: job.companyId, slot, settings, fileName, fileIdModifier };
}

/** The sandbox bank's routing number, for test payees who entered no details. */
export const SANDBOX_ROUTING_NUMBER = "021000021";

/** The sandbox test account a test payee's scenario stands for, when the payee entered none. */
export function sandboxAccountOf(scenario: SandboxScenario | undefined): ReceivingAccount {
  const accountNumber = scenario === "returns_r03"
    ? sandboxTestDetails.achReturnsR03
    : scenario === "transient_once"
    ? sandboxTestDetails.achTransientOnce
    : sandboxTestDetails.achSettles;
  return { routingNumber: SANDBOX_ROUTING_NUMBER, accountNumber, accountType: "checking" };
}

/** The account an entry goes to: the payee's (unsealed; the sandbox's test account when none). */
async function payeeAccount(
  deps: AchRailDeps,
  entry: EntryForFile,
): Promise<ReceivingAccount & { readonly sandboxTestAccount?: true }> {
  const details = JSON.parse(entry.methodDetails ?? "{}") as Record<string, unknown>;
  const routing = typeof details.routing_number === "string" ? details.routing_number : null;
  const sealed = typeof details.account_sealed === "string" ? details.account_sealed : null;
  if (routing !== null && sealed !== null) {
    return {
      routingNumber: routing,
      accountNumber: await deps.secretBox.openText(sealed),
      accountType: details.account_type === "savings" ? "savings" : "checking",
    };
  }
  if (deps.environment === "test") {
    // A sandbox test payee (success+ach, fail+ach) chose without entering details.
    return {
      ...sandboxAccountOf(details.scenario as SandboxScenario | undefined),
      sandboxTestAccount: true,
    };
  }
  throw new Error(`payout ${entry.payoutId} chose ACH without bank details`);
}

/** Each entry with the account it goes to: payees' after notices of change, the funding account. */
async function fileLines(
  deps: AchRailDeps,
  claim: FileClaim,
  entries: readonly EntryForFile[],
): Promise<FileLine[]> {
  const funding = claim.settings.fundingAccount;
  const lines: FileLine[] = [];
  for (const entry of entries) {
    const account = entry.direction === "debit"
      ? {
        routingNumber: funding.routingNumber,
        accountNumber: funding.accountNumber,
        accountType: funding.accountType,
      }
      : await payeeAccount(deps, entry);
    lines.push({ entry, account });
  }
  if (!await hasCorrections(deps.database.readClient, claim.companyId)) return lines;
  // Rare: the company's bank sent notices of change; one read-only unit looks each account up.
  return await deps.database.writer.write(async (tx) => {
    const corrected: FileLine[] = [];
    for (const line of lines) {
      corrected.push(
        line.entry.direction === "debit" ? line : {
          entry: line.entry,
          account: await correctedAccount(tx, deps.secretBox, claim.companyId, line.account),
        },
      );
    }
    return corrected;
  });
}

/**
 * Files of at least this many entries are built in a worker: building and checking take about
 * 0.35 ms per entry on this machine, so a larger file would hold the event loop over 100 ms.
 */
export const FILE_WORKER_ENTRIES_MIN = 300;

/** The file's content and its strict check, in a worker for a large file. */
async function buildAndCheck(
  request: FileWorkerRequest,
  entryCount: number,
): Promise<FileWorkerAnswer> {
  if (entryCount < FILE_WORKER_ENTRIES_MIN) {
    try {
      const content = await buildNachaFile(request.model);
      return { ok: true, content, checked: checkNachaFile(content, { odfi: request.odfi }) };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }
  const worker = new Worker(new URL("./file_worker.ts", import.meta.url), { type: "module" });
  try {
    return await new Promise<FileWorkerAnswer>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<FileWorkerAnswer>) => resolve(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(`the file worker failed: ${event.message}`));
      };
      worker.postMessage(request);
    });
  } finally {
    worker.terminate();
  }
}

/** The entry hash of a file: the sum of its entries' 8-digit receiving DFIs, last 10 digits. */
function entryHashOf(routingNumbers: readonly string[]): string {
  const sum = routingNumbers.reduce((total, routing) => total + BigInt(routing.slice(0, 8)), 0n);
  return (sum % 10_000_000_000n).toString().padStart(10, "0");
}

const isCredit = (code: number) => code === 22 || code === 32;

/**
 * Builds and checks the file outside every unit: the strict checker must read it back, and its
 * entry hash, entry count and totals (offsets left out) must be what the database says of the
 * entries; otherwise the file is not released.
 */
async function buildFile(deps: AchRailDeps, claim: FileClaim): Promise<BuiltFile> {
  const entries = await entriesForFile(deps.database.readClient, claim.batchId);
  const lines = await fileLines(deps, claim, entries);
  const odfi = claim.settings.odfiRouting.slice(0, 8);
  const lastSequence = Math.max(0, ...entries.map((e) => Number(e.traceNumber.slice(8))));
  const created = bankLocal(claim.slot.at, claim.settings.timeZone);
  const { model, offsetTraces } = fileModelOf(claim.settings, {
    slot: claim.slot,
    created,
    fileIdModifier: claim.fileIdModifier,
    offsetTrace: (i) => `${odfi}${String(lastSequence + 1 + i).padStart(7, "0")}`,
  }, lines);
  const built = await buildAndCheck({ model, odfi }, entries.length);
  const refused = (error: string): BuiltFile => ({ ok: false, batchId: claim.batchId, error });
  if (!built.ok) return refused(`the file could not be built: ${built.error}`);
  const { content, checked } = built;
  if (!checked.ok) return refused(`the built file fails its check: ${checked.message}`);
  const summary = checked.value;
  const written = summary.batches.flatMap((batch) => batch.entries)
    .filter((entry) => !offsetTraces.has(entry.traceNumber));
  const expected = {
    count: entries.length,
    credits: entries.filter((e) => e.direction === "credit")
      .reduce((sum, e) => sum + e.expectedCents, 0),
    debits: entries.filter((e) => e.direction === "debit")
      .reduce((sum, e) => sum + e.expectedCents, 0),
    entryHash: entryHashOf(
      model.batches.flatMap((batch) => batch.entries.map((entry) => entry.routingNumber)),
    ),
  };
  const found = {
    count: written.length,
    credits: written.filter((e) => isCredit(e.transactionCode))
      .reduce((sum, e) => sum + e.amountCents, 0),
    debits: written.filter((e) => !isCredit(e.transactionCode))
      .reduce((sum, e) => sum + e.amountCents, 0),
    entryHash: summary.entryHash,
  };
  const differences = (Object.keys(expected) as (keyof typeof expected)[])
    .filter((key) => expected[key] !== found[key])
    .map((key) => `${key}: the database says ${expected[key]}, the file has ${found[key]}`);
  const traces = new Set(entries.map((e) => e.traceNumber));
  if (written.some((e) => !traces.has(e.traceNumber))) {
    differences.push("the file carries a trace no entry of the batch has");
  }
  if (differences.length > 0) {
    return refused(`the file does not match its entries: ${differences.join("; ")}`);
  }
  const creditTotalCents = expected.credits;
  const debitTotalCents = expected.debits;
  return {
    ok: true,
    batchId: claim.batchId,
    row: {
      batchId: claim.batchId,
      companyId: claim.companyId,
      immediateOrigin: claim.settings.immediateOrigin,
      immediateDestination: claim.settings.immediateDestination,
      bankDate: claim.slot.bankDate,
      fileIdModifier: claim.fileIdModifier,
      effectiveDate: claim.slot.effectiveDate,
      cutoffKind: claim.slot.kind,
      windowEndsAt: claim.slot.windowEndsAt,
      contentSealed: await sealFileContent(deps.secretBox, content),
      sha256: await sha256Hex(content),
      byteSize: new TextEncoder().encode(content).length,
      entryHash: summary.entryHash,
      creditTotalCents,
      debitTotalCents,
      entryCount: entries.length,
      fileName: claim.fileName,
      approvalId: null,
      createdAt: claim.slot.at,
    },
    settlesAt: settlementAt(claim.slot.effectiveDate, claim.settings.timeZone),
    sandboxAccounts: await sealSandboxAccounts(deps, lines),
    facts: lines.map((line) => ({
      id: line.entry.id,
      receivingDfi: line.account.routingNumber.slice(0, 8),
      accountLastFour: line.account.accountNumber.slice(-4),
      transactionCode: transactionCodeOf(line),
      entryClass: entryClassOf(line.entry),
    })),
  };
}

/**
 * The sandbox test accounts the file used, to keep on their payouts. Each test account number is
 * sealed once for the whole file: they are the sandbox's published numbers, and sealing a
 * catastrophe day's 10,000 one by one held the service's thread for seconds.
 */
async function sealSandboxAccounts(
  deps: AchRailDeps,
  lines: readonly FileLine[],
): Promise<SandboxAccountChosen[]> {
  const sealed = new Map<string, Promise<string>>();
  const sealOnce = (accountNumber: string) => {
    let found = sealed.get(accountNumber);
    if (!found) sealed.set(accountNumber, found = deps.secretBox.sealText(accountNumber));
    return found;
  };
  return await Promise.all(
    lines.filter((line) => "sandboxTestAccount" in line.account).map(async (line) => ({
      payoutId: line.entry.payoutId!,
      routingNumber: line.account.routingNumber,
      accountSealed: await sealOnce(line.account.accountNumber),
    })),
  );
}

/** The recording unit: the file is kept and its transmission scheduled; a refused file is held. */
async function recordFile(tx: WriteTx, job: DueJob, built: BuiltFile): Promise<void> {
  const batch = await loadBatch(tx, built.batchId);
  // Another run recorded it first, or an operator voided it meanwhile.
  if (batch?.status !== "built" || await loadAchFile(tx, built.batchId)) return;
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
  await recordEntryFacts(tx, built.facts);
  await setFundingsExpectedAt(tx, built.batchId, built.settlesAt);
  if (built.sandboxAccounts.length > 0) {
    // One statement for the whole file: a catastrophe day's 10,000 would hold the writer's thread.
    await tx.execute({
      sql: `UPDATE payouts SET method_details = json_set(coalesce(method_details, '{}'),
              '$.routing_number', j.value ->> '$.routingNumber', '$.account_type', 'checking',
              '$.account_sealed', j.value ->> '$.accountSealed')
            FROM json_each(?) AS j WHERE payouts.id = j.value ->> '$.payoutId'`,
      args: [JSON.stringify(built.sandboxAccounts)],
    });
  }
  await scheduleTransmit(tx, batch.companyId, built.batchId, job.dueAt, 1);
}

/** Schedules a file's `attempt`-th transmission. */
export async function scheduleTransmit(
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

/** What a transmission hands to its call. */
interface Transmission {
  readonly batchId: string;
  readonly companyId: string;
  readonly file: AchFileRow;
  readonly settings: BankSettings;
  readonly attempt: number;
}

const attemptOf = (job: DueJob) =>
  typeof job.payload.attempt === "number" ? job.payload.attempt : 1;

/**
 * Whether a built file may go now: in live, only with an SFTP target (else it waits for an
 * admin's download and `ach:mark-sent`) and, over the approval limit, once a second admin
 * approved its release (`ach:release`). The test environment never waits.
 */
async function releasable(
  deps: AchRailDeps,
  tx: WriteTx,
  file: AchFileRow,
  settings: BankSettings,
): Promise<boolean> {
  if (!deps.transport.uploads(settings)) return false;
  if (deps.environment === "test") return true;
  const total = file.creditTotalCents + file.debitTotalCents;
  if (total <= deps.runtime.bankFileApprovalLimitCents) return true;
  return await fileApprovalStatus(tx, file.approvalId) === "approved";
}

async function prepareTransmission(
  deps: AchRailDeps,
  moves: BatchPayoutMoves,
  rail: { retransmitsSafely: boolean },
  tx: WriteTx,
  job: DueJob,
): Promise<Transmission | null> {
  const batch = await loadBatch(tx, job.subjectId);
  if (!batch) throw new Error(`rail.transmit: no batch ${job.subjectId}`);
  if (batch.status === "transmitting") {
    await beginTransmission(tx, rail, batch.id);
    return null;
  }
  if (batch.status !== "built") return null;
  const file = await loadAchFile(tx, batch.id);
  if (!file) return null;
  const settings = await settingsOf(deps, tx, batch.companyId);
  if (!await releasable(deps, tx, file, settings)) return null;
  if (job.dueAt >= file.windowEndsAt) {
    // Released after its window (a late approval): its effective date no longer holds.
    await voidAchBatch(tx, deps, moves, batch.id, {
      actor: SYSTEM_ACTOR,
      action: "ach:void",
      reason: "the transmission window closed before the file was released",
    }, job.dueAt);
    return null;
  }
  if (!await beginTransmission(tx, rail, batch.id)) return null;
  return { batchId: batch.id, companyId: batch.companyId, file, settings, attempt: attemptOf(job) };
}

/** A transmission and the bank's answer to it. */
interface TransmissionAnswer {
  readonly request: Transmission;
  readonly answer: UploadAnswer;
}

async function transmit(deps: AchRailDeps, request: Transmission): Promise<UploadAnswer> {
  const content = await openFileContent(deps.secretBox, request.file.contentSealed);
  const checked = checkNachaFile(content);
  if (!checked.ok) {
    throw new Error(`ACH file ${request.batchId} no longer reads: ${checked.message}`);
  }
  const accountNumbers = checked.value.batches.flatMap((batch) =>
    batch.entries.map((entry) => entry.accountNumber)
  );
  try {
    return await deps.transport.upload(request.settings, {
      fileName: request.file.fileName,
      content,
      accountNumbers,
    }, request.attempt);
  } catch (error) {
    // Nobody knows whether the bank has it: the next run finds the file transmitting, in doubt.
    throw new TransientJobError(
      `the upload of ACH file ${request.batchId} ended without an answer: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
}

/**
 * A file the window closed on: voided (audited as the system's act) and its entries queued
 * again for the next cutoff under new references, to get new traces and a new effective date.
 */
export async function voidAchBatch(
  tx: WriteTx,
  deps: Pick<AchRailDeps, "environment">,
  moves: BatchPayoutMoves,
  batchId: string,
  audit: { actor: Parameters<typeof appendAudit>[2]; action: string; reason: string },
  now: number,
): Promise<number> {
  const batch = await loadBatch(tx, batchId);
  const requeued = await voidBatch(tx, moves, batchId, audit.reason, now);
  await appendAudit(tx, deps.environment, audit.actor, {
    at: now,
    action: audit.action,
    objectType: "ach_file",
    objectId: batchId,
    companyId: batch?.companyId ?? null,
    before: { status: batch?.status ?? null },
    after: { status: "voided", reason: audit.reason, entries_queued_again: requeued.length },
  });
  if (batch && requeued.length > 0) await ensureCutoffPlanned(tx, batch.companyId, now);
  return requeued.length;
}

/**
 * The file reached the bank: its entries are sent and their payouts' money is sent (a large
 * file's beyond the first SEND_ENTRIES_PER_UNIT_MAX by `ach.send` jobs at the same time), and
 * the end of their return window is scheduled (in test, the sandbox bank's return file before it).
 */
export async function recordAchFileTransmitted(
  tx: WriteTx,
  deps: Pick<AchRailDeps, "environment">,
  moves: BatchPayoutMoves,
  file: AchFileRow,
  timeZone: string,
  railReference: string,
  at: number,
): Promise<void> {
  await markTransmitted(tx, file.batchId, railReference, at);
  await sendEntries(tx, moves, file.companyId, file.batchId, at);
  await scheduleJob(tx, {
    companyId: file.companyId,
    kind: ACH_SETTLE_JOB,
    subjectId: file.batchId,
    dueAt: Math.max(at, settlementAt(file.effectiveDate, timeZone)),
  }, at);
  if (deps.environment === "test") {
    await scheduleJob(tx, {
      companyId: file.companyId,
      kind: SANDBOX_RETURNS_JOB,
      subjectId: file.batchId,
      dueAt: Math.max(at, sandboxReturnsAt(file.effectiveDate, timeZone)),
    }, at);
  }
}

/** Sends a bounded number of a transmitted file's entries; the rest in the next `ach.send`. */
async function sendEntries(
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

async function recordTransmission(
  deps: AchRailDeps,
  moves: BatchPayoutMoves,
  tx: WriteTx,
  job: DueJob,
  request: Transmission,
  answer: UploadAnswer,
): Promise<void> {
  if (answer.kind === "uploaded") {
    await recordAchFileTransmitted(
      tx,
      deps,
      moves,
      request.file,
      request.settings.timeZone,
      request.file.fileName,
      job.dueAt,
    );
    return;
  }
  const retryAt = job.dueAt + retryDelayMs(request.attempt);
  if (retryAt < request.file.windowEndsAt) {
    await transmissionFailed(tx, request.batchId, answer.reason);
    await scheduleTransmit(tx, request.companyId, request.batchId, retryAt, request.attempt + 1);
    return;
  }
  await voidAchBatch(tx, deps, moves, request.batchId, {
    actor: SYSTEM_ACTOR,
    action: "ach:void",
    reason: `the transmission window closed before the bank took the file: ${answer.reason}`,
  }, job.dueAt);
}

/** Completes a transmitted file's entries still sent, a bounded number per unit. */
async function settleFile(moves: BatchPayoutMoves, tx: WriteTx, job: DueJob): Promise<void> {
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

/** The handlers of the ACH rail's jobs. */
export function achJobHandlers(
  deps: AchRailDeps,
  moves: BatchPayoutMoves,
): Readonly<Record<AchJobKind, JobHandler>> {
  const rail = { retransmitsSafely: false };
  return {
    "rail.cutoff": externalJob<FileClaim, BuiltFile>({
      leaseMs: CUTOFF_LEASE_MS,
      prepare: (tx, job) => claimFile(deps, tx, job),
      call: (claim) => buildFile(deps, claim),
      record: (tx, job, built) => recordFile(tx, job, built),
    }),
    "rail.transmit": externalJob<Transmission, TransmissionAnswer>({
      leaseMs: BATCH_TRANSMIT_LEASE_MS,
      prepare: (tx, job) => prepareTransmission(deps, moves, rail, tx, job),
      call: async (request) => ({ request, answer: await transmit(deps, request) }),
      record: (tx, job, { request, answer }) =>
        recordTransmission(deps, moves, tx, job, request, answer),
    }),
    [ACH_SEND_JOB]: (tx, job) => sendEntries(tx, moves, job.companyId, job.subjectId, job.dueAt),
    [ACH_SETTLE_JOB]: (tx, job) => settleFile(moves, tx, job),
  };
}
