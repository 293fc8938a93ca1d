/**
 * The legal amount of a check: the dollars in words and the cents as a fraction of 100, the form
 * banks read when the figures and the words differ ("One Thousand Two Hundred Thirty Four and
 * 56/100 Dollars"). The words come from `to-words`; only whole dollars are handed to it, so no
 * fractional number is ever formatted.
 */
import { ToWords } from "to-words";

const toWords = new ToWords({ localeCode: "en-US" });

/** The amount of a check in words: 123456 → "One Thousand Two Hundred Thirty Four and 56/100 Dollars". */
export function amountInWords(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents <= 0) {
    throw new Error(`a check amount must be a positive whole number of cents, got ${cents}`);
  }
  const dollars = Math.trunc(cents / 100);
  const fraction = String(cents % 100).padStart(2, "0");
  return `${toWords.convert(dollars)} and ${fraction}/100 Dollars`;
}
