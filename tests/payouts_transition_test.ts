import assert from "node:assert/strict";
import { type PayoutStatus, payoutStatuses } from "../lib/payouts/states.ts";
import {
  decideEntryOutcome,
  type MoneyInFlightStage,
  moveConsultsMoneyInFlight,
  type PayoutMove,
  type PayoutSnapshot,
  returnedRemittance,
  transition,
  transitionTable,
} from "../lib/payouts/transition.ts";

const fees = { payorFeeCents: 150, payeeFeeCents: 50, serviceFeeCents: 25 };
const noFees = { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 };
const moves: PayoutMove[] = [
  { kind: "release_funds", holdCents: 10_300 },
  { kind: "request_endorsement" },
  { kind: "endorsements_complete" },
  { kind: "offer" },
  { kind: "select", paymentMethodId: 1, fees },
  { kind: "rail_refused", reason: "card_declined" },
  { kind: "send" },
  { kind: "complete" },
  { kind: "fail", reason: "R03" },
  { kind: "retry", allowed: true },
  { kind: "reoffer", holdCents: 10_300 },
  { kind: "cancel" },
  { kind: "expire_offer" },
  { kind: "hold_for_approval" },
  { kind: "approve_payment" },
  { kind: "reject_payment" },
  { kind: "fallback", paymentMethodId: 2, fees },
  { kind: "rechoose", paymentMethodId: 1, fees: noFees },
  { kind: "hold_owed" },
  { kind: "escheat" },
];

/** A payout in `status` as the machine leaves it there: amount $100.00, hold per state. */
function payoutIn(status: PayoutStatus): PayoutSnapshot {
  const selected = ["modality_selected", "funds_sent", "failed", "completed"].includes(status);
  const heldCents = status === "pending_funds" || status === "completed" || status === "canceled"
    ? 0
    : selected
    ? 10_175
    : 10_300;
  return {
    status,
    amountCents: 10_000,
    heldCents,
    ...(selected ? fees : { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 }),
    // A selected payout here was chosen by the deadline's fallback (its check not yet sent).
    fellBack: status === "modality_selected",
    // A canceled payout here is one whose offer expired unchosen (still owed).
    expiredUnchosen: status === "canceled",
  };
}

type Expected = [to: PayoutStatus, transfers: [string, string, number][], events: string[]];

/** The documented legal moves; every other state × move pair must be refused. */
const legal: Partial<Record<PayoutStatus, Partial<Record<PayoutMove["kind"], Expected>>>> = {
  pending_funds: {
    release_funds: ["created", [["available", "reserved", 10_300]], []],
    cancel: ["canceled", [], ["canceled"]],
  },
  created: {
    request_endorsement: ["awaiting_endorsement", [], ["pending_authorization"]],
    offer: ["modality_offered", [], ["offered"]],
    cancel: ["canceled", [["reserved", "available", 10_300]], ["canceled"]],
    hold_for_approval: ["pending_approval", [], ["pending_approval"]],
  },
  // Held by a payment approval rule before the payee is told.
  pending_approval: {
    approve_payment: ["created", [], ["payment_approved"]],
    reject_payment: [
      "canceled",
      [["reserved", "available", 10_300]],
      ["payment_rejected", "canceled"],
    ],
    cancel: ["canceled", [["reserved", "available", 10_300]], ["canceled"]],
  },
  awaiting_endorsement: {
    endorsements_complete: ["modality_offered", [], ["offered"]],
    cancel: ["canceled", [["reserved", "available", 10_300]], ["canceled"]],
  },
  modality_offered: {
    // Hold 10,300 (highest fees of the allowed methods) shrinks to 10,000 + 150 + 25.
    select: ["modality_selected", [["reserved", "available", 125]], ["selected"]],
    cancel: ["canceled", [["reserved", "available", 10_300]], ["canceled"]],
    expire_offer: ["canceled", [["reserved", "available", 10_300]], ["canceled"]],
    fallback: [
      "modality_selected",
      [["reserved", "available", 125]],
      ["selected", "fallback_at_deadline"],
    ],
    hold_owed: ["modality_offered", [], []],
    // The amount owed is remitted; the fees held beside it go back to available.
    escheat: [
      "escheated",
      [["reserved", "unclaimed_remitted", 10_000], ["reserved", "available", 300]],
      ["escheated"],
    ],
  },
  modality_selected: {
    rail_refused: ["failed", [], ["failed"]],
    send: ["funds_sent", [["reserved", "in_transit", 10_175]], ["processing"]],
    // The payee's choice replaces the fallback check: no fees here, so the fees' hold goes back.
    rechoose: ["modality_selected", [["reserved", "available", 175]], ["selected"]],
  },
  // Held by sanctions screening (its review moves are tested in sanctions_test.ts).
  in_review: {
    cancel: ["canceled", [["reserved", "available", 10_300]], ["canceled"]],
  },
  funds_sent: {
    complete: ["completed", [
      ["in_transit", "bank", 9_950],
      ["in_transit", "fees_payee", 50],
      ["in_transit", "fees_payor", 150],
      ["in_transit", "fees_service", 25],
    ], ["completed"]],
    fail: ["failed", [["in_transit", "reserved", 10_175]], ["failed"]],
  },
  failed: {
    retry: ["funds_sent", [["reserved", "in_transit", 10_175]], ["processing"]],
    reoffer: ["modality_offered", [["available", "reserved", 125]], ["offered"]],
    cancel: ["canceled", [["reserved", "available", 10_175]], ["canceled"]],
    escheat: [
      "escheated",
      [["reserved", "unclaimed_remitted", 10_000], ["reserved", "available", 175]],
      ["escheated"],
    ],
  },
  // An offer that expired canceled gave its hold back: remitting takes the amount from available.
  canceled: {
    escheat: ["escheated", [["available", "unclaimed_remitted", 10_000]], ["escheated"]],
  },
};

