/**
 * NACHA files (pure): building origination files with the npm library nach2, checking any file
 * strictly (record lengths, blocking, batch and file control totals, entry hash, trace prefixes),
 * reading return and notice-of-change files, and writing them (the sandbox bank, tests).
 * CONTRACT STUB: owned by the NACHA helper, who replaces every body.
 */
import type { Result } from "../platform/result.ts";

/** 22/32: credit to checking/savings; 27/37: debit of checking/savings. */
export type OriginationCode = 22 | 27 | 32 | 37;

export interface NachaEntry {
  readonly transactionCode: OriginationCode;
  /** The receiving account's 9-digit routing number (receiving DFI + check digit). */
  readonly routingNumber: string;
  /** At most 17 characters. */
  readonly accountNumber: string;
  readonly amountCents: number;
  /** At most 15 characters (the payout or funding id's tail). */
  readonly individualId: string;
  /** As given; the builder transliterates it to uppercase ASCII and cuts it to 22 characters. */
  readonly name: string;
  /** 15 digits: the ODFI's 8-digit routing, then a 7-digit sequence. */
  readonly traceNumber: string;
}

export interface NachaBatch {
  readonly entryClass: "PPD" | "CCD";
  /** At most 10 characters, e.g. `CLAIM PAY` or `FUNDING`. */
  readonly companyEntryDescription: string;
  /** YYYY-MM-DD. */
  readonly effectiveDate: string;
  /** Credits only (220), debits only (225), or both (200, a balanced batch with its offset). */
  readonly entries: readonly NachaEntry[];
}

export interface NachaFileModel {
  /** The bank's 9-digit routing number (written with a leading space). */
  readonly immediateDestination: string;
  readonly immediateDestinationName: string;
  /** 10 characters (often `1` + the company's TIN, or a space + routing). */
  readonly immediateOrigin: string;
  readonly immediateOriginName: string;
  /** At most 16 characters, uppercase ASCII. */
  readonly companyName: string;
  /** 10 characters. */
  readonly companyIdentification: string;
  /** The ODFI's 8-digit identification (routing without its check digit). */
  readonly odfi: string;
  /** Bank-local creation date (YYYY-MM-DD) and time (HHMM). */
  readonly createdDate: string;
  readonly createdTime: string;
  /** A–Z then 0–9. */
  readonly fileIdModifier: string;
  readonly batches: readonly NachaBatch[];
}

/** One entry detail record as the checker read it back. */
export interface CheckedEntry {
  readonly transactionCode: number;
  readonly routingNumber: string;
  readonly accountNumber: string;
  readonly amountCents: number;
  readonly individualId: string;
  readonly name: string;
  readonly traceNumber: string;
}

export interface CheckedBatch {
  readonly serviceClassCode: number;
  readonly entryClass: string;
  readonly companyName: string;
  readonly effectiveDate: string;
  readonly entries: readonly CheckedEntry[];
}

/** What a strict check of a whole file found: its header facts and its totals. */
export interface NachaFileSummary {
  readonly immediateDestination: string;
  readonly immediateOrigin: string;
  readonly fileIdModifier: string;
  readonly batches: readonly CheckedBatch[];
  /** Entry and addenda records, as the file control counts them. */
  readonly entryAndAddendaCount: number;
  /** The file control's entry hash: 10 digits. */
  readonly entryHash: string;
  readonly creditTotalCents: number;
  readonly debitTotalCents: number;
  readonly blockCount: number;
}

/** Builds an origination file with nach2 (CRLF, blocking factor 10), then checks it strictly. */
export function buildNachaFile(_model: NachaFileModel): Promise<string> {
  throw new Error("not built yet");
}

/**
 * Checks a whole file: every record 94 characters, blocks of 10 padded with 9s, each batch's and
 * the file's counts, totals and entry hash, and (given `odfi`) that every trace starts with it.
 */
export function checkNachaFile(
  _text: string,
  _expect?: { readonly odfi?: string },
): Result<NachaFileSummary, "malformed_file"> {
  throw new Error("not built yet");
}

/** A name in uppercase ASCII (accents removed, other characters dropped), cut to `max`. */
export function transliterate(_name: string, _max: number): string {
  throw new Error("not built yet");
}

/** The file ID modifier of the `index`-th file of a day (0: A … 25: Z, 26: 0 … 35: 9), or null. */
export function fileIdModifierAt(_index: number): string | null {
  throw new Error("not built yet");
}

/** A return (R-code, addenda 99) or a notice of change (C-code, addenda 98) read from a file. */
export interface ReturnedEntry {
  readonly kind: "return" | "correction";
  readonly code: string;
  /** The original entry's trace number, from the addenda record. */
  readonly originalTraceNumber: string;
  /** The original receiving DFI (8 digits), from the addenda record. */
  readonly receivingDfi: string;
  /** The amount of the return entry (0 for a notice of change). */
  readonly amountCents: number;
  readonly transactionCode: number;
  /** A notice of change's corrected data (29 characters as written). */
  readonly correctedData: string | null;
  /** Where it is in the file, for reports. */
  readonly line: number;
}

export interface ReturnFile {
  readonly immediateDestination: string;
  readonly immediateOrigin: string;
  readonly entries: readonly ReturnedEntry[];
  /** Entries that could not be read (each with its line and what was wrong); never applied. */
  readonly problems: readonly { readonly line: number; readonly message: string }[];
}

/**
 * Reads a return / notice-of-change file. A file that is not NACHA at all (wrong lengths, no
 * header, bad control totals) is refused whole; a single unreadable entry is a problem.
 */
export function parseReturnFile(_text: string): Result<ReturnFile, "malformed_file"> {
  throw new Error("not built yet");
}

/** What the bank's corrected data says, per change code (C01, C02, C03, C05, C06, C07). */
export interface Correction {
  readonly routingNumber?: string;
  readonly accountNumber?: string;
  readonly accountType?: "checking" | "savings";
}

/** The corrected details of a notice of change, or null when the data does not fit its code. */
export function readCorrection(_code: string, _correctedData: string): Correction | null {
  throw new Error("not built yet");
}

/** One return or notice of change to write, for the original entry it answers. */
export interface ReturnToWrite {
  readonly kind: "return" | "correction";
  readonly code: string;
  readonly original: {
    readonly traceNumber: string;
    readonly transactionCode: number;
    readonly routingNumber: string;
    readonly accountNumber: string;
    readonly amountCents: number;
    readonly individualId: string;
    readonly name: string;
    readonly entryClass: "PPD" | "CCD";
  };
  /** For a correction: the corrected details, written in the code's layout. */
  readonly correction?: Correction;
}

/**
 * Writes a return / notice-of-change file as an RDFI's bank sends it back to the originator
 * (what the sandbox bank produces, and what tests import).
 */
export function buildReturnFile(_model: {
  readonly immediateDestination: string;
  readonly immediateOrigin: string;
  readonly companyName: string;
  readonly companyIdentification: string;
  /** The returning bank's 8-digit identification (trace prefix of the return entries). */
  readonly rdfi: string;
  readonly createdDate: string;
  readonly createdTime: string;
  readonly fileIdModifier: string;
  readonly entries: readonly ReturnToWrite[];
}): string {
  throw new Error("not built yet");
}
