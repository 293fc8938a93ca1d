/**
 * What operators do with ACH files (CLI and, later, the console): mark a file uploaded by hand as
 * transmitted, void a built file (its entries go back to the queue), resolve an in-doubt file
 * after asking the bank, and read a file's content. Live changes of `resolve` wait for a second
 * admin (`bank_file.resolve`); every call here writes its audit row in its unit.
 * CONTRACT STUB: owned by the ACH pipeline helper.
 */
import type { Database } from "../../db/client.ts";
import type { AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Result } from "../platform/result.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";

export interface AchFileDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  /** Live: the database holding approvals and operators (for dual control). */
  readonly liveDatabase: Database;
}

/** Why an operator's file action was refused. */
export type AchFileRefusal =
  | "ach_file_not_found"
  | "ach_file_not_built"
  | "ach_file_not_in_doubt"
  | "ach_file_has_sftp_target"
  | "ach_file_awaits_release";

/** The outcome of an action: the file's status after it, or the approval it waits for. */
export interface AchFileActionResult {
  readonly fileId: string;
  readonly status: string;
  readonly approvalId: string | null;
}

/** `ach:mark-sent`: a built file without an SFTP target was uploaded by hand; it is transmitted. */
export function markAchFileSent(
  _deps: AchFileDeps,
  _actor: AuditActor,
  _fileId: string,
  _now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  throw new Error("not built yet");
}

/** `ach:void`: a built file is voided; its entries are queued for the next cutoff. */
export function voidAchFile(
  _deps: AchFileDeps,
  _actor: AuditActor,
  _fileId: string,
  _now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  throw new Error("not built yet");
}

/** `ach:resolve`: an in-doubt file was (not) received by the bank; live waits for a second admin. */
export function resolveAchFile(
  _deps: AchFileDeps,
  _actor: AuditActor,
  _fileId: string,
  _as: "transmitted" | "voided",
  _now: number,
): Promise<Result<AchFileActionResult, AchFileRefusal>> {
  throw new Error("not built yet");
}

/** `ach:download` / `ach:show`: the file's plain content (audited by the caller's command). */
export function readAchFileContent(
  _deps: AchFileDeps,
  _fileId: string,
): Promise<Result<{ readonly content: string; readonly sha256: string }, "ach_file_not_found">> {
  throw new Error("not built yet");
}
