/**
 * Cutoffs and ACH dates (pure): the next cutoff on a US banking day in the bank's time zone, the
 * effective entry date of each kind, and when the return window of an effective date ends. Bank
 * time is converted with Intl.DateTimeFormat, so daylight-saving changes fall where the zone has
 * them; banking days are judged on the bank-local date (lib/platform/business_days.ts).
 */
import { type Cutoff, SAME_DAY_ENTRY_MAX_CENTS, TIME_ZONE_DEFAULT } from "./bank_settings.ts";
import { addBusinessDays, isBusinessDay } from "../platform/business_days.ts";

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

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** A search for the next cutoff looks this many calendar days ahead (holidays, weekends). */
const CUTOFF_SEARCH_DAYS_MAX = 14;
/** When entries are past their return window, and when the sandbox bank writes its returns. */
const SETTLEMENT_TIME = "17:00";
const SANDBOX_RETURNS_TIME = "09:00";
const RETURN_WINDOW_BANKING_DAYS = 2;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * Prepares bank time: a process's first Intl.DateTimeFormat loads the time zone data, about 10 ms
 * of the thread (later ones about 0.1 ms). A service does it with its workers, after its first
 * answer, so that its first cutoff or ledger day close does not hold requests for it.
 */
export function prepareBankTime(): void {
  formatterOf(TIME_ZONE_DEFAULT);
}

