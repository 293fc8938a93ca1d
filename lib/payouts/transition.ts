/**
 * The payout state machine: one transition table decides every move. A move returns the next
 * state, the ledger transfers and the events it causes, or a coded refusal with no side effect.
 * Money (contract §5): a payout holds its amount plus payor and service fees in `reserved`
 * until sent; sending moves the hold to `in_transit`; completion pays the payee the amount less the
 * payee fee and the fees to their accounts; a failure brings the hold back to `reserved`; a cancel
 * releases it to `available`. Completed and canceled are terminal: money that comes back after
 * completion is no move (`lateReturn` below decides it, and the payout stays completed). A payout
 * about to be submitted that sanctions screening holds waits `in_review` with its hold in
 * `reserved`: an operator clears it (back to modality_selected, submitted again) or rejects it
 * (failed with `sanctions_review`, the money held until the company cancels).
 *
 * Money in flight: a payout whose submission waits on a batch rail (a failed payout's automatic
 * retry, a selected payout's first attempt) has a rail entry that is queued, in a built batch,
 * being transmitted, or transmitted. The table's `inFlight` column says what each move does then:
 * `rail` moves are the rail's own (sending, its outcome) and go whatever the entry's stage;
 * `queued_only` moves (cancel, re-offer, expiry, review) go while the entry is only queued, and
 * the entry is voided in the same unit (`voidsQueuedEntry`); once it is in a built batch or later
 * they are refused with `payout_in_flight`, naming the batch: the bank may pay it. A per-payout
 * rail's submission (a provider called once per payout) is in flight from the moment its job
 * claims it until the provider's answer is recorded (`transmitting`, with no batch): the provider
 * may pay it, and the answer is applied once, by the submission.
 */
import type { Transfer } from "../ledger/types.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { EventKey, PayoutStatus } from "./states.ts";

/**
 * Where a payout's current rail entry stands: only queued for a cutoff; in a built batch
 * (`batched`, held or waiting for its release included); being handed over or in doubt
 * (`transmitting`); or handed over (`transmitted`).
 */
export type MoneyInFlightStage = "queued" | "batched" | "transmitting" | "transmitted";

/** A payout's rail entry (or per-payout submission) that holds its money in flight. */
export interface MoneyInFlight {
  readonly stage: MoneyInFlightStage;
  readonly rail: string;
  /** The batch that carries the entry; null while it is only queued, or for a per-payout rail. */
  readonly batchId: string | null;
}

