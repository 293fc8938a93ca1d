/**
 * How people read times (the console, beside formatDollars in money.ts for amounts): one text per
 * moment and zone, in English with 24-hour clocks, so a screenshot reads the same on every machine.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string, withTime: boolean): Intl.DateTimeFormat {
  const key = `${timeZone}|${withTime}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      year: "numeric",
      month: "short",
      day: "numeric",
      ...(withTime ? { hour: "2-digit", minute: "2-digit", hourCycle: "h23" } : {}),
      ...(withTime ? { timeZoneName: "short" } : {}),
    });
    formatters.set(key, formatter);
  }
  return formatter;
}

/** A moment in a zone: 1764000000000, "America/Chicago" → "Nov 24, 2025, 10:00 CST". */
export function formatDateTime(at: number, timeZone: string): string {
  return formatterOf(timeZone, true).format(at);
}

/** A moment's calendar day in a zone: "Nov 24, 2025". */
export function formatDate(at: number, timeZone: string): string {
  return formatterOf(timeZone, false).format(at);
}

/** The moment in UTC, as hover text shows it: "2025-11-24 16:00:00 UTC". */
export function formatUtc(at: number): string {
  return `${new Date(at).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** How far a zone's clock is ahead of UTC at a moment, in ms (negative west of Greenwich). */
function zoneOffsetMs(at: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const wall = Date.UTC(
    part("year"),
    part("month") - 1,
    part("day"),
    part("hour"),
    part("minute"),
    part("second"),
  );
  return wall - Math.floor(at / 1000) * 1000;
}

/**
 * The moment a calendar day (YYYY-MM-DD) begins in a zone, or null for text that is no date:
 * "2026-03-08", "America/New_York" → 2026-03-08T05:00:00Z.
 */
export function startOfDayIn(date: string, timeZone: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return null;
  const midnightUtc = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(midnightUtc) || new Date(midnightUtc).toISOString().slice(0, 10) !== date) {
    return null;
  }
  // Twice: the offset at the first guess may differ from the offset at the day's start (DST).
  const guess = midnightUtc - zoneOffsetMs(midnightUtc, timeZone);
  return midnightUtc - zoneOffsetMs(guess, timeZone);
}

/** The calendar day (YYYY-MM-DD) of a moment in a zone. */
export function dayIn(at: number, timeZone: string): string {
  return new Date(at + zoneOffsetMs(at, timeZone)).toISOString().slice(0, 10);
}
