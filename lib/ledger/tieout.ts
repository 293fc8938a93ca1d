/**
 * Daily tie-out of a business line (contract §5): what the company holds with the service at
 * the start and end of a UTC day, and the day's movements by category. The difference must be 0;
 * anything else means a movement the categories do not explain.
 */
import { centsToDollars } from "../platform/money.ts";
import { csvDollars, csvText } from "../platform/csv.ts";
import type { LedgerTransactionKind } from "./postings.ts";
import type { LedgerAccountCode } from "./types.ts";

/**
 * Accounts that hold the company's money with the service; closing is their sum. What a line owes
 * (`funding_shortfall`, below zero while owed) counts against it.
 */
export const heldAccounts: readonly LedgerAccountCode[] = [
  "available",
  "pending_funding",
  "reserved",
  "in_transit",
  "funding_shortfall",
];

/**
 * Where a kind of transaction lands in the tie-out: money in from the bank (`funded`), funding
 * the bank took back (`returned_funding`), a payout paid out to the bank and the fee accounts
 * (`paid_out`), a completed payout's money the bank sent back (`returned`), or a move between
 * held accounts only, which changes no total (`within_held`).
 */
export type TieOutCategory =
  | "funded"
  | "returned_funding"
  | "paid_out"
  | "returned"
  | "within_held";

/** Every kind of the postings module, classified: a new kind does not compile until it is. */
export const tieOutCategories: Readonly<Record<LedgerTransactionKind, TieOutCategory>> = {
  "funding.ach_initiated": "funded",
  "funding.wire_received": "funded",
  "funding.ach_cleared": "within_held",
  "funding.ach_returned": "returned_funding",
  "funding.ach_returned_after_clear": "returned_funding",
  "funding.shortfall_covered": "within_held",
  "payout.hold": "within_held",
  "payout.release_funds": "within_held",
  "payout.select": "within_held",
  "payout.send": "within_held",
  "payout.fail": "within_held",
  "payout.retry": "within_held",
  "payout.reoffer": "within_held",
  "payout.complete": "paid_out",
  "payout.cancel": "within_held",
  "payout.reject_payment": "within_held",
  "payout.expire_offer": "within_held",
  "payout.late_return": "returned",
  "payout.fallback": "within_held",
  "payout.rechoose": "within_held",
  "payout.escheat": "paid_out",
  "check.paid_exception": "paid_out",
  "check.paid_short": "returned",
  "rail.paid_exception": "paid_out",
  "recon.adjustment_in": "funded",
  "recon.adjustment_out": "paid_out",
};

export interface DayMovement {
  readonly kind: LedgerTransactionKind;
  readonly account: LedgerAccountCode;
  /** Sum of the day's entries of this kind on this account. */
  readonly cents: number;
}

/** A disbursement a funding's credit released from pending_funds. */
export interface TieOutRelease {
  readonly disbursementUuid: string;
  readonly releasedAt: number;
}

/**
 * A funding whose money moved on the day and that is for large disbursements or released one:
 * what it names and what its credit released, so waiting disbursements reconcile with their funds.
 */
export interface TieOutFunding {
  /** funding_uuid, else the service's fund_ id. */
  readonly fundingUuid: string;
  readonly paymentMethod: string;
  readonly amountCents: number;
  readonly largeDisbursement: boolean;
  /** The disbursement the funding names, released first by its credit. */
  readonly disbursementUuid: string | null;
  /** The day's ledger kinds of the funding, without `funding.` (ach_initiated, wire_received…). */
  readonly movements: readonly string[];
  readonly released: readonly TieOutRelease[];
}

/**
 * One transaction of the day that changed a total: a payout (or check or rail exception) paid to
 * the bank and the fee accounts, or money of a completed payout that came back. The lines of a
 * day sum to its disbursed, fees and returned.
 */
export interface TieOutPayoutLine {
  readonly transactionId: string;
  readonly kind: LedgerTransactionKind;
  readonly payoutId: string | null;
  /** The claim id, else the company's disbursement uuid. */
  readonly claimOrUuid: string | null;
  readonly postedAt: number;
  readonly disbursedCents: number;
  readonly feesCents: number;
  readonly returnedCents: number;
}

/** A day's totals, in cents, its large-disbursement fundings and its payout lines. */
export interface TieOut {
  readonly date: string;
  readonly opening: number;
  readonly funded: number;
  readonly returnedFunding: number;
  /** Money of completed payouts that came back from the bank (late ACH returns, refunds). */
  readonly returned: number;
  readonly disbursed: number;
  readonly fees: number;
  readonly closing: number;
  readonly difference: number;
  readonly fundings: readonly TieOutFunding[];
  readonly payouts: readonly TieOutPayoutLine[];
}

