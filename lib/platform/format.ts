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
