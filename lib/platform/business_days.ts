/**
 * US banking days: weekends and Federal Reserve holidays are skipped. The Fed observes a Sunday
 * holiday on Monday but does not move a Saturday holiday to Friday. Days are UTC dates.
 */
const DAY_MS = 86_400_000;

const utcDay = (year: number, month: number, day: number) => Date.UTC(year, month, day);

/** The n-th (1-based) given weekday of a month, or the last one when n is -1. */
function nthWeekday(year: number, month: number, weekday: number, n: number): number {
  if (n === -1) {
    const last = new Date(Date.UTC(year, month + 1, 0));
    const back = (last.getUTCDay() - weekday + 7) % 7;
    return Date.UTC(year, month + 1, -back);
  }
  const first = new Date(Date.UTC(year, month, 1)).getUTCDay();
  return Date.UTC(year, month, 1 + ((weekday - first + 7) % 7) + (n - 1) * 7);
}

/** Sunday holidays move to Monday; Saturday holidays are not observed on a banking day. */
function observed(day: number): number | null {
  const weekday = new Date(day).getUTCDay();
  if (weekday === 0) return day + DAY_MS;
  if (weekday === 6) return null;
  return day;
}

const holidayCache = new Map<number, Set<number>>();

/** Federal Reserve holidays of a year, as UTC midnight timestamps of the observed days. */
export function federalReserveHolidays(year: number): Set<number> {
  const cached = holidayCache.get(year);
  if (cached) return cached;
  const fixed = [
    utcDay(year, 0, 1), // New Year's Day
    utcDay(year, 5, 19), // Juneteenth
    utcDay(year, 6, 4), // Independence Day
    utcDay(year, 10, 11), // Veterans Day
    utcDay(year, 11, 25), // Christmas Day
  ];
  const floating = [
    nthWeekday(year, 0, 1, 3), // Martin Luther King Jr. Day
    nthWeekday(year, 1, 1, 3), // Washington's Birthday
    nthWeekday(year, 4, 1, -1), // Memorial Day
    nthWeekday(year, 8, 1, 1), // Labor Day
    nthWeekday(year, 9, 1, 2), // Columbus Day
    nthWeekday(year, 10, 4, 4), // Thanksgiving Day
  ];
  const days = new Set<number>();
  for (const day of fixed) {
    const moved = observed(day);
    if (moved !== null) days.add(moved);
  }
  for (const day of floating) days.add(day);
  holidayCache.set(year, days);
  return days;
}

/** Whether the UTC date of `ms` is a banking day. */
export function isBusinessDay(ms: number): boolean {
  const date = new Date(ms);
  const weekday = date.getUTCDay();
  if (weekday === 0 || weekday === 6) return false;
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return !federalReserveHolidays(date.getUTCFullYear()).has(midnight);
}

/** `ms` moved forward by `days` banking days, keeping the time of day. */
export function addBusinessDays(ms: number, days: number): number {
  if (!Number.isInteger(days) || days < 0) {
    throw new Error(`business days must be a whole number >= 0, got ${days}`);
  }
  let at = ms;
  let left = days;
  while (left > 0) {
    at += DAY_MS;
    if (isBusinessDay(at)) left--;
  }
  return at;
}
