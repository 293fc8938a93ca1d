/**
 * The check rail, in both environments, for postal and digital checks: a submitted payout queues
 * an entry and takes the next number of the company's check register in the same unit; at each
 * cutoff a positive-pay file (and a print file of the postal checks) is built from the new issues
 * and voids and kept sealed (lib/checks/jobs.ts); the rail engine (lib/rails/engine.ts) releases
 * and transmits them through this rail's adapter, by the transport the composition root chose
 * (the sandbox check bank in test; SFTP, or an admin's download and mark-sent, in live).
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { bankLocal } from "../ach/cutoffs.ts";
import {
  type BatchPayoutMoves,
  type BatchRail,
  type BatchRow,
  insertQueuedEntry,
  type NewBatchEntry,
} from "../rails/batch.ts";
import {
  bankFileAdapter,
  type BatchAdapter,
  type RailPolicy,
  type UploadAnswer,
} from "../rails/engine.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";
import { modalityOf } from "../payouts/states.ts";
import { uploadAchFile } from "../ach/transport.ts";
import { findCheckByReference, issueCheck } from "./register.ts";
import { voidFailureReason } from "./voids.ts";
import { type CheckSettings, hasCheckRail, readCheckSettings } from "./settings_store.ts";
import {
  checkFileTransmitted,
  checkFileVoided,
  checkJobHandlers,
  checkSettingsOf,
  endOfBankDay,
  planSandboxPaidItems,
  printReleasable,
} from "./jobs.ts";
import { type CheckFileRow, loadCheckFile, openCheckFileAsBuilt } from "./files_store.ts";
import {
  CHECK_BATCH_JOBS,
  CHECK_RAIL,
  ensureCheckCutoffPlanned,
  POSITIVE_PAY_RAIL,
  PRINT_RAIL,
} from "./schedule.ts";

/** How check files reach the bank. Throws when it is not known whether the bank has one. */
export interface CheckTransport {
  /** The bank takes files whenever they come: a cutoff runs at once, not at the bank's cutoffs. */
  readonly takesFilesAnyTime: boolean;
  /** Whether this file is uploaded (else it waits for an admin's download). */
  uploads(settings: CheckSettings, file: Pick<CheckFileRow, "kind">): boolean;
  /** Hands a file over. */
  upload(settings: CheckSettings, file: CheckFileRow, content: Uint8Array): Promise<UploadAnswer>;
  /** What the bank does once it has a positive-pay file (the sandbox bank plans its paid items). */
  sent?(tx: WriteTx, companyId: string, fileId: string, at: number): Promise<void>;
  /** What follows a print file handed over (a mail provider's tracking), in that unit. */
  printed?(tx: WriteTx, batch: BatchRow, at: number): Promise<void>;
}

/** Test: the sandbox check bank takes every file at once and pays its checks later. */
export const sandboxCheckBank: CheckTransport = {
  takesFilesAnyTime: true,
  uploads: () => true,
  upload: (_settings, file) =>
    Promise.resolve({ kind: "uploaded", remotePath: `sandbox://${file.fileName}` }),
  sent: planSandboxPaidItems,
};

/** Live: SFTP to the bank when a target is set; without one, files wait for download. */
export const sftpCheckTransport: CheckTransport = {
  takesFilesAnyTime: false,
  uploads: (settings) => settings.sftp !== null,
  upload: (settings, file, content) => uploadAchFile(settings.sftp!, file.fileName, content),
};

export interface CheckRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  readonly policy: RailPolicy;
  readonly transport: CheckTransport;
  /** Issues one positive-pay file takes at most (CHECK_FILE_ISSUES_MAX unless a test lowers it). */
  readonly batchEntriesMax?: number;
}

/** The postage a postal check goes with when neither the company nor the payee chose one. */
export const POSTAGE_DEFAULT = "FC";

/**
 * What a check prints of its payout: the payee, the company's claim (a /v1 disbursement's
 * claim_id, else the disbursement_uuid or simple_payment_uuid; never an internal id), the postage.
 */
async function checkFacts(tx: WriteTx, payoutId: string) {
  const { rows } = await tx.execute({
    sql: `SELECT p.payment_method_id, p.method_details, p.payment_method_settings,
            coalesce(d.claim_id, d.external_uuid) AS claim,
            coalesce(nullif(trim(coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, '')), ''),
                     py.name, p.payee_uuid) AS payee_name
          FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
            LEFT JOIN payees py ON py.id = p.payee_id
          WHERE p.id = ?`,
    args: [payoutId],
  });
  const row = rows[0];
  if (!row) throw new Error(`no payout ${payoutId}`);
  const kind = modalityOf(Number(row.payment_method_id))?.code === "digital_check"
    ? "digital" as const
    : "postal" as const;
  const details = JSON.parse(String(row.method_details ?? "{}")) as Record<string, unknown>;
  const settings = JSON.parse(String(row.payment_method_settings ?? "{}")) as Record<
    string,
    unknown
  >;
  const postage = typeof details.postage === "string"
    ? details.postage
    : typeof settings.check_postage_type === "string"
    ? settings.check_postage_type
    : POSTAGE_DEFAULT;
  return {
    kind,
    payeeName: String(row.payee_name),
    memo: row.claim === null ? null : String(row.claim),
    postageCode: kind === "postal" ? postage : null,
  };
}

