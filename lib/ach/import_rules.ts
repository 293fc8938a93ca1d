/**
 * Which entry of an imported return or notice-of-change file applies, and how (pure): an entry
 * applies only to an entry this service sent, matched by original trace, receiving DFI and (for a
 * return) amount, in a state a return or a correction can still change. Every other entry is
 * reported with a reason and never applied.
 */
import { ok, refuse, type Result } from "../platform/result.ts";

/** An imported file larger than this is refused whole (`file_too_large`). */
export const ACH_IMPORT_BYTES_MAX = 10 * 1024 * 1024;

/**
 * An import applies at most this many of a file's entries in one write unit, with the event
 * loop's turns between units: the embedded database holds the service's thread for a unit's
 * statements and its commit, and a file of 200 returns applied in one unit held it about 0.2 to
 * 0.3 s (2,000: about 2 s) while every request waited. A return moves its payout with statements
 * of its own (about 1 ms of the thread's CPU each): 25 a unit held it 22 to 40 ms, 10 about 10.
 */
export const ACH_IMPORT_ENTRIES_PER_UNIT_MAX = 10;

/**
 * A job that writes or reads a return file and imports it holds its claim this long: the import
 * applies the file a unit at a time, resting while the API answers requests (a large file takes
 * minutes on a loaded machine), and a settlement due after it waits only while the claim holds.
 */
export const ACH_RETURNS_IMPORT_LEASE_MS = 10 * 60_000;

/**
 * The job kind that takes up an unfinished import from its kept content (subject: the import's
 * id), due when the import's claim (ACH_RETURNS_IMPORT_LEASE_MS) lapses.
 */
export const ACH_IMPORT_RESUME_JOB = "ach.resume_import";

/** How far an unfinished import went, and whether its resume job is taking it up now. */
export interface UnfinishedImport {
  /** "resuming" while its resume job runs; "stopped" otherwise. */
  readonly state: "resuming" | "stopped";
  /** The file's entries gone through (applied or reported), of `entries`. */
  readonly entriesDone: number;
  readonly entries: number;
}

/** An unfinished import in a few words, as the console and the CLI show it. */
export function unfinishedImportWords(unfinished: UnfinishedImport): string {
  const where = `entry ${unfinished.entriesDone} of ${unfinished.entries}`;
  return unfinished.state === "resuming" ? `resuming at ${where}` : `stopped at ${where}`;
}

/** Why an imported entry was not applied. */
export type NotAppliedReason =
  /** No entry this service sent has the original trace (or not one of the importing company). */
  | "unmatched_trace"
  /** The trace is ours, but the receiving DFI is not the one the entry went to. */
  | "dfi_mismatch"
  /** The trace is ours, but the return's amount is not the entry's. */
  | "amount_mismatch"
  /** The entry's file was voided: it never reached the bank under this trace. */
  | "entry_voided"
  /** The entry is still queued or in a built file: nothing was sent under this trace yet. */
  | "entry_not_sent"
  /** The entry was returned before (by an earlier file, or earlier in this one). */
  | "already_returned"
  /** A notice of change whose corrected details are on record already (the same notice again). */
  | "already_corrected"
  /** The payout of the entry was canceled. */
  | "payout_canceled"
  /** The entry settled, but its payout is not completed: only a completed payout comes back late. */
  | "payout_not_completed"
  /** R01 (insufficient funds) is not a reason a credit comes back. */
  | "r01_on_credit"
  /** A debit returned after it settled whose funding is not a cleared one (returned already, say). */
  | "funding_not_cleared"
  /** A notice of change of the company's own funding account: its bank settings must change. */
  | "company_account_correction"
  /** The entry could not be read, or its corrected data does not fit its change code. */
  | "malformed";

/** What the import does with an entry that applies. */
export type ImportAction =
  /** A credit returned before its settlement: the payout fails with the R-code. */
  | "return"
  /** A credit returned after its settlement: the payout stays completed, its money comes back. */
  | "late_return"
  /** A funding debit returned before its settlement: the funding is returned. */
  | "debit_return"
  /**
   * A funding debit returned after it cleared (R05, R07, R10, R29 may come 60 days later): the
   * money goes back from available, the rest owed by the line.
   */
  | "debit_return_after_clear"
  /** A notice of change: later entries to the account use the corrected details. */
  | "correction";

/** What the database says of the sent entry a returned entry's trace names. */
export interface SentEntryFacts {
  readonly status: "queued" | "batched" | "sent" | "completed" | "failed" | "voided";
  readonly direction: "credit" | "debit";
  /** The receiving DFI's 8 digits the entry went to. */
  readonly receivingDfi: string | null;
  readonly amountCents: number;
  readonly returnCode: string | null;
  /** The status of the entry's payout; null for a funding debit. */
  readonly payoutStatus: string | null;
}

/** The facts of one returned or corrected entry as the file states them. */
export interface ImportedEntryFacts {
  readonly kind: "return" | "correction";
  readonly code: string;
  readonly receivingDfi: string;
  readonly amountCents: number;
}

/** Decides what an imported entry does to the sent entry it names (null: no such entry). */
export function decideImportedEntry(
  imported: ImportedEntryFacts,
  sent: SentEntryFacts | null,
): Result<ImportAction, NotAppliedReason> {
  if (sent === null) {
    return refuse("unmatched_trace", "no entry this service sent has this trace");
  }
  if (sent.receivingDfi !== imported.receivingDfi) {
    return refuse(
      "dfi_mismatch",
      `the entry went to DFI ${sent.receivingDfi}, the file names ${imported.receivingDfi}`,
    );
  }
  if (imported.kind === "return" && sent.amountCents !== imported.amountCents) {
    return refuse(
      "amount_mismatch",
      `the entry was for ${sent.amountCents} cents, the return is for ${imported.amountCents}`,
    );
  }
  // An entry still sent takes its return even so: the outcome entry point keeps it for an operator.
  if (sent.payoutStatus === "canceled" && sent.status !== "sent") {
    return refuse("payout_canceled", "the entry's payout was canceled");
  }
  if (sent.status === "voided") {
    return refuse("entry_voided", "the entry's file was voided: nothing went out under this trace");
  }
  if (sent.status === "queued" || sent.status === "batched") {
    return refuse("entry_not_sent", `the entry is ${sent.status}: its file was not sent yet`);
  }
  if (imported.kind === "correction") {
    // A returned entry's payout was offered again or failed for good: its account is moot.
    if (sent.returnCode !== null || sent.status === "failed") {
      return refuse(
        "already_returned",
        `the entry was returned (${sent.returnCode}): a notice of change of it changes nothing`,
      );
    }
    if (sent.direction === "debit") {
      return refuse(
        "company_account_correction",
        "the notice of change is for the company's funding account: change its bank settings (bank:set)",
      );
    }
    return ok("correction");
  }
  if (sent.returnCode !== null || sent.status === "failed") {
    return refuse("already_returned", `the entry was returned before (${sent.returnCode})`);
  }
  if (sent.direction === "credit" && imported.code === "R01") {
    return refuse("r01_on_credit", "R01 (insufficient funds) does not apply to a credit");
  }
  if (sent.direction === "debit") {
    return ok(sent.status === "sent" ? "debit_return" : "debit_return_after_clear");
  }
  return ok(sent.status === "sent" ? "return" : "late_return");
}