for (const status of payoutStatuses) {
  for (const step of moves) {
    const expected = legal[status]?.[step.kind];
    Deno.test(`${status} × ${step.kind} → ${expected ? expected[0] : "refused"}`, () => {
      const result = transition(payoutIn(status), step);
      if (!expected) {
        assert.equal(result.ok, false);
        if (result.ok) return;
        assert.equal(result.code, step.kind === "cancel" ? "not_cancelable" : "illegal_transition");
        assert.equal(
          result.message,
          step.kind === "cancel"
            ? `a payout in ${status} cannot be canceled`
            : `${step.kind} is not allowed from ${status}`,
        );
        return;
      }
      assert.ok(result.ok, result.ok ? "" : result.message);
      const [to, transfers, events] = expected;
      assert.equal(result.value.status, to);
      assert.deepEqual(result.value.transfers.map((t) => [t.from, t.to, t.amountCents]), transfers);
      assert.deepEqual(result.value.events, events);
    });
  }
}

Deno.test("retry refused by the company's policy; a payee fee not below the amount is refused", () => {
  const refused = transition(payoutIn("failed"), { kind: "retry", allowed: false });
  assert.deepEqual(refused, {
    ok: false,
    code: "retry_not_allowed",
    message: "the company's retry policy does not allow another attempt",
  });
  const tooHigh = transition(payoutIn("modality_offered"), {
    kind: "select",
    paymentMethodId: 2,
    fees: { payorFeeCents: 0, payeeFeeCents: 10_000, serviceFeeCents: 0 },
  });
  assert.ok(!tooHigh.ok && tooHigh.code === "fee_exceeds_amount");
});

Deno.test("completed and canceled are terminal: no move leaves them but an expired offer's escheat", () => {
  const companyCanceled = { ...payoutIn("canceled"), expiredUnchosen: false };
  for (const status of ["completed", "canceled"] as const) {
    for (const step of moves) {
      if (status === "canceled" && step.kind === "escheat") continue;
      assert.equal(transition(payoutIn(status), step).ok, false, `${status} × ${step.kind}`);
    }
  }
  for (const step of moves) {
    assert.equal(
      transition(companyCanceled, step).ok,
      false,
      `canceled by the company × ${step.kind}`,
    );
  }
});

/**
 * Money in flight: every legal state × move pair with the payout's rail entry at each stage. The
 * rail's own moves go whatever the stage; every other move voids an entry only queued (and goes)
 * and is refused `payout_in_flight` from a built batch on, with no effect.
 */
const stages: MoneyInFlightStage[] = ["queued", "batched", "transmitting", "transmitted"];
for (const status of payoutStatuses) {
  for (const step of moves) {
    const expected = legal[status]?.[step.kind];
    if (!expected) continue;
    for (const stage of stages) {
      const rule = transitionTable[step.kind].inFlight;
      const goes = rule === "rail" || stage === "queued";
      Deno.test(`${status} × ${step.kind} with its entry ${stage} → ${goes ? expected[0] : "payout_in_flight"}`, () => {
        const inFlight = { stage, rail: "ach", batchId: stage === "queued" ? null : "rbt_1" };
        const result = transition({ ...payoutIn(status), inFlight }, step);
        if (!goes) {
          assert.deepEqual(result.ok ? null : [result.code, result.details], [
            "payout_in_flight",
            { status, move: step.kind, stage, rail: "ach", batch_id: "rbt_1" },
          ]);
          return;
        }
        assert.ok(result.ok, result.ok ? "" : result.message);
        assert.equal(result.value.status, expected[0]);
        assert.equal(result.value.voidsQueuedEntry, rule !== "rail");
      });
    }
  }
}

