/**
 * What an adjusting entry of a reconciliation exception posts (pure): the ledger follows the bank.
 * A bank debit nothing expected, or an expected credit the bank never received, means the bank
 * holds less than the ledger said: available to the bank (`recon.adjustment_out`). A bank credit
 * nothing expected, or an expected debit the bank never made, means it holds more: the bank to
 * available (`recon.adjustment_in`).
 */
import type { LedgerTransactionKind } from "../ledger/postings.ts";
import type { LedgerAccountCode } from "../ledger/types.ts";

/** A resolution's note is at most this long. */
export const RECON_NOTE_LENGTH_MAX = 500;

export interface AdjustingEntry {
  readonly kind: Extract<LedgerTransactionKind, "recon.adjustment_in" | "recon.adjustment_out">;
  readonly from: LedgerAccountCode;
  readonly to: LedgerAccountCode;
  readonly amountCents: number;
}

/** The adjusting entry that makes the ledger agree with the bank about one exception. */
export function adjustingEntryOf(
  exception: { side: "bank" | "service"; direction: "credit" | "debit"; amountCents: number },
): AdjustingEntry {
  const bankHoldsLess = (exception.side === "bank") === (exception.direction === "debit");
  return bankHoldsLess
    ? {
      kind: "recon.adjustment_out",
      from: "available",
      to: "bank",
      amountCents: exception.amountCents,
    }
    : {
      kind: "recon.adjustment_in",
      from: "bank",
      to: "available",
      amountCents: exception.amountCents,
    };
}