/** Computes the tie-out from opening and closing held balances and the day's movements. */
export function computeTieOut(
  date: string,
  openingCents: number,
  closingCents: number,
  movements: readonly DayMovement[],
  fundings: readonly TieOutFunding[] = [],
  payouts: readonly TieOutPayoutLine[] = [],
): TieOut {
  const sum = (keep: (m: DayMovement) => boolean) =>
    movements.filter(keep).reduce((t, m) => t + m.cents, 0);
  const held = (m: DayMovement) => heldAccounts.includes(m.account);
  const category = (m: DayMovement) => tieOutCategories[m.kind];
  const funded = sum((m) => category(m) === "funded" && held(m));
  // 0 − sum, not −sum: a day without returned funding reads 0, not −0.
  const returnedFunding = 0 - sum((m) => category(m) === "returned_funding" && held(m));
  const returned = sum((m) => category(m) === "returned" && held(m));
  // Money remitted to a state as unclaimed property left the company for its owner: disbursed too.
  const disbursed = sum((m) =>
    category(m) === "paid_out" && (m.account === "bank" || m.account === "unclaimed_remitted")
  );
  const fees = sum((m) => category(m) === "paid_out" && m.account.startsWith("fees_"));
  return {
    date,
    opening: openingCents,
    funded,
    returnedFunding,
    returned,
    disbursed,
    fees,
    closing: closingCents,
    difference: openingCents + funded - returnedFunding + returned - disbursed - fees -
      closingCents,
    fundings,
    payouts,
  };
}

/** The tie-out's amounts in the order and under the names both its JSON and its CSV use. */
function namedAmounts(t: TieOut): [name: string, cents: number][] {
  return [
    ["opening", t.opening],
    ["funded", t.funded],
    ["returned_funding", t.returnedFunding],
    ["returned", t.returned],
    ["disbursed", t.disbursed],
    ["fees", t.fees],
    ["closing", t.closing],
    ["difference", t.difference],
  ];
}

/** The tie-out's totals as JSON, in US dollars as the rest of the API (`currency` names the unit). */
export function tieOutJson(tieOut: TieOut): Record<string, unknown> {
  return {
    date: tieOut.date,
    currency: "USD",
    ...Object.fromEntries(
      namedAmounts(tieOut).map(([name, cents]) => [name, centsToDollars(cents)]),
    ),
  };
}

/** The day's large-disbursement fundings as JSON, amounts in US dollars. */
export function tieOutFundingsJson(tieOut: TieOut): Record<string, unknown>[] {
  return tieOut.fundings.map((f) => ({
    funding_uuid: f.fundingUuid,
    payment_method: f.paymentMethod,
    amount: centsToDollars(f.amountCents),
    large_disbursement: f.largeDisbursement,
    disbursement_uuid: f.disbursementUuid,
    movements: f.movements,
    released_disbursements: f.released.map((r) => ({
      disbursement_uuid: r.disbursementUuid,
      released_at: new Date(r.releasedAt).toISOString(),
    })),
  }));
}

const FUNDINGS_HEADER = [
  "funding_uuid",
  "payment_method",
  "amount",
  "large_disbursement",
  "disbursement_uuid",
  "movements",
  "released_disbursement_uuid",
  "released_at",
];

const PAYOUTS_HEADER = [
  "transaction_id",
  "kind",
  "payout_id",
  "claim_or_uuid",
  "posted_at",
  "disbursed",
  "fees",
  "returned",
];

/**
 * The tie-out as CSV, amounts in US dollars with two decimals: the totals under the same names as
 * the JSON, then, after a blank line, a section of the day's large-disbursement fundings, one row
 * per disbursement each released (one row with empty release cells when it released none), then,
 * after another, the day's payout lines (what each paid out or got back), which sum to the totals.
 */
export function tieOutCsv(line: string, tieOut: TieOut): string {
  const amounts = namedAmounts(tieOut);
  const header = ["line", "date", "currency", ...amounts.map(([name]) => name)];
  const row = [
    csvText(line),
    tieOut.date,
    "USD",
    ...amounts.map(([, cents]) => csvDollars(cents)),
  ];
  const fundingRows = tieOut.fundings.flatMap((f) => {
    const cells = [
      csvText(f.fundingUuid),
      f.paymentMethod,
      csvDollars(f.amountCents),
      String(f.largeDisbursement),
      csvText(f.disbursementUuid ?? ""),
      f.movements.join(" "),
    ];
    const released = f.released.length === 0 ? [null] : f.released;
    return released.map((r) =>
      [
        ...cells,
        csvText(r?.disbursementUuid ?? ""),
        r ? new Date(r.releasedAt).toISOString() : "",
      ].join(",")
    );
  });
  const payoutRows = tieOut.payouts.map((p) =>
    [
      csvText(p.transactionId),
      p.kind,
      csvText(p.payoutId ?? ""),
      csvText(p.claimOrUuid ?? ""),
      new Date(p.postedAt).toISOString(),
      csvDollars(p.disbursedCents),
      csvDollars(p.feesCents),
      csvDollars(p.returnedCents),
    ].join(",")
  );
  return [
    header.join(","),
    row.join(","),
    "",
    FUNDINGS_HEADER.join(","),
    ...fundingRows,
    "",
    PAYOUTS_HEADER.join(","),
    ...payoutRows,
  ].join("\n") + "\n";
}

/** The UTC day [start, end) of a YYYY-MM-DD date, or null when the text is not a real date. */
export function utcDayBounds(date: string): { start: number; end: number } | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return null;
  const start = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== date) return null;
  return { start, end: start + 86_400_000 };
}
