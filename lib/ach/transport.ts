/**
 * How a built ACH file reaches the bank, and how the bank's files come back: SFTP in live (upload
 * under a temporary name, then rename), the sandbox bank in test, or nothing (the file waits for
 * an admin to download and upload it by hand, then `ach:mark-sent`).
 * CONTRACT STUB: owned by the imports/SFTP helper.
 */
import type { SftpTarget } from "./bank_settings.ts";

/** The answer of one upload. Throws when it is not known whether the bank has the file. */
export type UploadAnswer =
  | { readonly kind: "uploaded"; readonly remotePath: string }
  /** Nothing reached the bank (connection refused, authentication failed before any write). */
  | { readonly kind: "not_uploaded"; readonly reason: string };

/** Uploads `content` as `fileName` into the outbound directory: temporary name, then rename. */
export function uploadAchFile(
  _target: SftpTarget,
  _fileName: string,
  _content: Uint8Array,
): Promise<UploadAnswer> {
  throw new Error("not built yet");
}

/** One file found in the inbound directory. */
export interface InboundFile {
  readonly name: string;
  readonly content: Uint8Array;
}

/** Lists and downloads the inbound directory's files (not yet moved to its `processed/`). */
export function fetchInboundFiles(_target: SftpTarget): Promise<readonly InboundFile[]> {
  throw new Error("not built yet");
}

/** Moves an imported inbound file into `processed/`, so the next poll does not see it again. */
export function markInboundProcessed(_target: SftpTarget, _name: string): Promise<void> {
  throw new Error("not built yet");
}
