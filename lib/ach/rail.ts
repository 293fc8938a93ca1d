/**
 * The ACH batch rail, in both environments: payouts that chose ACH (credits) and ACH fundings
 * (debits of the company's funding account) queue as entries; at each cutoff of the company's bank
 * a NACHA file is built from them, checked against the database, kept sealed, and transmitted by
 * the environment's transport (the sandbox bank in test; SFTP, or an admin's download, in live).
 * Its jobs are in lib/ach/jobs.ts, the file's content in lib/ach/file_model.ts; this module holds
 * the rail and its transports.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { BatchRail, NewBatchEntry } from "../rails/batch.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";
import type { BankSettings } from "./bank_settings.ts";
import { hasAchRail } from "./bank_store.ts";
import { ACH_RAIL, queueAchEntry } from "./files_store.ts";
import { sandboxBankUpload } from "./sandbox_bank.ts";
import { uploadAchFile, type UploadAnswer } from "./transport.ts";
import { achJobHandlers } from "./jobs.ts";

/** How a file reaches the bank. Throws when it is not known whether the bank has it. */
export interface AchTransport {
  /** Whether files of these settings are uploaded (else they wait for an admin's download). */
  uploads(settings: BankSettings): boolean;
  /** Hands the file over; `attempt` is 1 for the file's first transmission. */
  upload(
    settings: BankSettings,
    file: {
      readonly fileName: string;
      readonly content: string;
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
  upload: (settings, file) =>
    uploadAchFile(settings.sftp!, file.fileName, new TextEncoder().encode(file.content)),
};

export interface AchRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  readonly transport: AchTransport;
}

/** The ACH rail of one environment's database. */
export function achRail(deps: AchRailDeps): BatchRail {
  return {
    shape: "batch",
    name: ACH_RAIL,
    // A bank may already have picked a file up: a file is never handed over twice on its own.
    retransmitsSafely: false,
    configured: (tx: WriteTx, companyId: string) => hasAchRail(tx, deps.environment, companyId),
    queue: (tx: WriteTx, entry: NewBatchEntry, now: number) => queueAchEntry(tx, entry, now),
    jobHandlers: (moves) => achJobHandlers(deps, moves),
  };
}
