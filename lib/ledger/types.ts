/**
 * The ledger's vocabulary. Every money move is a transfer from one account of a business line to
 * another; a transaction is one or more transfers and so always sums to zero by construction,
 * which `post` asserts again before writing and after reading back.
 */
import type { LedgerTransactionKind } from "./postings.ts";

export const ledgerAccountCodes = [
  "available",
  "pending_funding",
  "reserved",
  "in_transit",
  "fees_payor",
  "fees_payee",
  "fees_service",
  "bank",
  /**
   * What the line owes: an ACH funding debit the bank took back after it had cleared, beyond what
   * available held (a receivable, so it reads below zero while owed). New payouts of the line wait
   * until later credits cover it.
   */
  "funding_shortfall",
  /**
   * Money remitted to a state as unclaimed property: it left the company's hands for the owner,
   * who claims it from that state (external, like `bank`).
   */
  "unclaimed_remitted",
] as const;

export type LedgerAccountCode = (typeof ledgerAccountCodes)[number];

/** Accounts that may never go below zero. */
export const nonNegativeAccounts: readonly LedgerAccountCode[] = ["available", "reserved"];

export interface Transfer {
  readonly from: LedgerAccountCode;
  readonly to: LedgerAccountCode;
  /** Positive integer cents. */
  readonly amountCents: number;
}

export interface LedgerTransactionInput {
  readonly companyId: string;
  readonly lineId: string;
  /** What happened, e.g. `funding.wire_received`, `payout.hold`, `payout.complete`. */
  readonly kind: LedgerTransactionKind;
  readonly transfers: readonly Transfer[];
  readonly payoutId?: string;
  readonly fundingId?: string;
  /** Effective time (the sandbox clock in test). */
  readonly postedAt: number;
}