Deno.test("money in flight: only cancel, re-offer, the screening hold, a rechoose and an escheat read the entry; a payout without one voids nothing", () => {
  assert.deepEqual(
    Object.keys(transitionTable).filter((kind) =>
      moveConsultsMoneyInFlight(kind as PayoutMove["kind"])
    ),
    ["reoffer", "cancel", "hold_for_review", "rechoose", "escheat"],
  );
  const canceled = transition(payoutIn("failed"), { kind: "cancel" });
  assert.ok(canceled.ok && !canceled.value.voidsQueuedEntry);
  const message = transition({
    ...payoutIn("failed"),
    inFlight: { stage: "transmitted", rail: "ach", batchId: "rbt_9" },
  }, { kind: "reoffer", holdCents: 10_300 });
  assert.deepEqual(
    message.ok ? null : message.message,
    "reoffer is refused: the payout's money is in flight, its ach entry is transmitted in batch rbt_9; the bank has it: record a recall request with the bank (payouts:recall), and wait for its return",
  );
});

Deno.test("a rail's outcome: only a payout with its funds sent takes it; a completed one took it before; any other goes to the exceptions queue", () => {
  for (const status of payoutStatuses) {
    for (const outcome of ["completed", "failed"] as const) {
      const decided = decideEntryOutcome(status, outcome);
      const expected = status === "funds_sent"
        ? "move"
        : status === "completed" && outcome === "completed"
        ? "applied_before"
        : "exception";
      assert.equal(decided.kind, expected, `${status} × ${outcome}`);
    }
  }
  assert.deepEqual(decideEntryOutcome("funds_sent", "failed"), { kind: "move", move: "fail" });
});

Deno.test("rechoose replaces only a fallback: a payee's own choice stands", () => {
  const chosen = { ...payoutIn("modality_selected"), fellBack: false };
  assert.deepEqual(transition(chosen, { kind: "rechoose", paymentMethodId: 1, fees: noFees }), {
    ok: false,
    code: "not_a_fallback",
    message:
      "the payee chose this payout's method already; only a deadline's fallback can be replaced",
    details: { status: "modality_selected" },
  });
});

Deno.test("rechoose is refused once the fallback check is in a built file", () => {
  const batched = {
    ...payoutIn("modality_selected"),
    inFlight: { stage: "batched" as const, rail: "check", batchId: "bat_1" },
  };
  const refused = transition(batched, { kind: "rechoose", paymentMethodId: 1, fees: noFees });
  assert.equal(refused.ok, false);
  if (!refused.ok) assert.equal(refused.code, "payout_in_flight");
  const queued = { ...batched, inFlight: { ...batched.inFlight, stage: "queued" as const } };
  const replaced = transition(queued, { kind: "rechoose", paymentMethodId: 1, fees: noFees });
  assert.ok(replaced.ok);
  if (replaced.ok) assert.equal(replaced.value.voidsQueuedEntry, true);
});

Deno.test("returnedRemittance: only a completed payout, between 1 cent and what came back, from available to unclaimed_remitted", () => {
  const table: [PayoutStatus, number, string | [string, string, number][]][] = [
    ["completed", 9_950, [["available", "unclaimed_remitted", 9_950]]],
    ["completed", 1, [["available", "unclaimed_remitted", 1]]],
    ["completed", 9_951, "remittance_exceeds_returned"],
    ["completed", 0, "remittance_exceeds_returned"],
    ["completed", 0.5, "remittance_exceeds_returned"],
    ["failed", 9_950, "payout_not_completed"],
    ["escheated", 9_950, "payout_not_completed"],
  ];
  for (const [status, remittedCents, expected] of table) {
    const decided = returnedRemittance(payoutIn(status), { returnedCents: 9_950, remittedCents });
    const seen = decided.ok
      ? decided.value.transfers.map((t) => [t.from, t.to, t.amountCents])
      : decided.code;
    assert.deepEqual(seen, expected, `${status} ${remittedCents}`);
    if (decided.ok) assert.deepEqual(decided.value.events, ["escheated"]);
  }
});
