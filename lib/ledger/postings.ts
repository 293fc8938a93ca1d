/** Pure checks of a ledger transaction before anything is written. */
import { type LedgerAccountCode, nonNegativeAccounts, type Transfer } from "./types.ts";

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
