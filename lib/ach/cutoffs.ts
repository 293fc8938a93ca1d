/**
 * Cutoffs and ACH dates (pure): the next cutoff on a US banking day in the bank's time zone, the
 * effective entry date of each kind, and when the return window of an effective date ends.
 * CONTRACT STUB: owned by the bank-settings helper.
 */
import type { Cutoff } from "./bank_settings.ts";

export interface CutoffSchedule {
  readonly timeZone: string;
  readonly cutoffs: readonly Cutoff[];
  readonly transmitWindowMinutes: number;
}

/** One cutoff: when it is, what a file built at it is effective on, and its window. */
export interface CutoffSlot {
  /** The cutoff's instant (ms, UTC). */
  readonly at: number;
  readonly kind: "same_day" | "next_day";
  /** The bank-local banking day of the cutoff, YYYY-MM-DD. */
  readonly bankDate: string;
  /** Same-day: bankDate; next-day: the next banking day. YYYY-MM-DD. */
  readonly effectiveDate: string;
  /** The last instant the file built at this cutoff may be transmitted. */
  readonly windowEndsAt: number;
}

/** The first cutoff strictly after `after`, on a US banking day. */
export function nextCutoffSlot(_schedule: CutoffSchedule, _after: number): CutoffSlot {
  throw new Error("not built yet");
}

/** The first next-day cutoff strictly after `after` (for entries over the same-day limit). */
export function nextNextDayCutoffSlot(_schedule: CutoffSchedule, _after: number): CutoffSlot {
  throw new Error("not built yet");
}

/**
 * When entries effective on `effectiveDate` are past their return window without a return:
 * 17:00 bank-local, `bankingDays` (2) banking days after the effective date.
 */
export function settlementAt(
  _effectiveDate: string,
  _timeZone: string,
  _bankingDays?: number,
): number {
  throw new Error("not built yet");
}

/**
 * When the sandbox bank writes its return file for entries effective on `effectiveDate`: 09:00
 * bank-local two banking days after it, before their settlement.
 */
export function sandboxReturnsAt(_effectiveDate: string, _timeZone: string): number {
  throw new Error("not built yet");
}

/** An instant's bank-local date (YYYY-MM-DD) and time (HHMM) in `timeZone`. */
export function bankLocal(_at: number, _timeZone: string): { date: string; time: string } {
  throw new Error("not built yet");
}
