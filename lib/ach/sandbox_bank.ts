/**
 * The sandbox bank: it takes the test environment's ACH files like a bank would, and answers with
 * real NACHA return files. It accepts a file at once, except the first transmission of a file that
 * carries an entry to 000222222227 (refused; the retry succeeds). Two banking days after the
 * effective date it writes a return file (R03) for the entries to 000111111116, which goes
 * through the same import code as a bank's. CONTRACT STUB: owned by the imports/SFTP helper.
 */
import type { JobHandler } from "../../db/scheduler.ts";
import type { AchImportDeps } from "./imports.ts";
import type { UploadAnswer } from "./transport.ts";

/** The job kind that writes and imports the sandbox bank's return file of one ACH file. */
export const SANDBOX_RETURNS_JOB = "ach.sandbox_returns";

/**
 * The sandbox bank's answer to a transmission of a file whose entries go to `accountNumbers`;
 * `attempt` is 1 for the first transmission of the file.
 */
export function sandboxBankUpload(
  _fileName: string,
  _accountNumbers: readonly string[],
  _attempt: number,
): UploadAnswer {
  throw new Error("not built yet");
}

/**
 * The handler of `ach.sandbox_returns` (subject: the ACH file's batch id), scheduled when a test
 * file is transmitted, due at `sandboxReturnsAt(effective date)`: writes the return file of its
 * R03 entries, if any, and imports it.
 */
export function sandboxReturnsJob(_deps: AchImportDeps): JobHandler {
  throw new Error("not built yet");
}