/** The wall-clock fields of an instant in a zone. */
function wallClock(at: number, timeZone: string) {
  const parts: Record<string, string> = {};
  for (const part of formatterOf(timeZone).formatToParts(at)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

/** How far the zone's wall clock is ahead of UTC at an instant (ms). */
function zoneOffset(at: number, timeZone: string): number {
  const w = wallClock(at, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(at / 1000) * 1000;
}

/** An instant's bank-local date (YYYY-MM-DD) and time (HHMM) in `timeZone`. */
export function bankLocal(at: number, timeZone: string): { date: string; time: string } {
  const w = wallClock(at, timeZone);
  const two = (n: number) => String(n).padStart(2, "0");
  return {
    date: `${w.year}-${two(w.month)}-${two(w.day)}`,
    time: `${two(w.hour)}${two(w.minute)}`,
  };
}

/** UTC midnight of a YYYY-MM-DD date: how business_days.ts names a day. */
function utcMidnight(date: string): number {
  return Date.parse(`${date}T00:00:00Z`);
}

function dateOf(utcMidnightMs: number): string {
  return new Date(utcMidnightMs).toISOString().slice(0, 10);
}

/**
 * The instant a bank-local date and time (HH:MM) falls on. A time skipped by a spring-forward
 * change lands after the gap, as a wall clock would show it.
 */
export function bankTime(date: string, time: string, timeZone: string): number {
  const [hour, minute] = time.split(":").map(Number);
  const wall = utcMidnight(date) + hour * 3_600_000 + minute * MINUTE_MS;
  const first = wall - zoneOffset(wall, timeZone);
  const offset = zoneOffset(first, timeZone);
  return wall - offset;
}

/**
 * The Federal Reserve's last same-day ACH submission window closes at 16:45 New York time: a
 * same-day file built later cannot settle that day, so a same-day cutoff must fall before it.
 */
export const FED_LAST_SAME_DAY_WINDOW = { time: "16:45", timeZone: "America/New_York" } as const;

/**
 * The latest New York wall time (HH:MM) a bank-local time of day falls on over a year: zones
 * that change to daylight-saving time on other days than New York, or not at all, drift by an
 * hour against it for part of the year.
 */
export function latestNewYorkTime(time: string, timeZone: string): string {
  const newYork = FED_LAST_SAME_DAY_WINDOW.timeZone;
  let latest = "00:00";
  // Any year shows every offset a zone takes; 2026 is as good as another.
  for (let day = Date.UTC(2026, 0, 1); day < Date.UTC(2027, 0, 1); day += DAY_MS) {
    const there = bankLocal(bankTime(dateOf(day), time, timeZone), newYork).time;
    const hhmm = `${there.slice(0, 2)}:${there.slice(2)}`;
    if (hhmm > latest) latest = hhmm;
  }
  return latest;
}

/** The banking day after a YYYY-MM-DD date. */
export function nextBankingDay(date: string): string {
  return dateOf(addBusinessDays(utcMidnight(date), 1));
}

function slotsAfter(
  schedule: CutoffSchedule,
  after: number,
  kinds: ReadonlySet<Cutoff["kind"]>,
): CutoffSlot {
  const cutoffs = schedule.cutoffs.filter((c) => kinds.has(c.kind))
    .sort((a, b) => a.time.localeCompare(b.time));
  if (cutoffs.length === 0) {
    throw new Error(`the cutoff schedule has no ${[...kinds].join(" or ")} cutoff`);
  }
  let day = utcMidnight(bankLocal(after, schedule.timeZone).date);
  for (let searched = 0; searched <= CUTOFF_SEARCH_DAYS_MAX; searched++, day += DAY_MS) {
    if (!isBusinessDay(day)) continue;
    const bankDate = dateOf(day);
    for (const cutoff of cutoffs) {
      const at = bankTime(bankDate, cutoff.time, schedule.timeZone);
      if (at <= after) continue;
      return {
        at,
        kind: cutoff.kind,
        bankDate,
        effectiveDate: cutoff.kind === "same_day" ? bankDate : nextBankingDay(bankDate),
        windowEndsAt: at + schedule.transmitWindowMinutes * MINUTE_MS,
      };
    }
  }
  throw new Error(`no banking day within ${CUTOFF_SEARCH_DAYS_MAX} days after ${after}`);
}

const ANY_KIND: ReadonlySet<Cutoff["kind"]> = new Set(["same_day", "next_day"]);
const NEXT_DAY: ReadonlySet<Cutoff["kind"]> = new Set(["next_day"]);

/** The first cutoff strictly after `after`, on a US banking day. */
export function nextCutoffSlot(schedule: CutoffSchedule, after: number): CutoffSlot {
  return slotsAfter(schedule, after, ANY_KIND);
}

/** The first next-day cutoff strictly after `after` (for entries over the same-day limit). */
export function nextNextDayCutoffSlot(schedule: CutoffSchedule, after: number): CutoffSlot {
  return slotsAfter(schedule, after, NEXT_DAY);
}

/**
 * When entries effective on `effectiveDate` are past their return window without a return:
 * 17:00 bank-local, `bankingDays` (2) banking days after the effective date.
 */
export function settlementAt(
  effectiveDate: string,
  timeZone: string,
  bankingDays = RETURN_WINDOW_BANKING_DAYS,
): number {
  const day = dateOf(addBusinessDays(utcMidnight(effectiveDate), bankingDays));
  return bankTime(day, SETTLEMENT_TIME, timeZone);
}

/**
 * When an ACH debit queued at `now` is expected to clear, before its file exists: the cutoff that
 * will take it (an entry over the same-day limit waits for a next-day one), its effective date,
 * then the settlement of that date. An estimate: a missed window or a void moves it, and the
 * file's build records the real time. Null when the schedule has no cutoff that can take it.
 */
export function expectedDebitClearsAt(
  schedule: CutoffSchedule,
  amountCents: number,
  now: number,
): number | null {
  const kinds = amountCents > SAME_DAY_ENTRY_MAX_CENTS ? NEXT_DAY : ANY_KIND;
  if (!schedule.cutoffs.some((cutoff) => kinds.has(cutoff.kind))) return null;
  const slot = slotsAfter(schedule, now, kinds);
  return settlementAt(slot.effectiveDate, schedule.timeZone);
}

/**
 * When the sandbox bank writes its return file for entries effective on `effectiveDate`: 09:00
 * bank-local two banking days after it, before their settlement.
 */
export function sandboxReturnsAt(effectiveDate: string, timeZone: string): number {
  const day = dateOf(addBusinessDays(utcMidnight(effectiveDate), RETURN_WINDOW_BANKING_DAYS));
  return bankTime(day, SANDBOX_RETURNS_TIME, timeZone);
}
