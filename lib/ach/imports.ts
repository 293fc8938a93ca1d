/**
 * Imports of return and notice-of-change files (from the live SFTP inbound directory, the CLI,
 * the console, and the sandbox bank): one import is one write unit; a file already imported (by
 * SHA-256) changes nothing; an entry applies only when it matches an entry this service sent, by
 * original trace, receiving DFI and amount; unmatched or malformed entries are reported, never
 * applied. CONTRACT STUB: owned by the imports helper.
 */
import type { Database } from "../../db/client.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Result } from "../platform/result.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";

export interface AchImportRequest {
  readonly content: Uint8Array;
  readonly fileName: string;
  readonly source: "sftp" | "cli" | "console" | "sandbox_bank";
  /** The operator who imported it (null for the service itself). */
  readonly importedBy: string | null;
}

export interface AchImportReport {
  readonly importId: string;
  /** True when the same file (by SHA-256) was imported before: nothing changed. */
  readonly duplicate: boolean;
  readonly sha256: string;
  readonly returns: number;
  readonly corrections: number;
  readonly applied: number;
  /** Entries not applied, each with its trace (when readable) and why. */
  readonly notApplied: readonly { readonly trace: string | null; readonly reason: string }[];
}

export interface AchImportDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
}

/** Imports one file; refuses a file over 10 MiB or not NACHA, writing nothing. */
export function importAchFile(
  _deps: AchImportDeps,
  _request: AchImportRequest,
  _now: number,
): Promise<Result<AchImportReport, "file_too_large" | "malformed_file">> {
  throw new Error("not built yet");
}
