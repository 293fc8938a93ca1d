/**
 * Unclaimed property, decided without storage: what a still-owed payout is reported as (its NAUPA
 * property type), to which state, after how long a dormancy, when its owner is given notice (due
 * diligence), and which report year takes it. lib/obligations/unclaimed.ts applies these rules.
 */

const DAY_MS = 86_400_000;

/**
 * The NAUPA standard property type codes a payout is reported under: a claim payment (a Surface A
 * disbursement's payee or a /v1 disbursement, which carries a claim id) is IN01 "Individual policy
 * benefits or claim payments"; a Simple Payment (a single refund or amount due outside a claim)
 * is IN07 "Other amounts due under policy terms". A claim check that was never cashed is the
 * claim payment it carried, so it keeps IN01.
 */
export const PROPERTY_TYPES = {
  IN01: "Individual policy benefits or claim payments",
  IN07: "Other amounts due under policy terms",
} as const;
export type PropertyType = keyof typeof PROPERTY_TYPES;

/** The property type of a payout, by what made it. */
export function propertyTypeOf(disbursementKind: "disbursement" | "simple_payment" | "v1") {
  return disbursementKind === "simple_payment" ? "IN07" : "IN01";
}

/**
 * What an owed item is, as the list and the console name it: an offer still owed (held, given
 * back at its expiry, or offered again after its check or payment came back) is owed whole; money
 * of a completed payout that came back (a virtual card's unspent balance, a late return of another
 * rail) is owed for what came back, and its payout stays completed.
 */
export const OWED_KINDS = {
  held_offer: "held offer",
  expired_offer: "offer given back at expiry",
  uncashed_check: "uncashed check",
  returned_check: "returned check",
  returned_payment: "returned payment",
  card_balance: "card balance",
  late_return: "late return",
} as const;
export type OwedKind = keyof typeof OWED_KINDS;

/** Whether an owed item is money that came back after its payout completed. */
export function cameBackAfterCompletion(kind: OwedKind): boolean {
  return kind === "card_balance" || kind === "late_return";
}

/**
 * The kind of an offer still owed: given back by its expiry's cancel, else by what came back
 * before it was offered again (its latest check stale or voided, or a failed payment), else held.
 */
export function offerKindOf(facts: {
  readonly status: string;
  readonly checkStatus: string | null;
  readonly failureReason: string | null;
}): OwedKind {
  if (facts.status === "canceled") return "expired_offer";
  if (facts.checkStatus === "stale") return "uncashed_check";
  if (facts.checkStatus === "voided") return "returned_check";
  if (facts.failureReason !== null) return "returned_payment";
  return "held_offer";
}

/** The two-letter codes of the states and the District of Columbia that take reports. */
export const US_STATES: ReadonlySet<string> = new Set(
  ("AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ " +
    "NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY").split(" "),
);

/** A dormancy period in years, with where it comes from. */
export interface DormancyDefault {
  readonly years: number;
  readonly source: string;
}

/**
 * The built-in dormancy periods. Every state's default is three years, the period the uniform
 * acts most states adopted set for property held by insurers and for most other property; the
 * states listed apart keep a longer general period. An admin sets a state's own period per
 * property type with unclaimed:dormancy-set, which wins over this table.
 */
export const DORMANCY_DEFAULT: DormancyDefault = {
  years: 3,
  source:
    "Uniform Unclaimed Property Act (1995) §2 and Revised Uniform Unclaimed Property Act (2016) §201: three years for most property, insurance claim payments included",
};
export const DORMANCY_BY_STATE: Readonly<Record<string, DormancyDefault>> = {
  DE: {
    years: 5,
    source: "Del. Code tit. 12, §1133: five years for property without a shorter period",
  },
  FL: { years: 5, source: "Fla. Stat. §717.102: five years after the property became payable" },
};

/** The built-in dormancy of a state (any property type), with its source. */
export function defaultDormancy(state: string): DormancyDefault {
  return DORMANCY_BY_STATE[state] ?? DORMANCY_DEFAULT;
}

/** Years as days for a dormancy period: 365 a year, leap days aside, as the clock counts. */
export const dormancyDays = (years: number): number => years * 365;

/**
 * Due diligence: the owner is given notice this long before the item is due to be reported
 * (within the window of 60 to 120 days before the report that the uniform acts set), by e-mail
 * and by letter, unless the amount is under the threshold the acts exempt from it.
 */
export const DUE_DILIGENCE_LEAD_MS = 90 * DAY_MS;
export const DUE_DILIGENCE_MIN_CENTS = 5_000;

/** A payout still owed, as the rules need it. */
export interface OwedItem {
  readonly amountCents: number;
  /** The last owner-generated activity: the dormancy clock runs from here. */
  readonly owedSince: number;
  /** The owner's last known address's state, or null (none, or not a US state). */
  readonly ownerState: string | null;
  readonly propertyType: PropertyType;
}

/**
 * The state an item is owed to: the owner's last known address's, or (none, or foreign) the
 * holder's state of incorporation; null when neither is known.
 */
export function owedState(ownerState: string | null, holderState: string | null): string | null {
  if (ownerState !== null && US_STATES.has(ownerState)) return ownerState;
  return holderState;
}

/** When an item is presumed abandoned: its dormancy after the last owner activity. */
export function dormantAt(owedSince: number, dormancyDaysOfItem: number): number {
  return owedSince + dormancyDaysOfItem * DAY_MS;
}

/**
 * When its owner is given notice: the lead before it is dormant, not before it was owed; null
 * when its amount is under the due-diligence threshold.
 */
export function noticeAt(
  item: Pick<OwedItem, "owedSince" | "amountCents">,
  dormant: number,
): number | null {
  if (item.amountCents < DUE_DILIGENCE_MIN_CENTS) return null;
  return Math.max(item.owedSince, dormant - DUE_DILIGENCE_LEAD_MS);
}

/**
 * The report year that takes an item: a report of year Y holds what was dormant by June 30 of Y
 * (its cut-off), and is filed by November 1 of Y; an item dormant later waits for the next year.
 */
export function reportYearOf(dormant: number): number {
  const date = new Date(dormant);
  const year = date.getUTCFullYear();
  return dormant <= cutoffOf(year) ? year : year + 1;
}

/** The cut-off of a report year: the end of June 30 (UTC). */
export function cutoffOf(reportYear: number): number {
  return Date.UTC(reportYear, 6, 1) - 1;
}
