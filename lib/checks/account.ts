/**
 * A company's check account (pure rules): the account its checks are drawn on, the register's
 * first number, what the check face prints of the payer, when an issued check goes stale, and the
 * positive-pay template its bank reads. It is kept inside the company's bank settings
 * (`check_account`, sealed with the rest) and checked here; test companies without one get the
 * sandbox check account.
 */
import * as v from "valibot";
import { isValidRoutingNumber } from "../portal/method_details.ts";

/** An issued check goes stale after this many days unless configured. */
export const STALE_DAYS_DEFAULT = 180;
export const STALE_DAYS_MIN = 1;
export const STALE_DAYS_MAX = 3650;
/** Check numbers are at most 9 digits: the serial field of the MICR line holds them. */
export const CHECK_NUMBER_MAX = 999_999_999;
/** The payer's address on the check face: at most this many lines of this many characters. */
export const PAYER_ADDRESS_LINES_MAX = 4;
export const PAYER_TEXT_LENGTH_MAX = 60;

/** The columns a positive-pay line may hold, in the order the template lists them. */
export const positivePayColumns = [
  "account",
  "check_number",
  "amount",
  "issue_date",
  "payee_name",
  "issue_void",
] as const;
export type PositivePayColumn = (typeof positivePayColumns)[number];

/** The date formats a positive-pay template may ask for. */
export const positivePayDateFormats = [
  "YYYY-MM-DD",
  "MM/DD/YYYY",
  "MMDDYYYY",
  "YYYYMMDD",
  "MM/DD/YY",
  "YYMMDD",
] as const;
export type PositivePayDateFormat = (typeof positivePayDateFormats)[number];

/** How a positive-pay file writes its lines; banks differ, so every part is configurable. */
export interface PositivePayTemplate {
  readonly columns: readonly PositivePayColumn[];
  readonly dateFormat: PositivePayDateFormat;
  /** `dollars`: 1234.56; `cents`: 123456 (whole cents, no point). */
  readonly amountFormat: "dollars" | "cents";
  /** The issue_void column's letter for an issued check and for a void. */
  readonly issueLetter: string;
  readonly voidLetter: string;
  /** Whether the first line names the columns. */
  readonly header: boolean;
}

export const POSITIVE_PAY_TEMPLATE_DEFAULT: PositivePayTemplate = {
  columns: positivePayColumns,
  dateFormat: "MM/DD/YYYY",
  amountFormat: "dollars",
  issueLetter: "I",
  voidLetter: "V",
  header: true,
};

export interface CheckAccount {
  /** The drawee bank's routing number (ABA check digit verified), printed on the MICR line. */
  readonly routingNumber: string;
  readonly accountNumber: string;
  /** The register's first number; raising it later skips to it (new check stock), lowering never reuses. */
  readonly firstCheckNumber: number;
  readonly payerName: string;
  readonly payerAddress: readonly string[];
  readonly staleDays: number;
  readonly positivePay: PositivePayTemplate;
}

const PRINTABLE = /^[\x20-\x7E]*$/;

function text(name: string) {
  return v.pipe(
    v.string(`${name} must be a string`),
    v.minLength(1, `${name} must not be empty`),
    v.maxLength(
      PAYER_TEXT_LENGTH_MAX,
      (issue) =>
        `${name} ${JSON.stringify(issue.input)}: at most ${PAYER_TEXT_LENGTH_MAX} characters, got ${
          (issue.input as string).length
        }`,
    ),
    v.regex(PRINTABLE, (issue) => `${name} ${JSON.stringify(issue.input)}: printable ASCII only`),
  );
}

const letter = (name: string) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.regex(
      /^[A-Za-z0-9]{1,2}$/,
      (issue) => `${name} ${JSON.stringify(issue.input)}: one or two letters or digits`,
    ),
  );

const positivePayInput = v.strictObject({
  columns: v.optional(
    v.pipe(
      v.array(
        v.picklist(
          positivePayColumns,
          `positive_pay.columns: each one of ${positivePayColumns.join(", ")}`,
        ),
        "positive_pay.columns must be a list of column names",
      ),
      v.minLength(1, "positive_pay.columns: at least one column"),
      v.check(
        (columns) => new Set(columns).size === columns.length,
        "positive_pay.columns: a column is listed twice",
      ),
      v.check(
        (columns) => columns.includes("check_number") && columns.includes("amount"),
        "positive_pay.columns: check_number and amount are required (the bank matches on them)",
      ),
    ),
    [...positivePayColumns],
  ),
  date_format: v.optional(
    v.picklist(
      positivePayDateFormats,
      `positive_pay.date_format: one of ${positivePayDateFormats.join(", ")}`,
    ),
    POSITIVE_PAY_TEMPLATE_DEFAULT.dateFormat,
  ),
  amount_format: v.optional(
    v.picklist(["dollars", "cents"], "positive_pay.amount_format: dollars or cents"),
    POSITIVE_PAY_TEMPLATE_DEFAULT.amountFormat,
  ),
  issue_letter: v.optional(
    letter("positive_pay.issue_letter"),
    POSITIVE_PAY_TEMPLATE_DEFAULT.issueLetter,
  ),
  void_letter: v.optional(
    letter("positive_pay.void_letter"),
    POSITIVE_PAY_TEMPLATE_DEFAULT.voidLetter,
  ),
  header: v.optional(
    v.boolean("positive_pay.header must be true or false"),
    POSITIVE_PAY_TEMPLATE_DEFAULT.header,
  ),
}, "positive_pay: this field is not a template setting");

