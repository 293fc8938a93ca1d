/**
 * What a payee enters for each payment method (contract §9), checked before anything is stored:
 * ABA routing checksum, card Luhn check, US postal address with a postage CODE, Venmo phone,
 * PayPal e-mail. Each refusal names the form field and says how to fix it, in the texts given.
 */
import type { ModalityCode } from "../payouts/states.ts";
import type { PortalText } from "./portal_text.ts";

/** Postage CODEs of seed 2.9 a payee can pick from (their names are in the portal texts). */
export const postageCodes = ["FC", "PR", "PRS", "SC", "FSO", "USPSIDAY"] as const;

export type PostageCode = (typeof postageCodes)[number];

/** USPS codes of the states, DC and the territories with ZIP codes. */
export const usStates = [
  "AL",
  "AK",
  "AZ",
  "AR",
  "CA",
  "CO",
  "CT",
  "DE",
  "DC",
  "FL",
  "GA",
  "HI",
  "ID",
  "IL",
  "IN",
  "IA",
  "KS",
  "KY",
  "LA",
  "ME",
  "MD",
  "MA",
  "MI",
  "MN",
  "MS",
  "MO",
  "MT",
  "NE",
  "NV",
  "NH",
  "NJ",
  "NM",
  "NY",
  "NC",
  "ND",
  "OH",
  "OK",
  "OR",
  "PA",
  "RI",
  "SC",
  "SD",
  "TN",
  "TX",
  "UT",
  "VT",
  "VA",
  "WA",
  "WV",
  "WI",
  "WY",
  "AS",
  "GU",
  "MP",
  "PR",
  "VI",
  "AA",
  "AE",
  "AP",
] as const;

const FIELD_LENGTH_MAX = 100;

export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

/** The fields a method form requires, each with its own "missing" and "too long" problems. */
export type RequiredField =
  | "routing_number"
  | "account_number"
  | "cardholder_name"
  | "account_holder"
  | "address_one"
  | "city"
  | "zip_code"
  | "venmo_phone"
  | "paypal_email"
  | "email";

/**
 * What a payout keeps of the chosen method (`public` below, and the last four digits the payout
 * store adds): the portal describes the method from it in the page's language.
 */
export interface MethodFacts {
  readonly last_four?: string;
  /** `bank`: an instant deposit paid to a bank account rather than a debit card. */
  readonly instant_to?: string;
  readonly account_type?: string;
  readonly address_one?: string;
  readonly city?: string;
  readonly state?: string;
  readonly zip_code?: string;
  readonly postage?: string;
  readonly phone?: string;
  readonly email?: string;
}

/** Details as they are kept: `secret` is sealed at rest, `lastFour` is all anyone sees of it. */
export interface CheckedDetails {
  readonly modality: ModalityCode;
  readonly lastFour: string | null;
  /**
   * A bank account number, to be sealed at rest; null for every other method. A card number never
   * reaches this service: the provider's hosted page takes it and gives a token (contract §9).
   */
  readonly secret: string | null;
  /** Non-secret details kept as they are (routing number, address, handle). */
  readonly public: Record<string, string>;
  /** What the sandbox rails look at. */
  readonly railHints: {
    accountNumber?: string;
    zip?: string;
  };
}

/** ABA routing number: nine digits whose weighted sum (3, 7, 1, …) is a multiple of ten. */
export function isValidRoutingNumber(routing: string): boolean {
  if (!/^\d{9}$/.test(routing)) return false;
  const d = [...routing].map(Number);
  const sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8]);
  return sum % 10 === 0;
}

