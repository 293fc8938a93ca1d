/**
 * Paid-items files (issue 19), pure: the bank's CSV of the checks it paid (check number, amount,
 * paid date, a header row naming the columns in any order), and what each paid item means for
 * the register. A file without one of the three columns is refused whole, naming the column; a
 * row that cannot be read is reported and not applied; a paid item that does not match its check
 * cleanly is an exception, never completed silently.
 */
import { ok, refuse, type Result } from "../platform/result.ts";

/** A paid-items file is at most this big; a larger one is refused before it is read. */
export const PAID_IMPORT_BYTES_MAX = 10 * 1024 * 1024;
/** At most this many paid items in one file (a bank's daily file is far smaller). */
export const PAID_ITEMS_MAX = 50_000;

/** The columns a paid-items file must have, by the names its header gives them. */
export const paidItemColumns = ["check_number", "amount", "paid_date"] as const;
export type PaidItemColumn = (typeof paidItemColumns)[number];

/** Header names banks use for each column, compared without case, spaces, `_`, `-` or `#`. */
const columnAliases: Readonly<Record<PaidItemColumn, readonly string[]>> = {
  check_number: ["checknumber", "checkno", "check", "serial", "serialnumber"],
  amount: ["amount", "paidamount", "amountpaid"],
  paid_date: ["paiddate", "datepaid", "postdate", "posteddate", "date"],
};

export interface PaidItem {
  /** The file's line (1 is the header). */
  readonly line: number;
  readonly checkNumber: number;
  readonly amountCents: number;
  /** YYYY-MM-DD. */
  readonly paidDate: string;
}

export interface MalformedRow {
  readonly line: number;
  readonly message: string;
}

export interface PaidItemsFile {
  readonly items: readonly PaidItem[];
  readonly malformed: readonly MalformedRow[];
}

export type PaidFileRefusal = "missing_column" | "malformed_file" | "file_too_large";

