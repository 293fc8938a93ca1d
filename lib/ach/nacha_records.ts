/**
 * NACHA records (pure): the fixed 94-character layout, read into a file's structure with every
 * whole-file rule checked (record lengths, record order, 10-record blocks, batch and file control
 * counts, entry hash and totals), and written field by field. The strict checker and the return
 * file reader both start here; the return file writer writes with it.
 */
import { ok, refuse, type Result } from "../platform/result.ts";

export const RECORD_LENGTH = 94;
export const BLOCKING_FACTOR = 10;
/** The line that fills the last block: 94 nines. */
export const PADDING_RECORD = "9".repeat(RECORD_LENGTH);
/** The entry hash and the file control's counts keep this many digits (the rightmost). */
const ENTRY_HASH_MODULUS = 10_000_000_000;

/** Demand and savings credits: returns/NOCs (21, 31), live (22, 32), prenotes (23, 33), zero (24, 34). */
export const CREDIT_CODES: ReadonlySet<number> = new Set([21, 22, 23, 24, 31, 32, 33, 34]);
/** Demand and savings debits: returns/NOCs (26, 36), live (27, 37), prenotes (28, 38), zero (29, 39). */
export const DEBIT_CODES: ReadonlySet<number> = new Set([26, 27, 28, 29, 36, 37, 38, 39]);

/** Service class codes: mixed, credits only, debits only. */
export const SERVICE_CLASS_MIXED = 200;
export const SERVICE_CLASS_CREDITS = 220;
export const SERVICE_CLASS_DEBITS = 225;

/** One record and its 1-based line number in the file. */
export interface RecordLine {
  readonly line: number;
  readonly text: string;
}

export interface ReadEntry {
  readonly record: RecordLine;
  readonly addenda: readonly RecordLine[];
}

export interface ReadBatch {
  readonly header: RecordLine;
  readonly entries: readonly ReadEntry[];
  readonly control: RecordLine;
}

export interface ReadFile {
  readonly header: RecordLine;
  readonly batches: readonly ReadBatch[];
  readonly control: RecordLine;
  readonly lineCount: number;
}

/** The characters at 1-based positions `from`..`to` (inclusive), as the NACHA layout names them. */
export function field(record: string, from: number, to: number): string {
  return record.slice(from - 1, to);
}

/** A left-justified alphanumeric field: padded with spaces, or cut, to `width`. */
export function alpha(value: string, width: number): string {
  return value.slice(0, width).padEnd(width, " ");
}

/** A right-justified numeric field: zero-padded to `width`; a value wider than that is a bug. */
export function numeric(value: number | string, width: number): string {
  const digits = String(value);
  if (!/^\d+$/.test(digits) || digits.length > width) {
    throw new Error(`numeric field of ${width} digits cannot hold ${JSON.stringify(digits)}`);
  }
  return digits.padStart(width, "0");
}

/** The last 10 digits of a sum of receiving DFI identifications. */
export function entryHashOf(sum: number): string {
  return String(sum % ENTRY_HASH_MODULUS).padStart(10, "0");
}

/** Whether a 9-digit routing number's check digit verifies (ABA weights 3, 7, 1). */
export function routingCheckDigitValid(routing: string): boolean {
  if (!/^\d{9}$/.test(routing)) return false;
  const d = [...routing].map(Number);
  return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])) % 10 === 0;
}

