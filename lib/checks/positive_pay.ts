/**
 * The positive-pay issue file (pure): one CSV line per issued or voided check, in the columns,
 * date format, amount format and issue/void letters of the company's template, so the bank pays
 * only checks it was told of, for the amount it was told.
 */
import type {
  CheckAccount,
  PositivePayColumn,
  PositivePayDateFormat,
  PositivePayTemplate,
} from "./account.ts";

/** One line: an issue or a void of one check. */
export interface PositivePayLine {
  readonly action: "issue" | "void";
  readonly checkNumber: number;
  readonly amountCents: number;
  /** Bank-local issue date of the check, YYYY-MM-DD (a void carries its check's issue date). */
  readonly issueDate: string;
  readonly payeeName: string;
}

/** A date written in the template's format. */
export function formatPositivePayDate(date: string, format: PositivePayDateFormat): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) throw new Error(`a positive-pay date must be YYYY-MM-DD, got ${date}`);
  const [, year, month, day] = match;
  switch (format) {
    case "YYYY-MM-DD":
      return date;
    case "MM/DD/YYYY":
      return `${month}/${day}/${year}`;
    case "MMDDYYYY":
      return `${month}${day}${year}`;
    case "YYYYMMDD":
      return `${year}${month}${day}`;
    case "MM/DD/YY":
      return `${month}/${day}/${year.slice(2)}`;
    case "YYMMDD":
      return `${year.slice(2)}${month}${day}`;
  }
}

/** Whole cents as the template writes them: `1234.56` or `123456`. */
export function formatPositivePayAmount(
  cents: number,
  format: PositivePayTemplate["amountFormat"],
): string {
  if (!Number.isSafeInteger(cents) || cents < 0) {
    throw new Error(`a positive-pay amount must be whole cents, got ${cents}`);
  }
  if (format === "cents") return String(cents);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}

/** A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180). */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function cell(
  column: PositivePayColumn,
  line: PositivePayLine,
  account: CheckAccount,
): string {
  const template = account.positivePay;
  switch (column) {
    case "account":
      return account.accountNumber;
    case "check_number":
      return String(line.checkNumber);
    case "amount":
      return formatPositivePayAmount(line.amountCents, template.amountFormat);
    case "issue_date":
      return formatPositivePayDate(line.issueDate, template.dateFormat);
    case "payee_name":
      return line.payeeName;
    case "issue_void":
      return line.action === "issue" ? template.issueLetter : template.voidLetter;
  }
}

/** The file's text: the header (when the template has one), then one line per issue or void. */
export function positivePayCsv(account: CheckAccount, lines: readonly PositivePayLine[]): string {
  const columns = account.positivePay.columns;
  const rows = lines.map((line) =>
    columns.map((column) => csvField(cell(column, line, account))).join(",")
  );
  if (account.positivePay.header) rows.unshift(columns.join(","));
  return rows.map((row) => `${row}\r\n`).join("");
}
