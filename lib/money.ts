/** Money is integer cents everywhere inside; dollars appear only at the API edge. */

/** Cents as a JSON number of dollars: 123456 → 1234.56 (exact: n/100 prints as its decimal). */
export function centsToDollars(cents: number): number {
  if (!Number.isSafeInteger(cents)) throw new Error(`cents must be a safe integer, got ${cents}`);
  return cents / 100;
}