/** YYMMDD → YYYY-MM-DD when it is a calendar date, else null. */
export function isoDateOf(yymmdd: string): string | null {
  if (!/^\d{6}$/.test(yymmdd)) return null;
  const year = 2000 + Number(yymmdd.slice(0, 2));
  const month = Number(yymmdd.slice(2, 4));
  const day = Number(yymmdd.slice(4, 6));
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return `${year}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
}

/** YYYY-MM-DD → YYMMDD; anything else is a caller's bug. */
export function yymmddOf(isoDate: string): string {
  const match = /^20(\d\d)-(\d\d)-(\d\d)$/.exec(isoDate);
  if (!match || isoDateOf(`${match[1]}${match[2]}${match[3]}`) === null) {
    throw new Error(`date ${JSON.stringify(isoDate)} is not YYYY-MM-DD in 2000-2099`);
  }
  return `${match[1]}${match[2]}${match[3]}`;
}

type Malformed = Result<never, "malformed_file">;

function malformed(line: number | null, rule: string): Malformed {
  const where = line === null ? "" : `line ${line}: `;
  return refuse("malformed_file", `${where}${rule}`, line === null ? {} : { details: { line } });
}

/** Splits a file into records: CRLF or LF ends, a final line end optional. */
function linesOf(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * The DFI account number (positions 13-29) of each entry detail record, in file order: what a
 * bank transport is handed beside a file that was checked when it was built.
 */
export function entryAccountNumbers(text: string): string[] {
  return linesOf(text).filter((record) => record[0] === "6")
    .map((record) => field(record, 13, 29).trim());
}

/** Whether a transaction code is a credit (true), a debit (false), or neither (null). */
export function isCreditCode(code: number): boolean | null {
  if (CREDIT_CODES.has(code)) return true;
  if (DEBIT_CODES.has(code)) return false;
  return null;
}

/**
 * Reads a file's records into header, batches (entries with their addenda) and control, and
 * refuses it whole when it breaks a rule of the whole file: a record that is not 94 printable
 * ASCII characters, records out of order, blocks not of 10, or a count, entry hash or total of a
 * batch or file control that does not match its records.
 */
export function readNachaRecords(text: string): Result<ReadFile, "malformed_file"> {
  if (text.length === 0) {
    return malformed(null, "the file is empty (a NACHA file starts with a file header record)");
  }
  const lines = linesOf(text);
  for (let i = 0; i < lines.length; i++) {
    const record = lines[i];
    if (record.length !== RECORD_LENGTH) {
      return malformed(
        i + 1,
        `a record must be ${RECORD_LENGTH} characters, got ${record.length}`,
      );
    }
    if (!/^[\x20-\x7E]*$/.test(record)) {
      return malformed(i + 1, "a record may hold printable ASCII characters only");
    }
  }
  const at = (i: number): RecordLine => ({ line: i + 1, text: lines[i] });
  if (lines[0][0] !== "1") {
    return malformed(
      1,
      `the file must start with a file header record (type 1), got type ${
        JSON.stringify(lines[0][0])
      }`,
    );
  }
  const header = at(0);
  const headerProblem = fileHeaderProblem(header.text);
  if (headerProblem) return malformed(1, headerProblem);

  const batches: ReadBatch[] = [];
  const fileSums: Sums = { entryAndAddendaCount: 0, hashSum: 0, debitCents: 0, creditCents: 0 };
  let i = 1;
  while (i < lines.length && lines[i][0] === "5") {
    const batchHeader = at(i);
    const batchProblem = batchHeaderProblem(batchHeader.text);
    if (batchProblem) return malformed(batchHeader.line, batchProblem);
    i++;
    const entries: { record: RecordLine; addenda: RecordLine[] }[] = [];
    while (i < lines.length && (lines[i][0] === "6" || lines[i][0] === "7")) {
      if (lines[i][0] === "6") {
        entries.push({ record: at(i), addenda: [] });
      } else if (entries.length === 0) {
        return malformed(
          i + 1,
          "an addenda record (type 7) must follow an entry detail record (type 6)",
        );
      } else {
        entries[entries.length - 1].addenda.push(at(i));
      }
      i++;
    }
    if (i >= lines.length || lines[i][0] !== "8") {
      const seen = i < lines.length
        ? `record type ${JSON.stringify(lines[i][0])}`
        : "the end of the file";
      return malformed(
        Math.min(i + 1, lines.length),
        `the batch that starts on line ${batchHeader.line} must end with a batch control record (type 8), got ${seen}`,
      );
    }
    if (entries.length === 0) {
      return malformed(
        batchHeader.line,
        "a batch must hold at least one entry detail record (type 6)",
      );
    }
    const batch = { header: batchHeader, entries, control: at(i) };
    const sums = batchSums(batch);
    if (!sums.ok) return sums;
    const controlProblem = batchControlProblem(batch, sums.value);
    if (controlProblem) return malformed(batch.control.line, controlProblem);
    batches.push(batch);
    fileSums.entryAndAddendaCount += sums.value.entryAndAddendaCount;
    fileSums.hashSum += sums.value.hashSum;
    fileSums.debitCents += sums.value.debitCents;
    fileSums.creditCents += sums.value.creditCents;
    i++;
  }
  if (lines[i] === PADDING_RECORD) {
    return malformed(
      i + 1,
      "padding records of 94 nines come before any file control record (type 9)",
    );
  }
  if (i >= lines.length || lines[i][0] !== "9") {
    const seen = i < lines.length
      ? `record type ${JSON.stringify(lines[i][0])}`
      : "the end of the file";
    return malformed(
      Math.min(i + 1, lines.length),
      `expected a batch header (type 5) or the file control record (type 9), got ${seen}`,
    );
  }
  const control = at(i);
  for (let p = i + 1; p < lines.length; p++) {
    if (lines[p] !== PADDING_RECORD) {
      return malformed(
        p + 1,
        "after the file control record only padding records of 94 nines may follow",
      );
    }
  }
  if (lines.length % BLOCKING_FACTOR !== 0) {
    return malformed(
      null,
      `the file has ${lines.length} records; blocks are of ${BLOCKING_FACTOR} records (blocking factor 10), the last one padded with records of 94 nines`,
    );
  }
  if (lines.length - 1 - i >= BLOCKING_FACTOR) {
    return malformed(
      control.line + BLOCKING_FACTOR,
      "a whole block of padding records follows the file control record",
    );
  }
  const file = { header, batches, control, lineCount: lines.length };
  const fileProblem = fileControlProblem(file, fileSums);
  if (fileProblem) return malformed(control.line, fileProblem);
  return ok(file);
}

function fileHeaderProblem(record: string): string | null {
  if (field(record, 2, 3) !== "01") {
    return `the priority code (positions 2-3) must be 01, got ${
      JSON.stringify(field(record, 2, 3))
    }`;
  }
  if (!/^( \d{9}|\d{10})$/.test(field(record, 4, 13))) {
    return `the immediate destination (positions 4-13) must be a space and 9 digits, got ${
      JSON.stringify(field(record, 4, 13))
    }`;
  }
  if (field(record, 14, 23).trim() === "") return "the immediate origin (positions 14-23) is blank";
  if (isoDateOf(field(record, 24, 29)) === null) {
    return `the file creation date (positions 24-29) must be YYMMDD, got ${
      JSON.stringify(field(record, 24, 29))
    }`;
  }
  if (!/^(([01]\d|2[0-3])[0-5]\d| {4})$/.test(field(record, 30, 33))) {
    return `the file creation time (positions 30-33) must be HHMM, got ${
      JSON.stringify(field(record, 30, 33))
    }`;
  }
  if (!/^[A-Z0-9]$/.test(field(record, 34, 34))) {
    return `the file ID modifier (position 34) must be A-Z or 0-9, got ${
      JSON.stringify(field(record, 34, 34))
    }`;
  }
  if (field(record, 35, 37) !== "094") {
    return `the record size (positions 35-37) must be 094, got ${
      JSON.stringify(field(record, 35, 37))
    }`;
  }
  if (field(record, 38, 39) !== "10") {
    return `the blocking factor (positions 38-39) must be 10, got ${
      JSON.stringify(field(record, 38, 39))
    }`;
  }
  if (field(record, 40, 40) !== "1") {
    return `the format code (position 40) must be 1, got ${JSON.stringify(field(record, 40, 40))}`;
  }
  return null;
}

function batchHeaderProblem(record: string): string | null {
  const serviceClass = Number(field(record, 2, 4));
  if (
    ![SERVICE_CLASS_MIXED, SERVICE_CLASS_CREDITS, SERVICE_CLASS_DEBITS].includes(serviceClass) ||
    !/^\d{3}$/.test(field(record, 2, 4))
  ) {
    return `the service class code (positions 2-4) must be 200, 220 or 225, got ${
      JSON.stringify(field(record, 2, 4))
    }`;
  }
  if (!/^[A-Z]{3}$/.test(field(record, 51, 53))) {
    return `the standard entry class code (positions 51-53) must be 3 letters, got ${
      JSON.stringify(field(record, 51, 53))
    }`;
  }
  if (!/^\d{8}$/.test(field(record, 80, 87))) {
    return `the originating DFI identification (positions 80-87) must be 8 digits, got ${
      JSON.stringify(field(record, 80, 87))
    }`;
  }
  if (!/^\d{7}$/.test(field(record, 88, 94))) {
    return `the batch number (positions 88-94) must be 7 digits, got ${
      JSON.stringify(field(record, 88, 94))
    }`;
  }
  return null;
}

interface Sums {
  entryAndAddendaCount: number;
  hashSum: number;
  debitCents: number;
  creditCents: number;
}

/** What a batch's entries add up to; an entry that cannot be added refuses the whole file. */
function batchSums(batch: ReadBatch): Result<Sums, "malformed_file"> {
  const serviceClass = Number(field(batch.header.text, 2, 4));
  const sums: Sums = { entryAndAddendaCount: 0, hashSum: 0, debitCents: 0, creditCents: 0 };
  for (const entry of batch.entries) {
    const record = entry.record.text;
    const code = field(record, 2, 3);
    const credit = /^\d\d$/.test(code) ? isCreditCode(Number(code)) : null;
    if (credit === null) {
      return malformed(
        entry.record.line,
        `transaction code ${
          JSON.stringify(code)
        } (positions 2-3) is not a checking or savings credit or debit code`,
      );
    }
    if (credit && serviceClass === SERVICE_CLASS_DEBITS) {
      return malformed(
        entry.record.line,
        `credit transaction code ${code} in a debits-only batch (service class 225)`,
      );
    }
    if (!credit && serviceClass === SERVICE_CLASS_CREDITS) {
      return malformed(
        entry.record.line,
        `debit transaction code ${code} in a credits-only batch (service class 220)`,
      );
    }
    if (!/^\d{8}$/.test(field(record, 4, 11))) {
      return malformed(
        entry.record.line,
        `the receiving DFI identification (positions 4-11) must be 8 digits, got ${
          JSON.stringify(field(record, 4, 11))
        }`,
      );
    }
    if (!/^\d{10}$/.test(field(record, 30, 39))) {
      return malformed(
        entry.record.line,
        `the amount (positions 30-39) must be 10 digits, got ${
          JSON.stringify(field(record, 30, 39))
        }`,
      );
    }
    for (const addenda of entry.addenda) {
      if (!/^\d\d$/.test(field(addenda.text, 2, 3))) {
        return malformed(
          addenda.line,
          `the addenda type code (positions 2-3) must be 2 digits, got ${
            JSON.stringify(field(addenda.text, 2, 3))
          }`,
        );
      }
    }
    const amount = Number(field(record, 30, 39));
    sums.entryAndAddendaCount += 1 + entry.addenda.length;
    sums.hashSum += Number(field(record, 4, 11));
    if (credit) sums.creditCents += amount;
    else sums.debitCents += amount;
  }
  return ok(sums);
}

/** Compares a control's numeric field with what the records add up to. */
function mismatch(
  record: string,
  from: number,
  to: number,
  name: string,
  expected: string,
): string | null {
  const written = field(record, from, to);
  if (written === expected) return null;
  return `the ${name} (positions ${from}-${to}) is ${
    JSON.stringify(written)
  }, the records add up to ${expected}`;
}

function batchControlProblem(batch: ReadBatch, sums: Sums): string | null {
  const header = batch.header.text;
  const control = batch.control.text;
  if (field(control, 2, 4) !== field(header, 2, 4)) {
    return `the service class code (positions 2-4) ${
      JSON.stringify(field(control, 2, 4))
    } differs from the batch header's ${field(header, 2, 4)}`;
  }
  if (field(control, 45, 54) !== field(header, 41, 50)) {
    return `the company identification (positions 45-54) ${
      JSON.stringify(field(control, 45, 54))
    } differs from the batch header's ${JSON.stringify(field(header, 41, 50))}`;
  }
  if (field(control, 80, 87) !== field(header, 80, 87)) {
    return `the originating DFI identification (positions 80-87) ${
      JSON.stringify(field(control, 80, 87))
    } differs from the batch header's ${field(header, 80, 87)}`;
  }
  if (field(control, 88, 94) !== field(header, 88, 94)) {
    return `the batch number (positions 88-94) ${
      JSON.stringify(field(control, 88, 94))
    } differs from the batch header's ${field(header, 88, 94)}`;
  }
  return mismatch(control, 5, 10, "entry/addenda count", numeric(sums.entryAndAddendaCount, 6)) ??
    mismatch(control, 11, 20, "entry hash", entryHashOf(sums.hashSum)) ??
    mismatch(control, 21, 32, "total debit entry dollar amount", numeric(sums.debitCents, 12)) ??
    mismatch(control, 33, 44, "total credit entry dollar amount", numeric(sums.creditCents, 12));
}

function fileControlProblem(file: ReadFile, sums: Sums): string | null {
  const control = file.control.text;
  return mismatch(control, 2, 7, "batch count", numeric(file.batches.length, 6)) ??
    mismatch(control, 8, 13, "block count", numeric(file.lineCount / BLOCKING_FACTOR, 6)) ??
    mismatch(control, 14, 21, "entry/addenda count", numeric(sums.entryAndAddendaCount, 8)) ??
    mismatch(control, 22, 31, "entry hash", entryHashOf(sums.hashSum)) ??
    mismatch(
      control,
      32,
      43,
      "total debit entry dollar amount in file",
      numeric(sums.debitCents, 12),
    ) ??
    mismatch(
      control,
      44,
      55,
      "total credit entry dollar amount in file",
      numeric(sums.creditCents, 12),
    );
}
