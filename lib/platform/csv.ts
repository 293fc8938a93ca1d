/** CSV cells (RFC 4180) for the files the service writes: tie-outs and console exports. */
import { formatDollars } from "./money.ts";

/** Dollars with two decimals and no symbol or separators (`-1.50`), from the one formatter. */
export function csvDollars(cents: number): string {
  return formatDollars(cents).replace(/[$,]/g, "");
}

/**
 * A text cell: quoted when it holds a separator, a quote or a line break (RFC 4180), and kept
 * from running as a spreadsheet formula with a leading apostrophe (OWASP).
 */
export function csvText(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
