/** Pure checks of a ledger transaction before anything is written, and the kinds it may have. */
import { type LedgerAccountCode, nonNegativeAccounts, type Transfer } from "./types.ts";

/**
 * Every kind of ledger transaction: what happened, named by the capability that posts it. A
 * payout's kind is `payout.` and its state-machine move (or `payout.hold` at creation, and
 * `payout.late_return` for money that came back after completion, which is no move); the
 * tie-out classifies each kind, so a kind added here must be placed there too. A check's paid
 * item that did not match (issue 19) is posted when an operator resolves it: `check.paid_exception`
 * for money the bank paid that the ledger had released, `check.paid_short` for the part of a
 * check the bank paid for less than it was written for. `rail.paid_exception` is a rail's payment
 * of an entry whose payout no longer held the money (canceled while in flight), let stand by an
 * operator (lib/rails/exceptions.ts). `funding.ach_returned_after_clear` is an ACH funding's debit
 * the bank took back after it cleared (from available, the rest owed in `funding_shortfall`), and
 * `funding.shortfall_covered` a later credit paying that back. `recon.adjustment_in` and
 * `recon.adjustment_out` are adjusting entries an operator posts when resolving a reconciliation
 * exception (lib/reconciliation): the bank holds more (in) or less (out) than the ledger said.
 * `payout.escheat` remits a still-owed
 * payout's money to a state (unclaimed property), from reserved, or from available when an
 * expired offer had given it back.
 */
export const ledgerTransactionKinds = [
  "funding.ach_initiated",
  "funding.ach_cleared",
  "funding.ach_returned",
  "funding.wire_received",
  "funding.ach_returned_after_clear",
  "funding.shortfall_covered",
  "payout.hold",
  "payout.release_funds",
  "payout.select",
  "payout.send",
  "payout.fail",
  "payout.retry",
  "payout.reoffer",
  "payout.complete",
  "payout.cancel",
  "payout.reject_payment",
  "payout.expire_offer",
  "payout.late_return",
  "payout.fallback",
  "payout.rechoose",
  "payout.escheat",
  "check.paid_exception",
  "check.paid_short",
  "rail.paid_exception",
  "recon.adjustment_in",
  "recon.adjustment_out",
] as const;

export type LedgerTransactionKind = (typeof ledgerTransactionKinds)[number];

const knownKinds: ReadonlySet<string> = new Set(ledgerTransactionKinds);

/** True when `kind` is a kind of ledger transaction. */
export function isLedgerTransactionKind(kind: string): kind is LedgerTransactionKind {
  return knownKinds.has(kind);
}

/**
 * Net change per account of a list of transfers. Throws on a programmer error: no transfers, an
 * amount that is not a positive safe integer, or a transfer from an account to itself.
 */
export function netChanges(transfers: readonly Transfer[]): Map<LedgerAccountCode, number> {
  if (transfers.length === 0) throw new Error("a ledger transaction needs at least one transfer");
  const changes = new Map<LedgerAccountCode, number>();
  for (const transfer of transfers) {
    if (!Number.isSafeInteger(transfer.amountCents) || transfer.amountCents <= 0) {
      throw new Error(
        `transfer amount must be a positive whole number of cents, got ${transfer.amountCents}`,
      );
    }
    if (transfer.from === transfer.to) throw new Error(`transfer from ${transfer.from} to itself`);
    changes.set(transfer.from, (changes.get(transfer.from) ?? 0) - transfer.amountCents);
    changes.set(transfer.to, (changes.get(transfer.to) ?? 0) + transfer.amountCents);
  }
  let sum = 0;
  for (const change of changes.values()) sum += change;
  if (sum !== 0) throw new Error(`ledger transaction does not balance: sum ${sum}`);
  return changes;
}

/** The first never-negative account the changes would overdraw, or null. */
export function overdraft(
  balances: Readonly<Record<LedgerAccountCode, number>>,
  changes: ReadonlyMap<LedgerAccountCode, number>,
): { account: LedgerAccountCode; balanceCents: number; changeCents: number } | null {
  for (const account of nonNegativeAccounts) {
    const change = changes.get(account) ?? 0;
    if (balances[account] + change < 0) {
      return { account, balanceCents: balances[account], changeCents: change };
    }
  }
  return null;
}