/** What the state machine needs to know of a payout. */
export interface PayoutSnapshot {
  readonly status: PayoutStatus;
  readonly amountCents: number;
  /** Held for this payout in reserved (before sending) or in_transit (after). */
  readonly heldCents: number;
  readonly payorFeeCents: number;
  readonly payeeFeeCents: number;
  readonly serviceFeeCents: number;
  /**
   * The rail entry holding the payout's money in flight, if any. Read by the store only for the
   * moves whose `inFlight` rule is `queued_only`; absent means none.
   */
  readonly inFlight?: MoneyInFlight | null;
  /** The method was chosen by the pay_by deadline's fallback, not by the payee. */
  readonly fellBack?: boolean;
  /** An offer of it fell due unchosen: a canceled payout still owes its payee (unclaimed property). */
  readonly expiredUnchosen?: boolean;
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
  | { readonly kind: "reject_review" }
  /** A payment approval rule of the company holds the payout before its payee is told. */
  | { readonly kind: "hold_for_approval" }
  /** Someone of the company approved it: it goes on as a created payout. */
  | { readonly kind: "approve_payment" }
  /** Someone of the company rejected it: it is canceled and its hold goes back. */
  | { readonly kind: "reject_payment" }
  /**
   * The pay_by deadline passed unchosen: the company's fallback method (a mailed check) is chosen
   * for the payee, its hold following that method's fees as a selection's does.
   */
  | { readonly kind: "fallback"; readonly paymentMethodId: number; readonly fees: MethodFees }
  /**
   * The payee chose a method after the deadline's fallback, before the check left: the payee's
   * choice replaces it (the queued check is voided in the same unit).
   */
  | { readonly kind: "rechoose"; readonly paymentMethodId: number; readonly fees: MethodFees }
  /** The offer expired under the company's `hold`: it stays offered and owed, the hold kept. */
  | { readonly kind: "hold_owed" }
  /**
   * Remitted to a state as unclaimed property: the amount owed goes to `unclaimed_remitted`, from
   * reserved (the rest of the hold back to available), or from available where an expired
   * offer had given it back.
   */
  | { readonly kind: "escheat" };

export type MoveKind = PayoutMove["kind"];

export interface TransitionOutcome {
  readonly status: PayoutStatus;
  readonly heldCents: number;
  readonly transfers: Transfer[];
  readonly events: EventKey[];
  /** Fees fixed by a selection (unchanged otherwise). */
  readonly fees: MethodFees;
  /** The payout's queued rail entry must be voided in the same unit (it was only queued). */
  readonly voidsQueuedEntry: boolean;
}

export type TransitionRefusal =
  | "illegal_transition"
  | "not_cancelable"
  | "retry_not_allowed"
  | "fee_exceeds_amount"
  | "payout_in_flight"
  | "not_a_fallback";

/**
 * What a move does while the payout's money is in flight on a rail: `rail`, the rail's own moves,
 * go whatever the stage; `queued_only` moves void a queued entry and are refused from a built
 * batch on; `before_rail` moves leave only states that no rail entry exists in (before a method
 * is chosen, or before screening lets a submission queue), so nothing is read for them.
 */
export type InFlightRule = "rail" | "queued_only" | "before_rail";

const CANCELABLE: readonly PayoutStatus[] = [
  "pending_funds",
  "created",
  "pending_approval",
  "awaiting_endorsement",
  "modality_offered",
  "in_review",
  "failed",
];

/**
 * The transition table: which states each move leaves from, the state it reaches, and what it
 * does while the payout's money is in flight on a rail. A new state or move is one row here and
 * one case in `transition`.
 */
export const transitionTable: Readonly<
  Record<MoveKind, { from: readonly PayoutStatus[]; to: PayoutStatus; inFlight: InFlightRule }>
> = {
  release_funds: { from: ["pending_funds"], to: "created", inFlight: "before_rail" },
  request_endorsement: { from: ["created"], to: "awaiting_endorsement", inFlight: "before_rail" },
  endorsements_complete: {
    from: ["awaiting_endorsement"],
    to: "modality_offered",
    inFlight: "before_rail",
  },
  offer: { from: ["created"], to: "modality_offered", inFlight: "before_rail" },
  select: { from: ["modality_offered"], to: "modality_selected", inFlight: "before_rail" },
  rail_refused: { from: ["modality_selected"], to: "failed", inFlight: "rail" },
  send: { from: ["modality_selected"], to: "funds_sent", inFlight: "rail" },
  complete: { from: ["funds_sent"], to: "completed", inFlight: "rail" },
  fail: { from: ["funds_sent"], to: "failed", inFlight: "rail" },
  retry: { from: ["failed"], to: "funds_sent", inFlight: "rail" },
  reoffer: { from: ["failed"], to: "modality_offered", inFlight: "queued_only" },
  cancel: { from: CANCELABLE, to: "canceled", inFlight: "queued_only" },
  expire_offer: { from: ["modality_offered"], to: "canceled", inFlight: "before_rail" },
  // Screening runs before a first submission (selected) and before a retry (failed).
  hold_for_review: {
    from: ["modality_selected", "failed"],
    to: "in_review",
    inFlight: "queued_only",
  },
  clear_review: { from: ["in_review"], to: "modality_selected", inFlight: "before_rail" },
  reject_review: { from: ["in_review"], to: "failed", inFlight: "before_rail" },
  hold_for_approval: { from: ["created"], to: "pending_approval", inFlight: "before_rail" },
  approve_payment: { from: ["pending_approval"], to: "created", inFlight: "before_rail" },
  reject_payment: { from: ["pending_approval"], to: "canceled", inFlight: "before_rail" },
  fallback: { from: ["modality_offered"], to: "modality_selected", inFlight: "before_rail" },
  // Only while the fallback check's entry is queued: once in a built file the check is on its way.
  rechoose: { from: ["modality_selected"], to: "modality_selected", inFlight: "queued_only" },
  hold_owed: { from: ["modality_offered"], to: "modality_offered", inFlight: "before_rail" },
  // From canceled only when its offer expired unchosen: a payout the company canceled stays so.
  escheat: {
    from: ["modality_offered", "failed", "canceled"],
    to: "escheated",
    inFlight: "queued_only",
  },
};

/** Whether the store must read the payout's money in flight before this move. */
export const moveConsultsMoneyInFlight = (kind: MoveKind): boolean =>
  transitionTable[kind].inFlight === "queued_only";

/**
 * Where a payout's money is in flight and what to do about it, in a sentence: a batch entry with
 * its batch and stage, or a per-payout submission waiting for its provider's answer.
 */
export function describeInFlight(flight: MoneyInFlight): string {
  if (flight.batchId === null && flight.stage === "transmitting") {
    return `its ${flight.rail} submission is with the provider and has no answer yet; wait for the answer, which is applied once (the submission asks again with the same reference)`;
  }
  return `its ${flight.rail} entry is ${flight.stage} in batch ${flight.batchId}; ${
    inFlightRemedy(flight.stage)
  }`;
}

/** What an operator can do about a payout whose money is in flight at `stage`. */
export function inFlightRemedy(stage: MoneyInFlightStage): string {
  return stage === "transmitted"
    ? "the bank has it: record a recall request with the bank (payouts:recall), and wait for its return"
    : stage === "transmitting"
    ? "its transmission has no answer yet: resolve the batch with the bank first; void it only if the bank has nothing"
    : "void the batch (its other entries are queued again) to change this payout";
}

const move = (from: Transfer["from"], to: Transfer["to"], amountCents: number): Transfer[] =>
  amountCents > 0 ? [{ from, to, amountCents }] : [];

/** Moves `payout` by `step`, or refuses with no effect. */
export function transition(
  payout: PayoutSnapshot,
  step: PayoutMove,
): Result<TransitionOutcome, TransitionRefusal> {
  const rule = transitionTable[step.kind];
  const canceledByCompany = step.kind === "escheat" && payout.status === "canceled" &&
    !payout.expiredUnchosen;
  if (!rule.from.includes(payout.status) || canceledByCompany) {
    if (step.kind === "cancel") {
      return refuse("not_cancelable", `a payout in ${payout.status} cannot be canceled`, {
        details: { status: payout.status },
      });
    }
    return refuse("illegal_transition", `${step.kind} is not allowed from ${payout.status}`, {
      details: { status: payout.status, move: step.kind },
    });
  }
  const flight = payout.inFlight ?? null;
  if (flight !== null && rule.inFlight !== "rail" && flight.stage !== "queued") {
    return refuse(
      "payout_in_flight",
      `${step.kind} is refused: the payout's money is in flight, ${describeInFlight(flight)}`,
      {
        details: {
          status: payout.status,
          move: step.kind,
          stage: flight.stage,
          rail: flight.rail,
          batch_id: flight.batchId,
        },
      },
    );
  }
  const fees: MethodFees = {
    payorFeeCents: payout.payorFeeCents,
    payeeFeeCents: payout.payeeFeeCents,
    serviceFeeCents: payout.serviceFeeCents,
  };
  const outcome = (heldCents: number, transfers: Transfer[], events: EventKey[], newFees = fees) =>
    ok({
      status: rule.to,
      heldCents,
      transfers,
      events,
      fees: newFees,
      voidsQueuedEntry: flight !== null && rule.inFlight !== "rail",
    });
  const held = payout.heldCents;
  /** A method chosen (by the payee, or by the deadline's fallback): the hold follows its fees. */
  const select = (
    chosen: { readonly fees: MethodFees },
    events: EventKey[],
  ): Result<TransitionOutcome, TransitionRefusal> => {
    if (chosen.fees.payeeFeeCents >= payout.amountCents) {
      return refuse(
        "fee_exceeds_amount",
        `the payee fee ${chosen.fees.payeeFeeCents} is not below the amount ${payout.amountCents}`,
      );
    }
    const hold = payout.amountCents + chosen.fees.payorFeeCents + chosen.fees.serviceFeeCents;
    const adjust = hold < held
      ? move("reserved", "available", held - hold)
      : move("available", "reserved", hold - held);
    return outcome(hold, adjust, events, chosen.fees);
  };

  switch (step.kind) {
    case "release_funds":
      return outcome(step.holdCents, move("available", "reserved", step.holdCents), []);
    case "request_endorsement":
      return outcome(held, [], ["pending_authorization"]);
    case "endorsements_complete":
    case "offer":
      return outcome(held, [], ["offered"]);
    case "rechoose":
      if (!payout.fellBack) {
        return refuse(
          "not_a_fallback",
          "the payee chose this payout's method already; only a deadline's fallback can be replaced",
          { details: { status: payout.status } },
        );
      }
      return select(step, ["selected"]);
    case "fallback":
      return select(step, ["selected", "fallback_at_deadline"]);
    case "hold_owed":
      return outcome(held, [], []);
    case "escheat": {
      // A canceled payout gave its hold back to available when its offer expired.
      const source = payout.status === "canceled" ? "available" : "reserved";
      const rest = source === "reserved" ? held - payout.amountCents : 0;
      return outcome(0, [
        ...move(source, "unclaimed_remitted", payout.amountCents),
        ...move("reserved", "available", rest),
      ], ["escheated"]);
    }
    case "select":
      return select(step, ["selected"]);
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
    case "hold_for_approval":
      // The hold stays in reserved while the company decides.
      return outcome(held, [], ["pending_approval"]);
    case "approve_payment":
      return outcome(held, [], ["payment_approved"]);
    case "reject_payment":
      return outcome(0, move("reserved", "available", held), ["payment_rejected", "canceled"]);
    case "cancel":
    case "expire_offer":
      // From pending_funds nothing was held; otherwise the hold is in reserved.
      return outcome(0, move("reserved", "available", held), ["canceled"]);
  }
}

export type LateReturnRefusal = "payout_not_completed" | "already_returned" | "return_exceeds_paid";

/**
 * Money of a completed payout that the bank sent back later (a live ACH return after the return
 * window closed, a PayPal refund, a virtual card's unspent balance; contract §4). It is no move,
 * since completed is terminal: the payout stays completed, and what completion paid to the bank,
 * the amount less the payee fee (or `returnedCents` of it, when only part came back), goes from
 * the bank to available for the company to use again. The fees stay charged: the rail did its
 * work. Nothing is offered again (an operator decides). A payout comes back once.
 */
export function lateReturn(
  payout: PayoutSnapshot,
  options: { readonly returnedBefore: boolean; readonly returnedCents?: number },
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
  const paid = payout.amountCents - payout.payeeFeeCents;
  const returned = options.returnedCents ?? paid;
  if (!Number.isSafeInteger(returned) || returned <= 0 || returned > paid) {
    return refuse(
      "return_exceeds_paid",
      `a late return brings back between 1 and ${paid} cents (what completion paid); got ${returned}`,
      { details: { paid_cents: paid, returned_cents: returned } },
    );
  }
  return ok({ transfers: move("bank", "available", returned), events: ["returned"] });
}

export type ReturnedRemittanceRefusal = "payout_not_completed" | "remittance_exceeds_returned";

/**
 * Money of a completed payout that came back (`lateReturn`) and stayed owed to its payee, remitted
 * to a state as unclaimed property. No move either: the payout stays completed; what came back
 * goes from available, where the late return put it, to `unclaimed_remitted`.
 */
export function returnedRemittance(
  payout: PayoutSnapshot,
  options: { readonly returnedCents: number; readonly remittedCents: number },
): Result<{ transfers: Transfer[]; events: EventKey[] }, ReturnedRemittanceRefusal> {
  if (payout.status !== "completed") {
    return refuse(
      "payout_not_completed",
      `money that came back after completion is remitted from a completed payout; this one is ${payout.status}`,
      { details: { status: payout.status } },
    );
  }
  const { returnedCents, remittedCents } = options;
  if (!Number.isSafeInteger(remittedCents) || remittedCents <= 0 || remittedCents > returnedCents) {
    return refuse(
      "remittance_exceeds_returned",
      `a remittance of returned money moves between 1 and ${returnedCents} cents (what came back); got ${remittedCents}`,
      { details: { returned_cents: returnedCents, remitted_cents: remittedCents } },
    );
  }
  return ok({
    transfers: move("available", "unclaimed_remitted", remittedCents),
    events: ["escheated"],
  });
}

/** What a rail reported of a payout's entry: paid (settled, presented) or back (returned, voided). */
export type EntryOutcomeKind = "completed" | "failed";

/** What a rail's outcome does to the entry's payout. */
export type EntryOutcomeDecision =
  | { readonly kind: "move"; readonly move: "complete" | "fail" }
  /** The same outcome reached the payout before (a report read twice): nothing changes. */
  | { readonly kind: "applied_before" }
  /** The payout cannot take it (canceled, offered again, failed by another path): an operator decides. */
  | { readonly kind: "exception"; readonly reason: string };

/**
 * Decides a rail's outcome of an entry whose money was sent: only a payout with its funds sent takes
 * it, through the table's `complete` or `fail`. A payout completed already has taken a payment;
 * in any other state the payout no longer waits for this money (canceled while the entry flew,
 * say), so the outcome goes to the rail exceptions queue rather than refused or forced.
 */
export function decideEntryOutcome(
  status: PayoutStatus,
  outcome: EntryOutcomeKind,
): EntryOutcomeDecision {
  const move = outcome === "completed" ? "complete" : "fail";
  if (transitionTable[move].from.includes(status)) return { kind: "move", move };
  if (outcome === "completed" && status === "completed") return { kind: "applied_before" };
  return {
    kind: "exception",
    reason: outcome === "completed"
      ? `the rail paid the entry, but its payout is ${status}: its money was not held for this payment`
      : `the rail sent the entry's money back, but its payout is ${status}`,
  };
}
