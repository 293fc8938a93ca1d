/**
 * The ACH batch rail, in both environments: payouts that chose ACH (credits) and ACH fundings
 * (debits of the company's funding account) queue as entries; at each cutoff of the company's bank
 * a NACHA file is built from them, checked against the database and kept sealed (lib/ach/jobs.ts);
 * the rail engine (lib/rails/engine.ts) releases and transmits it through this rail's adapter, by
 * the transport the composition root chose: the sandbox bank in test, SFTP (or an admin's
 * download) in live.
 */
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import {
  type BatchPayoutMoves,
  type BatchRail,
  type BatchRow,
  type NewBatchEntry,
  sendAfterTransmission,
} from "../rails/batch.ts";
import {
  bankFileAdapter,
  type BatchAdapter,
  type RailPolicy,
  type UploadAnswer,
} from "../rails/engine.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";
import type { BankSettings } from "./bank_settings.ts";
import { hasAchRail, readBankSettings } from "./bank_store.ts";
import { sandboxReturnsAt, settlementAt } from "./cutoffs.ts";
import type { OpenedFile } from "./file_build.ts";
import {
  ACH_BATCH_JOBS,
  ACH_RAIL,
  type AchFileSummary,
  loadAchFileSummary,
  queueAchEntry,
  setFileApproval,
} from "./files_store.ts";
import { SANDBOX_RETURNS_JOB, sandboxBankUpload } from "./sandbox_bank.ts";
import { uploadAchFile } from "./transport.ts";
import { planSandboxStatements } from "../reconciliation/sandbox_statements.ts";
import { ACH_SEND, ACH_SETTLE_JOB, achJobHandlers, openKeptFile } from "./jobs.ts";

/** How a file reaches the bank. Throws when it is not known whether the bank has it. */
export interface AchTransport {
  /** Whether files of these settings are uploaded (else they wait for an admin's download). */
  uploads(settings: BankSettings): boolean;
  /** Hands the file over; `attempt` is 1 for the file's first transmission. */
  upload(
    settings: BankSettings,
    file: {
      readonly fileName: string;
      readonly content: Uint8Array;
      readonly accountNumbers: string[];
    },
    attempt: number,
  ): Promise<UploadAnswer>;
}

/** Test: the sandbox bank takes every file at once (but the first of one to 000222222227). */
export const sandboxBankTransport: AchTransport = {
  uploads: () => true,
  upload: (_settings, file, attempt) =>
    Promise.resolve(sandboxBankUpload(file.fileName, file.accountNumbers, attempt)),
};

/** Live: SFTP to the bank when a target is set; without one, files wait for download. */
export const sftpTransport: AchTransport = {
  uploads: (settings) => settings.sftp !== null,
  upload: (settings, file) => uploadAchFile(settings.sftp!, file.fileName, file.content),
};

/**
 * What the sandbox bank adds behind the transport: its test accounts (a test payee who entered
 * no details is paid to one) and its return file, written two banking days after the effective date.
 */
export interface AchSandboxBank {
  readonly testAccounts: true;
  /** Plans the bank's return file of a transmitted file. */
  plan(tx: WriteTx, file: AchFileSummary, timeZone: string, at: number): Promise<void>;
}

/**
 * The sandbox bank's returns, planned when a test file is transmitted, and its daily statements
 * from that day on (lib/reconciliation/sandbox_statements.ts).
 */
export const achSandboxBank: AchSandboxBank = {
  testAccounts: true,
  async plan(tx, file, timeZone, at) {
    await scheduleJob(tx, {
      companyId: file.companyId,
      kind: SANDBOX_RETURNS_JOB,
      subjectId: file.batchId,
      dueAt: Math.max(at, sandboxReturnsAt(file.effectiveDate, timeZone)),
    }, at);
    await planSandboxStatements(tx, file.companyId, timeZone, at);
  },
};

export interface AchRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  readonly transport: AchTransport;
  /** The sandbox bank behind the transport in test; null in live. */
  readonly sandboxBank: AchSandboxBank | null;
  /** Entries one file takes at most (BATCH_ENTRIES_MAX unless a test lowers it). */
  readonly batchEntriesMax?: number;
  readonly policy: RailPolicy;
}

/** The company's bank settings, which its files cannot be built or sent without. */
export async function achSettingsOf(
  deps: Pick<AchRailDeps, "secretBox" | "environment">,
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

/**
 * The file reached the bank: its entries are sent and their payouts' money is sent (a large
 * file's beyond the first units by `ach.send` jobs), and the end of their return window is
 * scheduled (with the sandbox bank, its return file before it).
 */
async function fileTransmitted(
  deps: AchRailDeps,
  moves: BatchPayoutMoves,
  tx: WriteTx,
  batch: BatchRow,
  at: number,
): Promise<void> {
  const file = await loadAchFileSummary(tx, batch.id);
  if (!file) throw new Error(`ACH batch ${batch.id} has no file`);
  const { timeZone } = await achSettingsOf(deps, tx, batch.companyId);
  await sendAfterTransmission(tx, moves, ACH_SEND, batch, at);
  await scheduleJob(tx, {
    companyId: file.companyId,
    kind: ACH_SETTLE_JOB,
    subjectId: file.batchId,
    dueAt: Math.max(at, settlementAt(file.effectiveDate, timeZone)),
  }, at);
  await deps.sandboxBank?.plan(tx, file, timeZone, at);
}

/** The ACH rail's part of the engine: NACHA files, its transport, what a transmission starts. */
export function achAdapter(deps: AchRailDeps, moves: BatchPayoutMoves): BatchAdapter {
  return bankFileAdapter<AchFileSummary, BankSettings, OpenedFile>({
    rails: [ACH_RAIL],
    label: "ACH file",
    objectType: "ach_file",
    commandPrefix: "ach",
    jobs: ACH_BATCH_JOBS,
    notReceived: "void",
    // Its content is read where it is opened, outside the transmission's units (uploadFile).
    file: loadAchFileSummary,
    settings: (tx, companyId) => achSettingsOf(deps, tx, companyId),
    judge: (_tx, file, settings) =>
      Promise.resolve({
        uploads: deps.transport.uploads(settings),
        releaseCents: file.creditTotalCents + file.debitTotalCents,
        windowEndsAt: file.windowEndsAt,
        heldBy: null,
      }),
    open: (file) => openKeptFile(deps, file),
    upload: (file, settings, { content, accountNumbers }, attempt) =>
      deps.transport.upload(
        settings,
        { fileName: file.fileName, content, accountNumbers },
        attempt,
      ),
    transmitted: (tx, batch, at) => fileTransmitted(deps, moves, tx, batch, at),
    requeue: queueAchEntry,
    released: (tx, batch, approvalId) => setFileApproval(tx, batch.id, approvalId),
  });
}

/** The ACH rail of one environment's database. */
export function achRail(deps: AchRailDeps): BatchRail {
  return {
    shape: "batch",
    name: ACH_RAIL,
    policy: deps.policy,
    configured: (tx: WriteTx, companyId: string) => hasAchRail(tx, deps.environment, companyId),
    queue: (tx: WriteTx, entry: NewBatchEntry, now: number) => queueAchEntry(tx, entry, now),
    jobHandlers: (moves) => achJobHandlers(deps, moves),
    adapters: (moves) => [achAdapter(deps, moves)],
  };
}
