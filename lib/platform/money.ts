/** Money is integer cents everywhere inside; dollars appear only at the API edge. */
import { ok, refuse, type Result } from "./result.ts";

/** Cents as a JSON number of dollars: 123456 → 1234.56 (exact: n/100 prints as its decimal). */
export function centsToDollars(cents: number): number {
  if (!Number.isSafeInteger(cents)) throw new Error(`cents must be a safe integer, got ${cents}`);
  return cents / 100;
}

const DOLLARS = /^(0|[1-9]\d{0,12})(?:\.(\d{1,2}))?$/;
/** A negative decimal number: refused for its sign, which is what the caller needs to hear. */
const NEGATIVE = /^-(0|[1-9]\d*)(?:\.\d+)?$/;

/**
 * Cents from the source text of a JSON number of dollars (docs/contract.md §2): at most two
 * decimals, no sign, no exponent, within the configured bounds. `10.005` and `1e2` are refused
 * rather than rounded, because a rounded amount is not the amount the caller sent.
 */
export function parseDollars(
  source: string,
  bounds: { minCents: number; maxCents: number },
): Result<number, "amount_invalid"> {
  if (NEGATIVE.test(source)) {
    return refuse(
      "amount_invalid",
      bounds.minCents > 0
        ? `must be positive: at least ${formatDollars(bounds.minCents)}, got ${source}`
        : `must not be negative, got ${source}`,
    );
  }
  const match = DOLLARS.exec(source);
  if (!match) {
    return refuse(
      "amount_invalid",
      `must be dollars with at most two decimals and no exponent, got ${source}`,
    );
  }
  const cents = Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"));
  if (cents < bounds.minCents) {
    return refuse("amount_invalid", `must be at least ${formatDollars(bounds.minCents)}`);
  }
  if (cents > bounds.maxCents) {
    return refuse("amount_invalid", `must be at most ${formatDollars(bounds.maxCents)}`);
  }
  return ok(cents);
}

/**
 * The one human-facing form of an amount (messages, pages, refusals): 123450 → "$1,234.50",
 * -150 → "-$1.50". Integer arithmetic only, and no locale data, so every reader sees the same text.
 */
export function formatDollars(cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new Error(`cents must be a safe integer, got ${cents}`);
  const magnitude = Math.abs(cents);
  const whole = String(Math.trunc(magnitude / 100)).replace(/\B(?=(\d{3})+$)/g, ",");
  const fraction = String(magnitude % 100).padStart(2, "0");
  return `${cents < 0 ? "-" : ""}$${whole}.${fraction}`;
}

/**
 * A provider's decimal amount of positive cents: 123450 → "1234.50" (integer arithmetic, no
 * locale); `what` names the amount in the error of anything else.
 */
export function decimalAmount(cents: number, what: string): string {
  if (!Number.isSafeInteger(cents) || cents <= 0) {
    throw new Error(`${what} must be positive whole cents, got ${cents}`);
  }
  return `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}
