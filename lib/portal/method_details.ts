/**
 * What a payee enters for each payment method (DESIGN 9), checked before anything is stored:
 * ABA routing checksum, card Luhn check, US postal address with a postage CODE, Venmo phone,
 * PayPal e-mail. Each refusal names the form field and says how to fix it.
 */
import type { ModalityCode } from "../payouts/states.ts";

/** Postage CODEs of seed 2.9 (the ones a payee can pick from, with their names). */
export const postageTypes = [
  { code: "FC", name: "First-Class Mail (free)" },
  { code: "PR", name: "Priority Mail" },
  { code: "PRS", name: "Priority Mail with signature confirmation" },
  { code: "SC", name: "Courier 2-day" },
  { code: "FSO", name: "Courier standard overnight" },
  { code: "USPSIDAY", name: "Priority Mail Express" },
] as const;

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

/** Details as they are kept: `secret` is sealed at rest, `lastFour` is all anyone sees of it. */
export interface CheckedDetails {
  readonly modality: ModalityCode;
  /** Shown on pages and in the API (never a whole number). */
  readonly summary: string;
  readonly lastFour: string | null;
  /**
   * A bank account number, to be sealed at rest; null for every other method. A card number is
   * never kept: the rail sees it once and the payout keeps a token and the last four (DESIGN 14).
   */
  readonly secret: string | null;
  /** Non-secret details kept as they are (routing number, address, handle). */
  readonly public: Record<string, string>;
  /** What the sandbox rails look at. */
  readonly railHints: { accountNumber?: string; cardNumber?: string; zip?: string };
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
 * Checks the form of one method. `fixedPostage` is the company's `check_postage_type` when it
 * set one (the payee then cannot pick).
 */
export function checkMethodDetails(
  modality: ModalityCode,
  form: Readonly<Record<string, string>>,
  options: { fixedPostage?: string | null } = {},
): { ok: true; value: CheckedDetails } | { ok: false; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const field = (name: string) => (form[name] ?? "").trim();
  const required = (name: string, label: string): string => {
    const value = field(name);
    if (value === "") problems.push({ field: name, message: `Enter ${label}.` });
    else if (value.length > FIELD_LENGTH_MAX) {
      problems.push({ field: name, message: `${label} is too long.` });
    }
    return value;
  };
  const result = (value: Omit<CheckedDetails, "modality">) =>
    problems.length > 0
      ? { ok: false as const, problems }
      : { ok: true as const, value: { modality, ...value } };

  switch (modality) {
    case "ach": {
      const routing = digitsOnly(required("routing_number", "the routing number"));
      const account = digitsOnly(required("account_number", "the account number"));
      const confirm = digitsOnly(field("account_number_confirm"));
      const accountType = field("account_type") || "checking";
      if (routing && !isValidRoutingNumber(routing)) {
        problems.push({
          field: "routing_number",
          message:
            "This routing number is not valid: check the nine digits at the bottom left of a check.",
        });
      }
      if (account && !/^\d{4,17}$/.test(account)) {
        problems.push({
          field: "account_number",
          message: "An account number has 4 to 17 digits.",
        });
      } else if (account && confirm !== account) {
        problems.push({
          field: "account_number_confirm",
          message: "The two account numbers do not match.",
        });
      }
      if (accountType !== "checking" && accountType !== "savings") {
        problems.push({ field: "account_type", message: "Choose checking or savings." });
      }
      return result({
        summary: `${accountType === "savings" ? "Savings" : "Checking"} account ending in ${
          account.slice(-4)
        }`,
        lastFour: account.slice(-4),
        secret: account,
        public: { routing_number: routing, account_type: accountType },
        railHints: { accountNumber: account },
      });
    }
    case "instant_deposit": {
      const card = digitsOnly(required("card_number", "the debit card number"));
      if (card && !passesLuhn(card)) {
        problems.push({
          field: "card_number",
          message: "This card number is not valid: check the digits on the front of your card.",
        });
      }
      return result({
        summary: `Debit card ending in ${card.slice(-4)}`,
        lastFour: card.slice(-4),
        secret: null,
        public: {},
        railHints: { cardNumber: card },
      });
    }
    case "check": {
      const line1 = required("address_one", "the street address");
      const line2 = field("address_two");
      const city = required("city", "the city");
      const state = field("state").toUpperCase();
      const zip = required("zip_code", "the ZIP code");
      if (!(usStates as readonly string[]).includes(state)) {
        problems.push({ field: "state", message: "Choose the state." });
      }
      if (zip && !/^\d{5}(-\d{4})?$/.test(zip)) {
        problems.push({ field: "zip_code", message: "A ZIP code has 5 digits (or ZIP+4)." });
      }
      if (line2.length > FIELD_LENGTH_MAX) {
        problems.push({ field: "address_two", message: "The second address line is too long." });
      }
      const postage = options.fixedPostage ?? (field("postage") || "FC");
      if (!postageTypes.some((p) => p.code === postage)) {
        problems.push({ field: "postage", message: "Choose a delivery speed from the list." });
      }
      return result({
        summary: `Check mailed to ${line1}, ${city}, ${state} ${zip} (${postage})`,
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
      const raw = required("phone", "the phone number of your Venmo account");
      const phone = raw ? normalizeUsPhone(raw) : null;
      if (raw && !phone) {
        problems.push({ field: "phone", message: "Enter a US phone number, like 555-201-3344." });
      }
      return result({
        summary: `Venmo account of ${phone ?? raw}`,
        lastFour: null,
        secret: null,
        public: { phone: phone ?? raw },
        railHints: {},
      });
    }
    case "paypal":
    case "digital_check":
    case "vcc": {
      const label = modality === "paypal" ? "the e-mail of your PayPal account" : "your e-mail";
      const email = required("email", label);
      if (email && !isPlausibleEmail(email)) {
        problems.push({
          field: "email",
          message: "Enter an e-mail address, like name@example.com.",
        });
      }
      const noun = modality === "paypal"
        ? "PayPal account"
        : modality === "vcc"
        ? "Virtual card sent to"
        : "Digital check sent to";
      return result({
        summary: `${noun} ${email}`,
        lastFour: null,
        secret: null,
        public: { email },
        railHints: {},
      });
    }
  }
}