/** The `check_account` object of a bank settings file. */
export const checkAccountInput = v.strictObject({
  routing_number: v.pipe(
    v.string("check_account.routing_number must be a string of 9 digits"),
    v.regex(
      /^\d{9}$/,
      (issue) => `check_account.routing_number ${JSON.stringify(issue.input)}: 9 digits`,
    ),
    v.check(
      isValidRoutingNumber,
      (issue) =>
        `check_account.routing_number ${
          JSON.stringify(issue.input)
        }: the check digit does not match (not an ABA routing number)`,
    ),
  ),
  account_number: v.pipe(
    v.string("check_account.account_number must be a string of 4 to 17 digits"),
    v.regex(/^\d{4,17}$/, "check_account.account_number: 4 to 17 digits"),
  ),
  first_check_number: v.pipe(
    v.number(
      (issue) =>
        `check_account.first_check_number ${JSON.stringify(issue.input)}: a positive whole number`,
    ),
    v.integer(
      (issue) => `check_account.first_check_number ${issue.input}: a positive whole number`,
    ),
    v.minValue(
      1,
      (issue) => `check_account.first_check_number ${issue.input}: a positive whole number`,
    ),
    v.maxValue(
      CHECK_NUMBER_MAX,
      (issue) => `check_account.first_check_number ${issue.input}: at most ${CHECK_NUMBER_MAX}`,
    ),
  ),
  payer_name: text("check_account.payer_name"),
  payer_address: v.pipe(
    v.array(
      text("check_account.payer_address[]"),
      "check_account.payer_address must be a list of lines",
    ),
    v.minLength(1, "check_account.payer_address: at least one line"),
    v.maxLength(
      PAYER_ADDRESS_LINES_MAX,
      `check_account.payer_address: at most ${PAYER_ADDRESS_LINES_MAX} lines`,
    ),
  ),
  stale_days: v.optional(
    v.pipe(
      v.number("check_account.stale_days must be a number"),
      v.integer("check_account.stale_days must be a whole number"),
      v.minValue(
        STALE_DAYS_MIN,
        `check_account.stale_days: ${STALE_DAYS_MIN} to ${STALE_DAYS_MAX}`,
      ),
      v.maxValue(
        STALE_DAYS_MAX,
        `check_account.stale_days: ${STALE_DAYS_MIN} to ${STALE_DAYS_MAX}`,
      ),
    ),
    STALE_DAYS_DEFAULT,
  ),
  positive_pay: v.optional(positivePayInput, {}),
}, "check_account: this field is not a check account setting");

/** The checked input as the settings keep it. */
export function checkAccountOf(input: v.InferOutput<typeof checkAccountInput>): CheckAccount {
  const template = v.parse(positivePayInput, input.positive_pay);
  return {
    routingNumber: input.routing_number,
    accountNumber: input.account_number,
    firstCheckNumber: input.first_check_number,
    payerName: input.payer_name,
    payerAddress: [...input.payer_address],
    staleDays: input.stale_days,
    positivePay: {
      columns: [...template.columns],
      dateFormat: template.date_format,
      amountFormat: template.amount_format,
      issueLetter: template.issue_letter,
      voidLetter: template.void_letter,
      header: template.header,
    },
  };
}

/** The account back in the JSON shape `bank:set --file` takes. */
export function checkAccountJson(account: CheckAccount): Record<string, unknown> {
  return {
    routing_number: account.routingNumber,
    account_number: account.accountNumber,
    first_check_number: account.firstCheckNumber,
    payer_name: account.payerName,
    payer_address: [...account.payerAddress],
    stale_days: account.staleDays,
    positive_pay: {
      columns: [...account.positivePay.columns],
      date_format: account.positivePay.dateFormat,
      amount_format: account.positivePay.amountFormat,
      issue_letter: account.positivePay.issueLetter,
      void_letter: account.positivePay.voidLetter,
      header: account.positivePay.header,
    },
  };
}

/** The account as a viewer may see it: the account number masked. */
export function maskedCheckAccount(account: CheckAccount): Record<string, unknown> {
  return { ...checkAccountJson(account), account_number: `••••${account.accountNumber.slice(-4)}` };
}

/** The sandbox bank's routing number, the drawee of every sandbox check. */
export const SANDBOX_CHECK_ROUTING = "021000021";
/** The sandbox check account's number and first check number. */
export const SANDBOX_CHECK_ACCOUNT_NUMBER = "000900000003";
export const SANDBOX_FIRST_CHECK_NUMBER = 1001;

/** The check account every test company has unless its bank settings carry its own. */
export function sandboxCheckAccount(companyName: string): CheckAccount {
  return {
    routingNumber: SANDBOX_CHECK_ROUTING,
    accountNumber: SANDBOX_CHECK_ACCOUNT_NUMBER,
    firstCheckNumber: SANDBOX_FIRST_CHECK_NUMBER,
    // The check face prints ASCII: accents are dropped (é → e), anything else left out.
    payerName: companyName.normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
      .replace(/[^\x20-\x7E]/g, "").trim().slice(0, PAYER_TEXT_LENGTH_MAX) || "Sandbox Company",
    payerAddress: ["1 Sandbox Way", "New York NY 10001"],
    staleDays: STALE_DAYS_DEFAULT,
    positivePay: POSITIVE_PAY_TEMPLATE_DEFAULT,
  };
}