/** Reads a paid-items CSV; refuses a file whose header lacks a column, naming it. */
export function parsePaidItems(text: string): Result<PaidItemsFile, PaidFileRefusal> {
  const rows = csvRows(text.replace(/^\uFEFF/, ""));
  const header = rows.find((row) => row.cells.some((cell) => cell.trim() !== ""));
  if (!header) {
    return refuse(
      "missing_column",
      "the file is empty: it needs a header row naming check_number, amount and paid_date",
      {
        field: "check_number",
      },
    );
  }
  const positions = new Map<PaidItemColumn, number>();
  header.cells.forEach((cell, index) => {
    const name = cell.trim().toLowerCase().replace(/[\s_#\-.]/g, "");
    for (const column of paidItemColumns) {
      if (!positions.has(column) && columnAliases[column].includes(name)) {
        positions.set(column, index);
      }
    }
  });
  for (const column of paidItemColumns) {
    if (!positions.has(column)) {
      return refuse(
        "missing_column",
        `the header row (line ${header.line}) has no ${column} column; it names ${
          JSON.stringify(header.cells.map((cell) => cell.trim()))
        }`,
        { field: column },
      );
    }
  }
  const items: PaidItem[] = [];
  const malformed: MalformedRow[] = [];
  for (const row of rows) {
    if (row.line <= header.line || row.cells.every((cell) => cell.trim() === "")) continue;
    if (items.length + malformed.length >= PAID_ITEMS_MAX) {
      return refuse("file_too_large", `the file has more than ${PAID_ITEMS_MAX} paid items`, {
        field: "file",
      });
    }
    const cell = (column: PaidItemColumn) => (row.cells[positions.get(column)!] ?? "").trim();
    const checkNumber = parseCheckNumber(cell("check_number"));
    const amountCents = parseAmount(cell("amount"));
    const paidDate = parsePaidDate(cell("paid_date"));
    const problems = [
      checkNumber === null
        ? `check_number ${JSON.stringify(cell("check_number"))} is not a positive whole number`
        : null,
      amountCents === null
        ? `amount ${JSON.stringify(cell("amount"))} is not dollars with at most two decimals`
        : null,
      paidDate === null
        ? `paid_date ${JSON.stringify(cell("paid_date"))} is not a date (YYYY-MM-DD or MM/DD/YYYY)`
        : null,
    ].filter((problem) => problem !== null);
    if (problems.length > 0) {
      malformed.push({ line: row.line, message: problems.join("; ") });
    } else {
      items.push({
        line: row.line,
        checkNumber: checkNumber!,
        amountCents: amountCents!,
        paidDate: paidDate!,
      });
    }
  }
  return ok({ items, malformed });
}

/** What a paid item is for the register, given the check of its number as it stands now. */
export type PaidItemDecision =
  | { readonly kind: "match" }
  | {
    readonly kind: "exception";
    readonly exception: CheckExceptionKind;
    readonly message: string;
  };

export type CheckExceptionKind =
  | "amount_mismatch"
  | "voided"
  | "stale"
  | "unknown"
  | "duplicate"
  | "not_sent";

/** The check facts a decision reads. */
export interface RegisterFacts {
  readonly status: "issued" | "paid" | "voided" | "stale";
  readonly amountCents: number;
  readonly paidDate: string | null;
  /** Whether the positive-pay file carrying the issue was transmitted or marked sent. */
  readonly issueSent: boolean;
}

/** Decides one paid item against its check (null: the register never gave that number). */
export function decidePaidItem(item: PaidItem, check: RegisterFacts | null): PaidItemDecision {
  const number = item.checkNumber;
  if (check === null) {
    return exception(
      "unknown",
      `check ${number} is not in the register: the bank paid a check this service never wrote`,
    );
  }
  switch (check.status) {
    case "paid":
      return exception(
        "duplicate",
        `check ${number} was paid already on ${check.paidDate}: the bank paid it twice`,
      );
    case "voided":
      return exception("voided", `check ${number} was voided, yet the bank paid it`);
    case "stale":
      return exception("stale", `check ${number} went stale, yet the bank paid it`);
    case "issued":
      if (!check.issueSent) {
        return exception(
          "not_sent",
          `check ${number} was paid before the positive-pay file carrying it was sent to the bank`,
        );
      }
      if (item.amountCents !== check.amountCents) {
        return exception(
          "amount_mismatch",
          `check ${number} was written for ${check.amountCents} cents and paid for ${item.amountCents}`,
        );
      }
      return { kind: "match" };
  }
}

const exception = (kind: CheckExceptionKind, message: string): PaidItemDecision => ({
  kind: "exception",
  exception: kind,
  message,
});

/**
 * The ledger effect of an exception if the bank's payment stands, in cents: positive, money the
 * bank paid that the ledger had released (from available to the bank); negative, the part of a
 * check paid for less than it was written for (back from the bank to available).
 */
export function exceptionLedgerEffect(
  kind: CheckExceptionKind,
  paidAmountCents: number,
  issuedAmountCents: number | null,
): number {
  if (kind === "amount_mismatch" && issuedAmountCents !== null) {
    return paidAmountCents - issuedAmountCents;
  }
  return paidAmountCents;
}

/** How an operator closes an exception. */
export const exceptionResolutions = ["payment_stands", "bank_reversed"] as const;
export type ExceptionResolution = (typeof exceptionResolutions)[number];

/** At most this many characters of an operator's note on a resolution. */
export const RESOLUTION_NOTE_LENGTH_MAX = 500;

function parseCheckNumber(value: string): number | null {
  if (!/^\d{1,9}$/.test(value)) return null;
  const number = Number(value);
  return number > 0 ? number : null;
}

/** Dollars as the bank writes them ("1234.56", "1,234.56", "$1,234.56") to whole cents. */
function parseAmount(value: string): number | null {
  const match = /^\$?(\d{1,3}(?:,\d{3})+|\d{1,10})(?:\.(\d{1,2}))?$/.exec(value);
  if (!match) return null;
  const cents = Number(match[1].replaceAll(",", "")) * 100 +
    Number((match[2] ?? "").padEnd(2, "0"));
  return cents > 0 ? cents : null;
}

function parsePaidDate(value: string): string | null {
  let match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  let iso: string | null = null;
  if (match) iso = `${match[1]}-${match[2]}-${match[3]}`;
  match = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(value);
  if (match) iso = `${match[3]}-${match[1].padStart(2, "0")}-${match[2].padStart(2, "0")}`;
  if (iso === null) return null;
  const ms = Date.parse(`${iso}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().startsWith(iso) ? iso : null;
}

interface CsvRow {
  readonly line: number;
  readonly cells: string[];
}

/** RFC 4180 rows: quoted cells may hold commas, doubled quotes and line breaks. */
function csvRows(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  let cells: string[] = [];
  let cell = "";
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        if (char === "\n") line++;
        cell += char;
      }
    } else if (char === '"' && cell.trim() === "") {
      quoted = true;
      cell = "";
    } else if (char === ",") {
      cells.push(cell);
      cell = "";
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[i + 1] === "\n") i++;
      cells.push(cell);
      rows.push({ line: rowLine, cells });
      cells = [];
      cell = "";
      line++;
      rowLine = line;
    } else {
      cell += char;
    }
  }
  if (cell !== "" || cells.length > 0) {
    cells.push(cell);
    rows.push({ line: rowLine, cells });
  }
  return rows;
}