/** Luhn check of a card number given as digits only. */
export function passesLuhn(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** A US phone number as +1 and ten digits, or null. */
export function normalizeUsPhone(input: string): string | null {
  const digits = input.replace(/[\s().+-]/g, "");
  if (!/^\d+$/.test(digits)) return null;
  const national = digits.length === 11 && digits.startsWith("1") ? digits.slice(1) : digits;
  // NANP: area code and exchange do not start with 0 or 1.
  return /^[2-9]\d{2}[2-9]\d{6}$/.test(national) ? `+1${national}` : null;
}

export function isPlausibleEmail(input: string): boolean {
  return input.length <= 254 && /^[^\s@<>"]+@[^\s@<>"]+\.[a-zA-Z]{2,}$/.test(input);
}

const digitsOnly = (value: string) => value.replace(/[\s-]/g, "");

/**
 * Checks the form of one method; `text` gives the problems in the payee's language.
 * `fixedPostage` is the company's `check_postage_type` when it set one (the payee then cannot
 * pick); `postageCodes` narrows what may be picked (a mail provider's codes).
 */
export function checkMethodDetails(
  modality: ModalityCode,
  form: Readonly<Record<string, string>>,
  options: {
    text: PortalText["methodProblems"];
    fixedPostage?: string | null;
    /** The postage codes the company's checks can go with (default: every code). */
    postageCodes?: readonly string[];
  },
): { ok: true; value: CheckedDetails } | { ok: false; problems: FieldProblem[] } {
  const { text } = options;
  const problems: FieldProblem[] = [];
  const field = (name: string) => (form[name] ?? "").trim();
  const required = (kind: RequiredField, name: string = kind): string => {
    const value = field(name);
    if (value === "") problems.push({ field: name, message: text.required[kind].missing });
    else if (value.length > FIELD_LENGTH_MAX) {
      problems.push({ field: name, message: text.required[kind].tooLong });
    }
    return value;
  };
  const result = (value: Omit<CheckedDetails, "modality">) =>
    problems.length > 0
      ? { ok: false as const, problems }
      : { ok: true as const, value: { modality, ...value } };

  switch (modality) {
    case "ach": {
      const routing = digitsOnly(required("routing_number"));
      const account = digitsOnly(required("account_number"));
      const confirm = digitsOnly(field("account_number_confirm"));
      const accountType = field("account_type") || "checking";
      if (routing && !isValidRoutingNumber(routing)) {
        problems.push({ field: "routing_number", message: text.routingInvalid });
      }
      if (account && !/^\d{4,17}$/.test(account)) {
        problems.push({ field: "account_number", message: text.accountDigits });
      } else if (account && confirm !== account) {
        problems.push({ field: "account_number_confirm", message: text.accountMismatch });
      }
      if (accountType !== "checking" && accountType !== "savings") {
        problems.push({ field: "account_type", message: text.accountType });
      }
      return result({
        lastFour: account.slice(-4),
        secret: account,
        public: { routing_number: routing, account_type: accountType },
        railHints: { accountNumber: account },
      });
    }
    case "instant_deposit": {
      if (field("instant_to") === "bank") {
        const routing = digitsOnly(required("routing_number"));
        const account = digitsOnly(required("account_number"));
        const confirm = digitsOnly(field("account_number_confirm"));
        const holder = required("account_holder");
        if (routing && !isValidRoutingNumber(routing)) {
          problems.push({ field: "routing_number", message: text.routingInvalid });
        }
        if (account && !/^\d{4,17}$/.test(account)) {
          problems.push({ field: "account_number", message: text.accountDigits });
        } else if (account && confirm !== account) {
          problems.push({ field: "account_number_confirm", message: text.accountMismatch });
        }
        return result({
          lastFour: account.slice(-4),
          secret: account,
          public: { instant_to: "bank", routing_number: routing, account_holder: holder },
          railHints: { accountNumber: account },
        });
      }
      // The card was typed at the provider's hosted page: the form carries its token, not a number.
      const token = field("card_token_id");
      if (!/^[A-Za-z0-9_]{1,128}$/.test(token)) {
        problems.push({ field: "card_token_id", message: text.cardNotEntered });
      }
      const name = required("cardholder_name");
      const zip = required("zip_code");
      if (zip && !/^\d{5}$/.test(zip)) {
        problems.push({ field: "zip_code", message: text.zipCode });
      }
      // The card's last four are not the form's to say: the choice reads them from the token.
      return result({
        lastFour: null,
        secret: null,
        public: { card_token_id: token, cardholder_name: name, zip },
        railHints: { zip },
      });
    }
    case "check": {
      const line1 = required("address_one");
      const line2 = field("address_two");
      const city = required("city");
      const state = field("state").toUpperCase();
      const zip = required("zip_code");
      if (!(usStates as readonly string[]).includes(state)) {
        problems.push({ field: "state", message: text.state });
      }
      if (zip && !/^\d{5}(-\d{4})?$/.test(zip)) {
        problems.push({ field: "zip_code", message: text.zipCode });
      }
      if (line2.length > FIELD_LENGTH_MAX) {
        problems.push({ field: "address_two", message: text.addressTwoTooLong });
      }
      const postage = options.fixedPostage ?? (field("postage") || "FC");
      if (!(options.postageCodes ?? postageCodes as readonly string[]).includes(postage)) {
        problems.push({ field: "postage", message: text.postage });
      }
      return result({
        lastFour: null,
        secret: null,
        public: {
          address_one: line1,
          ...(line2 ? { address_two: line2 } : {}),
          city,
          state,
          zip_code: zip,
          postage,
        },
        railHints: { zip: zip.slice(0, 5) },
      });
    }
    case "venmo": {
      const raw = required("venmo_phone", "phone");
      const phone = raw ? normalizeUsPhone(raw) : null;
      if (raw && !phone) {
        problems.push({ field: "phone", message: text.phoneInvalid });
      }
      return result({
        lastFour: null,
        secret: null,
        public: { phone: phone ?? raw },
        railHints: {},
      });
    }
    case "paypal":
    case "digital_check":
    case "vcc": {
      const email = required(modality === "paypal" ? "paypal_email" : "email", "email");
      if (email && !isPlausibleEmail(email)) {
        problems.push({ field: "email", message: text.emailInvalid });
      }
      return result({
        lastFour: null,
        secret: null,
        public: { email },
        railHints: {},
      });
    }
  }
}
