/**
 * The payout state machine: one transition table decides every move. A move returns the next
 * state, the ledger transfers and the events it causes, or a coded refusal with no side effect.
 * Money (DESIGN 5 and 14): a payout holds its amount plus payor and service fees in `reserved`
 * until sent; sending moves the hold to `in_transit`; completion pays the payee the amount less the
 * payee fee and the fees to their accounts; a failure brings the hold back to `reserved`; a cancel
 * releases it to `available`. Completed and canceled are terminal: money that comes back after
 * completion is no move (`lateReturn` below decides it, and the payout stays completed). A payout
 * about to be submitted that sanctions screening holds waits `in_review` with its hold in
 * `reserved`: an operator clears it (back to modality_selected, submitted again) or rejects it
 * (failed with `sanctions_review`, the money held until the company cancels).
 */
import type { Transfer } from "../ledger/types.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { EventKey, PayoutStatus } from "./states.ts";

/** What the state machine needs to know of a payout. */
export interface PayoutSnapshot {
  readonly status: PayoutStatus;
  readonly amountCents: number;
  /** Held for this payout in reserved (before sending) or in_transit (after). */
  readonly heldCents: number;
  readonly payorFeeCents: number;
  readonly payeeFeeCents: number;
  readonly serviceFeeCents: number;
}

export interface MethodFees {
  readonly payorFeeCents: number;
  readonly payeeFeeCents: number;
  readonly serviceFeeCents: number;
}

export type PayoutMove =
  /** pending_funds → created once available covers the disbursement; `holdCents` is taken. */
  | { readonly kind: "release_funds"; readonly holdCents: number }
  | { readonly kind: "request_endorsement" }
  | { readonly kind: "endorsements_complete" }
  /** The payee was notified and may choose a method. */
  | { readonly kind: "offer" }
  /** The payee chose a method: the hold becomes amount + that method's payor and service fees. */
  | { readonly kind: "select"; readonly paymentMethodId: number; readonly fees: MethodFees }
  /** The rail refused before sending. */
  | { readonly kind: "rail_refused"; readonly reason: string }
  | { readonly kind: "send" }
  | { readonly kind: "complete" }
  /** The rail failed or returned the payment after sending. */
  | { readonly kind: "fail"; readonly reason: string }
  /** Automatic retry; `allowed` is the company policy's verdict for this failure. */
  | { readonly kind: "retry"; readonly allowed: boolean }
  /** Ask the payee to choose again; the hold goes back to `holdCents` (all allowed methods). */
  | { readonly kind: "reoffer"; readonly holdCents: number }
  | { readonly kind: "cancel" }
  | { readonly kind: "expire_offer" }
  /** Sanctions screening found a potential match before submission: an operator must decide. */
  | { readonly kind: "hold_for_review" }
  /** An operator cleared the review: the payout may be submitted again. */
  | { readonly kind: "clear_review" }
  /** An operator rejected the review: the payout fails with `sanctions_review`. */
  | { readonly kind: "reject_review" };

export type MoveKind = PayoutMove["kind"];

export interface TransitionOutcome {
  readonly status: PayoutStatus;
  readonly heldCents: number;
  readonly transfers: Transfer[];
  readonly events: EventKey[];
  /** Fees fixed by a selection (unchanged otherwise). */
  readonly fees: MethodFees;
}

export type TransitionRefusal =
  | "illegal_transition"
  | "not_cancelable"
  | "retry_not_allowed"
  | "fee_exceeds_amount";

const CANCELABLE: readonly PayoutStatus[] = [
  "pending_funds",
  "created",
  "awaiting_endorsement",
  "modality_offered",
  "in_review",
  "failed",
];

/** The transition table: which states each move leaves from and the state it reaches. */
export const transitionTable: Readonly<
  Record<MoveKind, { from: readonly PayoutStatus[]; to: PayoutStatus }>
> = {
  release_funds: { from: ["pending_funds"], to: "created" },
  request_endorsement: { from: ["created"], to: "awaiting_endorsement" },
  endorsements_complete: { from: ["awaiting_endorsement"], to: "modality_offered" },
  offer: { from: ["created"], to: "modality_offered" },
  select: { from: ["modality_offered"], to: "modality_selected" },
  rail_refused: { from: ["modality_selected"], to: "failed" },
  send: { from: ["modality_selected"], to: "funds_sent" },
  complete: { from: ["funds_sent"], to: "completed" },
  fail: { from: ["funds_sent"], to: "failed" },
  retry: { from: ["failed"], to: "funds_sent" },
  reoffer: { from: ["failed"], to: "modality_offered" },
  cancel: { from: CANCELABLE, to: "canceled" },
  expire_offer: { from: ["modality_offered"], to: "canceled" },
  // Screening runs before a first submission (selected) and before a retry (failed).
  hold_for_review: { from: ["modality_selected", "failed"], to: "in_review" },
  clear_review: { from: ["in_review"], to: "modality_selected" },
  reject_review: { from: ["in_review"], to: "failed" },
};