/**
 * Queues a check payout's entry and gives it its check in the caller's unit (the submission's
 * number is its own from here on), and makes sure a cutoff will tell the bank.
 */
async function queueCheck(
  deps: CheckRailDeps,
  tx: WriteTx,
  entry: NewBatchEntry,
  now: number,
): Promise<void> {
  if (entry.payoutId === null) throw new Error("a check entry pays a payout");
  const settings = await readCheckSettings(tx, deps.secretBox, deps.environment, entry.companyId);
  if (!settings) throw new Error(`company ${entry.companyId} has no check account`);
  await insertQueuedEntry(tx, CHECK_RAIL, entry, now);
  const facts = await checkFacts(tx, entry.payoutId);
  await issueCheck(tx, {
    companyId: entry.companyId,
    payoutId: entry.payoutId,
    reference: entry.reference,
    kind: facts.kind,
    amountCents: entry.amountCents,
    payeeName: facts.payeeName,
    memo: facts.memo,
    postageCode: facts.postageCode,
    issueDate: bankLocal(now, settings.timeZone).date,
    firstCheckNumber: settings.account.firstCheckNumber,
    staleDays: settings.account.staleDays,
  }, now);
  await ensureCheckCutoffPlanned(tx, entry.companyId, now);
}

/** The check rail's part of the engine: positive-pay and print files, and their transport. */
export function checkAdapter(deps: CheckRailDeps, moves: BatchPayoutMoves): BatchAdapter {
  return bankFileAdapter<CheckFileRow, CheckSettings, Uint8Array>({
    rails: [POSITIVE_PAY_RAIL, PRINT_RAIL],
    label: "check file",
    objectType: "check_file",
    commandPrefix: "checks",
    jobs: CHECK_BATCH_JOBS,
    // A check file keeps its check numbers: one the bank did not receive is transmitted again.
    notReceived: "transmit_again",
    file: loadCheckFile,
    settings: (tx, companyId) => checkSettingsOf(deps, tx, companyId),
    judge: async (tx, file, settings, batch) => ({
      uploads: deps.transport.uploads(settings, file),
      // A print file follows its positive-pay file: it needs no release nor window of its own.
      releaseCents: file.kind === "positive_pay" ? file.totalCents : null,
      windowEndsAt: file.kind === "positive_pay"
        ? endOfBankDay(batch.cutoffAt, settings.timeZone)
        : null,
      heldBy: await printReleasable(tx, file) ? null : printHeldBy(file),
    }),
    open: (file) => openCheckFileAsBuilt(deps.secretBox, file),
    upload: (file, settings, content) => deps.transport.upload(settings, file, content),
    transmitted: (tx, batch, at) => checkFileTransmitted(tx, deps, moves, batch, at),
    // A check of a voided file is issued again, with a new number, under the entry's new reference.
    requeue: (tx, entry, now) => queueCheck(deps, tx, entry, now),
    // A check voided (or gone stale) while its file waited is not issued again: its payout fails.
    stoppedBy: async (tx, entry) => {
      const check = await findCheckByReference(tx, entry.reference);
      return check && ["voided", "stale"].includes(check.status) ? voidFailureReason(check) : null;
    },
    voided: (tx, batch, now) => checkFileVoided(tx, moves, batch, now),
  });
}

/** Why a print file waits: checks never exist on paper before the bank knows them. */
export const printHeldBy = (file: Pick<CheckFileRow, "batchId" | "positivePayFileId">) =>
  `print file ${file.batchId} is held until its positive-pay file ${file.positivePayFileId} was transmitted or marked sent: checks never exist on paper before the bank knows them`;

/** The check rail of one environment's database (postal and digital checks). */
export function checkRail(deps: CheckRailDeps): BatchRail {
  return {
    shape: "batch",
    name: CHECK_RAIL,
    policy: deps.policy,
    configured: (tx: WriteTx, companyId: string) => hasCheckRail(tx, deps.environment, companyId),
    queue: (tx: WriteTx, entry: NewBatchEntry, now: number) => queueCheck(deps, tx, entry, now),
    jobHandlers: (moves) => checkJobHandlers(deps, moves),
    adapters: (moves) => [checkAdapter(deps, moves)],
  };
}
