/**
 * A bank statement as both readers give it (BAI2 prior-day and camt.053), pure: the accounts it
 * reports, each for one day, with its balances and its transaction lines, and what kind of money
 * move the bank says each line is.
 */

/** What a statement line is, by its bank transaction code: what the matcher looks for. */
export const statementLineKinds = ["ach", "ach_return", "check_paid", "wire", "other"] as const;
export type StatementLineKind = (typeof statementLineKinds)[number];

export interface StatementLine {
  /** The line of the file the line starts on (a BAI2 16 record, a camt.053 `Ntry`). */
  readonly line: number;
  readonly direction: "credit" | "debit";
  /** Positive cents. */
  readonly amountCents: number;
  /** The bank's transaction code: a BAI2 type code, or camt.053's `Domn/Fmly/SubFmly` codes. */
  readonly typeCode: string;
  readonly kind: StatementLineKind;
  readonly bankReference: string | null;
  /** The originator's reference: a check's serial number, an ACH trace or company entry. */
  readonly customerReference: string | null;
  readonly text: string;
}

export interface StatementAccount {
  /** The line of the file the account starts on. */
  readonly line: number;
  readonly accountNumber: string;
  /** The day the account's activity is for (the as-of date), YYYY-MM-DD. */
  readonly date: string;
  /** Opening and closing ledger balances in cents (null: the bank did not report them). */
  readonly openingCents: number | null;
  readonly closingCents: number | null;
  readonly lines: readonly StatementLine[];
}

export interface BankStatement {
  readonly format: "bai2" | "camt.053";
  /** Who sent the file and the identifier it gave it. */
  readonly senderId: string;
  readonly fileId: string;
  readonly accounts: readonly StatementAccount[];
}

/** Why a file is refused whole: the line of the file and the reason. */
export interface StatementProblem {
  readonly line: number;
  readonly reason: string;
}

export type StatementRead =
  | { readonly ok: true; readonly statement: BankStatement }
  | { readonly ok: false; readonly problem: StatementProblem };

/** An imported statement file is at most this large. */
export const STATEMENT_BYTES_MAX = 10 * 1024 * 1024;
/** A statement reports at most this many accounts and lines (a day of a busy account fits). */
export const STATEMENT_ACCOUNTS_MAX = 1_000;
export const STATEMENT_LINES_MAX = 200_000;

/**
 * The kind of a BAI2 type code (Appendix B of the BAI2 specification): ACH credits and debits
 * received, settled or preauthorized; ACH return items; checks paid; money transfers.
 */
export function kindOfBaiTypeCode(code: number): StatementLineKind {
  if ([142, 143, 145, 165, 166, 169, 451, 455, 466, 469].includes(code)) return "ach";
  if ([168, 468, 555].includes(code)) return "ach_return";
  if ([475].includes(code)) return "check_paid";
  if ([191, 195, 196, 206, 208, 495, 496].includes(code)) return "wire";
  return "other";
}

/**
 * Whether a BAI2 detail type code is a credit (100-399, and the customized 900-959) or a debit
 * (400-699 and 960-999); null for a code that is no transaction (a status or summary code).
 */
export function baiDetailDirection(code: number): "credit" | "debit" | null {
  if ((code >= 100 && code <= 399) || (code >= 900 && code <= 959)) return "credit";
  if ((code >= 400 && code <= 699) || (code >= 960 && code <= 999)) return "debit";
  return null;
}

/** Cents of a whole-cents digit string with an optional sign ("+1250", "-3", "000"). */
export function signedCents(text: string): number | null {
  if (!/^[+-]?\d{1,15}$/.test(text)) return null;
  return Number(text);
}

/** Cents of a decimal amount with at most two decimals ("1250.5", "3.00"); null otherwise. */
export function decimalCents(text: string): number | null {
  const match = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return null;
  return Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"));
}
