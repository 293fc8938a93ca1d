import assert from "node:assert/strict";
import { applyMove, applyMoves, loadPayout, type MoveOptions } from "../lib/payouts/store.ts";
import type { PayoutMove } from "../lib/payouts/transition.ts";
import { eventFactsOf, readWithEventFacts } from "../lib/webhooks/event_snapshot.ts";
import { openMoneyFixture } from "./money_core_helpers.ts";

const noFees = { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 };
const achFees = { payorFeeCents: 25, payeeFeeCents: 10, serviceFeeCents: 5 };

Deno.test("a move of one payout answers its row as committed, whatever the move sets (fees, method, details, failure, retries, fallback, expiry)", async () => {
  const f = await openMoneyFixture();
  try {
    await f.fund(100_000);
    const created = await f.create([
      { payeeUuid: "a", amountCents: 1_000, allowedPaymentMethodIds: [1, 2, 3] },
      { payeeUuid: "b", amountCents: 2_000, allowedPaymentMethodIds: [1, 2] },
      { payeeUuid: "c", amountCents: 3_000, allowedPaymentMethodIds: [2] },
    ]);
    assert.ok(created.ok);
    const [a, b, c] = created.value.payouts.map((p) => p.id);
    const walks: [string, PayoutMove, MoveOptions?][] = [
      [a, { kind: "offer" }],
      [a, { kind: "hold_owed" }],
      [a, { kind: "select", paymentMethodId: 2, fees: achFees }, {
        methodDetails: { last_four: "6789", routing: "011000015" },
      }],
      [a, { kind: "rail_refused", reason: "rail_not_configured" }],
      [a, { kind: "reoffer", holdCents: 1_030 }, { detail: "re-offered" }],
      [a, { kind: "fallback", paymentMethodId: 3, fees: noFees }, {
        methodDetails: { fallback: true },
      }],
      [b, { kind: "offer" }],
      [b, { kind: "select", paymentMethodId: 1, fees: noFees }, { methodDetails: {} }],
      [b, { kind: "send" }, { railReference: "rail-ref-1" }],
      [b, { kind: "fail", reason: "R01" }],
      [b, { kind: "retry", allowed: true }],
      [c, { kind: "hold_for_approval" }],
      [c, { kind: "approve_payment" }],
      [c, { kind: "offer" }],
      [c, { kind: "expire_offer" }],
    ];
    for (const [payoutId, step, options] of walks) {
      const moved = await f.database.writer.write((tx) =>
        applyMove(tx, payoutId, step, f.now(), options)
      );
      assert.ok(moved.ok, `${step.kind}: ${!moved.ok && moved.message}`);
      assert.deepEqual(
        moved.value,
        await loadPayout(f.database.readClient, payoutId),
        `${step.kind} of ${payoutId}`,
      );
    }
    // The page's form answers its rows as committed too.
    const more = await f.create([
      { payeeUuid: "d", amountCents: 400, allowedPaymentMethodIds: [1] },
      { payeeUuid: "e", amountCents: 500, allowedPaymentMethodIds: [1] },
    ]);
    assert.ok(more.ok);
    const page = await f.database.writer.write((tx) =>
      applyMoves(
        tx,
        more.value.payouts.map((p) => ({ payoutId: p.id, step: { kind: "offer" } })),
        f.now(),
      )
    );
    assert.ok(page.ok);
    for (const payout of page.value) {
      assert.deepEqual(payout, await loadPayout(f.database.readClient, payout.id));
    }
  } finally {
    await f.close();
  }
});

Deno.test("a move's event facts read for one payout are those read for it among a page (its disbursement's statuses, documents, failure)", async () => {
  const f = await openMoneyFixture();
  try {
    await f.fund(100_000);
    const created = await f.create([
      { payeeUuid: "a", amountCents: 1_000, allowedPaymentMethodIds: [1, 2] },
      { payeeUuid: "b", amountCents: 2_000, allowedPaymentMethodIds: [1, 2] },
      { payeeUuid: "c", amountCents: 3_000, allowedPaymentMethodIds: [2] },
    ]);
    assert.ok(created.ok);
    const [a, b, c] = created.value.payouts.map((p) => p.id);
    for (const [id, step] of [[a, { kind: "offer" }], [b, { kind: "offer" }]] as const) {
      const moved = await f.database.writer.write((tx) => applyMove(tx, id, step, f.now()));
      assert.ok(moved.ok);
    }
    const selected = await f.database.writer.write((tx) =>
      applyMove(tx, b, { kind: "select", paymentMethodId: 1, fees: noFees }, f.now())
    );
    assert.ok(selected.ok);
    const read = {
      columns: "p.id AS event_payout_id, d.kind, p.rowid AS payout_number",
      from: "payouts p JOIN disbursements d ON d.id = p.disbursement_id",
    };
    const factsOf = async (ids: string[]) => {
      const { rows } = await f.database.readClient.execute(readWithEventFacts(read, ids));
      return new Map(rows.map((row) => {
        const { facts, rest } = eventFactsOf(row);
        return [String(rest.event_payout_id), { facts, rest }];
      }));
    };
    const page = await factsOf([a, b, c]);
    assert.equal(page.size, 3);
    for (const id of [a, b, c]) {
      assert.deepEqual((await factsOf([id])).get(id), page.get(id), id);
    }
    // The disbursement's least advanced payee (c, created) sets its status; b's ACH shows its form.
    assert.deepEqual(page.get(b)!.facts, {
      disbursement_status: "created",
      documents_shown: 0,
      failure_reason: null,
    });
  } finally {
    await f.close();
  }
});
