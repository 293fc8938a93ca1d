/**
 * Daily tie-out of a business line (DESIGN 5 and 14): what the company holds with the service at
 * the start and end of a UTC day, and the day's movements by category. The difference must be 0;
 * anything else means a movement the categories do not explain.
 */
import type { LedgerAccountCode } from "./types.ts";

/** Accounts that hold the company's money with the service; closing is their sum. */
export const heldAccounts: readonly LedgerAccountCode[] = [
  "available",
  "pending_funding",
  "reserved",
  "in_transit",
];

/** Transaction kinds that bring money in from the bank. */
const fundingKinds = new Set(["funding.ach_initiated", "funding.wire_received"]);
const fundingReturnKinds = new Set(["funding.ach_returned"]);

export interface DayMovement {
  readonly kind: string;
  readonly account: LedgerAccountCode;
  /** Sum of the day's entries of this kind on this account. */
  readonly cents: number;
}

export interface TieOut {
  readonly date: string;
  readonly opening: number;
  readonly funded: number;
  readonly returnedFunding: number;
  readonly disbursed: number;
  readonly fees: number;
  readonly closing: number;
  readonly difference: number;
}

/** Computes the tie-out from opening and closing held balances and the day's movements. */
export function computeTieOut(
  date: string,
  openingCents: number,
  closingCents: number,
  movements: readonly DayMovement[],
): TieOut {
  const sum = (keep: (m: DayMovement) => boolean) =>
    movements.filter(keep).reduce((t, m) => t + m.cents, 0);
  const held = (m: DayMovement) => heldAccounts.includes(m.account);
  const funded = sum((m) => fundingKinds.has(m.kind) && held(m));
  const returnedFunding = -sum((m) => fundingReturnKinds.has(m.kind) && held(m));
  const disbursed = sum((m) => m.kind === "payout.complete" && m.account === "bank");
  const fees = sum((m) => m.kind === "payout.complete" && m.account.startsWith("fees_"));
  return {
    date,
    opening: openingCents,
    funded,
    returnedFunding,
    disbursed,
    fees,
    closing: closingCents,
    difference: openingCents + funded - returnedFunding - disbursed - fees - closingCents,
  };
}

/** The tie-out as CSV, amounts in cents. */
export function tieOutCsv(line: string, tieOut: TieOut): string {
  const header =
    "line,date,opening_cents,funded_cents,returned_funding_cents,disbursed_cents,fees_cents,closing_cents,difference_cents";
  const t = tieOut;
  return `${header}\n${line},${t.date},${t.opening},${t.funded},${t.returnedFunding},${t.disbursed},${t.fees},${t.closing},${t.difference}\n`;
}

/** The UTC day [start, end) of a YYYY-MM-DD date, or null when the text is not a real date. */
export function utcDayBounds(date: string): { start: number; end: number } | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return null;
  const start = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== date) return null;
  return { start, end: start + 86_400_000 };
}