const move = (from: Transfer["from"], to: Transfer["to"], amountCents: number): Transfer[] =>
  amountCents > 0 ? [{ from, to, amountCents }] : [];

/** Moves `payout` by `step`, or refuses with no effect. */
export function transition(
  payout: PayoutSnapshot,
  step: PayoutMove,
): Result<TransitionOutcome, TransitionRefusal> {
  const rule = transitionTable[step.kind];
  if (!rule.from.includes(payout.status)) {
    if (step.kind === "cancel") {
      return refuse("not_cancelable", `a payout in ${payout.status} cannot be canceled`, {
        details: { status: payout.status },
      });
    }
    return refuse("illegal_transition", `${step.kind} is not allowed from ${payout.status}`, {
      details: { status: payout.status, move: step.kind },
    });
  }
  const fees: MethodFees = {
    payorFeeCents: payout.payorFeeCents,
    payeeFeeCents: payout.payeeFeeCents,
    serviceFeeCents: payout.serviceFeeCents,
  };
  const outcome = (heldCents: number, transfers: Transfer[], events: EventKey[], newFees = fees) =>
    ok({ status: rule.to, heldCents, transfers, events, fees: newFees });
  const held = payout.heldCents;

  switch (step.kind) {
    case "release_funds":
      return outcome(step.holdCents, move("available", "reserved", step.holdCents), []);
    case "request_endorsement":
      return outcome(held, [], ["pending_authorization"]);
    case "endorsements_complete":
    case "offer":
      return outcome(held, [], ["offered"]);
    case "select": {
      if (step.fees.payeeFeeCents >= payout.amountCents) {
        return refuse(
          "fee_exceeds_amount",
          `the payee fee ${step.fees.payeeFeeCents} is not below the amount ${payout.amountCents}`,
        );
      }
      const hold = payout.amountCents + step.fees.payorFeeCents + step.fees.serviceFeeCents;
      const adjust = hold < held
        ? move("reserved", "available", held - hold)
        : move("available", "reserved", hold - held);
      return outcome(hold, adjust, ["selected"], step.fees);
    }
    case "rail_refused":
    case "fail":
      return outcome(held, step.kind === "fail" ? move("in_transit", "reserved", held) : [], [
        "failed",
      ]);
    case "send":
      return outcome(held, move("reserved", "in_transit", held), ["processing"]);
    case "retry":
      if (!step.allowed) {
        return refuse(
          "retry_not_allowed",
          "the company's retry policy does not allow another attempt",
        );
      }
      return outcome(held, move("reserved", "in_transit", held), ["processing"]);
    case "complete": {
      const transfers = [
        ...move("in_transit", "bank", payout.amountCents - payout.payeeFeeCents),
        ...move("in_transit", "fees_payee", payout.payeeFeeCents),
        ...move("in_transit", "fees_payor", payout.payorFeeCents),
        ...move("in_transit", "fees_service", payout.serviceFeeCents),
      ];
      const paid = transfers.reduce((sum, t) => sum + t.amountCents, 0);
      if (paid !== held) throw new Error(`payout completion pays ${paid} cents but holds ${held}`);
      return outcome(0, transfers, ["completed"]);
    }
    case "reoffer": {
      const adjust = step.holdCents < held
        ? move("reserved", "available", held - step.holdCents)
        : move("available", "reserved", step.holdCents - held);
      return outcome(step.holdCents, adjust, ["offered"], {
        payorFeeCents: 0,
        payeeFeeCents: 0,
        serviceFeeCents: 0,
      });
    }
    case "hold_for_review":
    case "clear_review":
      // The hold stays in reserved; the company sees in_review on the payout, no event is defined.
      return outcome(held, [], []);
    case "reject_review":
      return outcome(held, [], ["failed"]);
    case "cancel":
    case "expire_offer":
      // From pending_funds nothing was held; otherwise the hold is in reserved.
      return outcome(0, move("reserved", "available", held), ["canceled"]);
  }
}

export type LateReturnRefusal = "payout_not_completed" | "already_returned";

/**
 * Money of a completed payout that the bank sent back later (a live ACH return after the return
 * window closed, a PayPal refund; DESIGN 15). It is no move, since completed is terminal: the
 * payout stays completed, and what completion paid to the bank, the amount less the payee fee,
 * goes from the bank to available for the company to use again. The fees stay charged: the rail
 * did its work. Nothing is offered again (an operator decides). A payout comes back once.
 */
export function lateReturn(
  payout: PayoutSnapshot,
  options: { readonly returnedBefore: boolean },
): Result<{ transfers: Transfer[]; events: EventKey[] }, LateReturnRefusal> {
  if (payout.status !== "completed") {
    return refuse(
      "payout_not_completed",
      `a late return applies to a completed payout; this one is ${payout.status} (a return before completion fails the payout)`,
      { details: { status: payout.status } },
    );
  }
  if (options.returnedBefore) {
    return refuse("already_returned", "the payout's money already came back after completion");
  }
  return ok({
    transfers: move("bank", "available", payout.amountCents - payout.payeeFeeCents),
    events: ["returned"],
  });
}
