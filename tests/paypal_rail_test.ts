/**
 * The PayPal rail through the contract test server (tests/paypal_contract_server.ts): batching,
 * sender_batch_id, polling, the item-state table of issue 19, the cancel of an unclaimed item, a
 * 5xx or a timeout after PayPal took the batch (sent again, paid once), the 30-day rule, and the
 * insurer's insufficient PayPal balance.
 */
import assert from "node:assert/strict";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import { MONEY_SETTINGS, moneyProviderDeps } from "./money_core_helpers.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { cancelUnclaimedItem, recordVerifiedNotice } from "../lib/paypal/service.ts";
import {
  capturingLogs,
  choosePaypal,
  referenceOf,
  rows,
  statusOf,
  withPaypal,
} from "./paypal_helpers.ts";

const MINUTE_S = 60;

Deno.test("PayPal success: one item per payout in a batch whose sender_batch_id is our batch id; a poll finds it SUCCESS and the payout completes", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await choosePaypal(m, "paypal", 12_345);
    const reference = await referenceOf(m, payoutId);
    const [batch] = await rows(
      m,
      "SELECT id, status, rail, entry_count, total_cents, rail_reference FROM rail_batches",
    );
    assert.equal(batch.status, "transmitted");
    assert.deepEqual([batch.rail, batch.entry_count, batch.total_cents], ["paypal", 1, 12_345]);
    const [paypalBatch] = [...server.batches.entries()];
    assert.equal(paypalBatch[1].senderBatchId, batch.id);
    assert.equal(batch.rail_reference, paypalBatch[0]);
    const item = server.itemOf(reference);
    assert.deepEqual(item.payout_item, {
      recipient_type: "EMAIL",
      recipient_wallet: "PAYPAL",
      receiver: "p0@payee.test",
      amount: { currency: "USD", value: "123.45" },
      sender_item_id: reference,
    });
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });

    server.setItemState(reference, "SUCCESS");
    await m.advance(MINUTE_S);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.deepEqual(
      await rows(m, "SELECT payout_item_id, transaction_status, error_name FROM paypal_items"),
      [
        { payout_item_id: item.payout_item_id, transaction_status: "SUCCESS", error_name: null },
      ],
    );
    const balances = await m.balances();
    assert.deepEqual([balances.available, balances.reserved, balances.in_transit], [
      1_000_000 - 12_345,
      0,
      0,
    ]);
    assert.equal(server.tokensIssued, 1, "the token is cached between calls");
  });
});

Deno.test("items wait for the company's next five-minute cutoff and go in one batch; polls back off while an item is open (no webhook needed)", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    await m.advance(MINUTE_S); // 15:01: the next cutoff is 15:05
    const first = await choosePaypal(m, "paypal", 10_000, "a");
    const second = await choosePaypal(m, "venmo", 20_000, "b");
    assert.equal(server.batches.size, 0);
    assert.deepEqual(await statusOf(m, first), {
      status: "modality_selected",
      failure_reason: null,
    });
    await m.advance(4 * MINUTE_S);
    assert.equal(server.batches.size, 1);
    const [[, paypalBatch]] = [...server.batches.entries()];
    assert.equal(paypalBatch.itemIds.length, 2);
    assert.deepEqual(
      paypalBatch.itemIds.map((id) => server.items.get(id)!.payout_item.recipient_wallet),
      ["PAYPAL", "VENMO"],
    );
    assert.equal(server.items.get(paypalBatch.itemIds[1])!.payout_item.receiver, "+15555550123");
    // Nobody claims either: polled at 1, then 5 minutes later, and so on.
    const polls = () =>
      server.requests.filter((r) => r.startsWith("GET /v1/payments/payouts/")).length;
    await m.advance(MINUTE_S);
    assert.equal(polls(), 1);
    await m.advance(4 * MINUTE_S);
    assert.equal(polls(), 1);
    await m.advance(MINUTE_S);
    assert.equal(polls(), 2);
    server.setItemState(await referenceOf(m, first), "SUCCESS");
    server.setItemState(await referenceOf(m, second), "SUCCESS");
    await m.advance(15 * MINUTE_S);
    assert.equal(polls(), 3);
    assert.deepEqual(await statusOf(m, first), { status: "completed", failure_reason: null });
    assert.deepEqual(await statusOf(m, second), { status: "completed", failure_reason: null });
    // Nothing is open any more: no poll is left.
    assert.deepEqual(
      await rows(
        m,
        "SELECT count(*) AS n FROM scheduled_jobs WHERE kind = 'paypal.poll' AND done_at IS NULL",
      ),
      [{ n: 0 }],
    );
  });
});

Deno.test("Venmo unclaimed, then claimed: UNCLAIMED keeps the payout funds_sent (a re-offer could pay twice), SUCCESS later completes it", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await choosePaypal(m, "venmo", 5_000);
    const reference = await referenceOf(m, payoutId);
    server.setItemState(reference, "UNCLAIMED", "RECEIVER_UNREGISTERED");
    await m.advance(MINUTE_S);
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    assert.deepEqual(await rows(m, "SELECT transaction_status, error_name FROM paypal_items"), [
      { transaction_status: "UNCLAIMED", error_name: "RECEIVER_UNREGISTERED" },
    ]);
    await m.advance(10 * 86_400);
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    server.setItemState(reference, "SUCCESS");
    await m.advance(86_400);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
  });
});

Deno.test("unclaimed, cancelled at PayPal, then re-offered: only an UNCLAIMED item is cancelled, and the payout fails only once PayPal confirms", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await choosePaypal(m, "paypal", 7_500);
    const reference = await referenceOf(m, payoutId);
    const deps = {
      ...moneyProviderDeps(m.database),
      runtime: payoutRuntime("test", MONEY_SETTINGS),
    };
    // PayPal has not made the item known to us yet: nothing to cancel.
    const early = await cancelUnclaimedItem(deps, payoutId, m.now());
    assert.equal(early.ok ? "ok" : early.code, "paypal_item_not_found");
    await m.advance(MINUTE_S);
    // PENDING at PayPal: PayPal is asked, the cancel is refused, nothing moves.
    const pending = await cancelUnclaimedItem(deps, payoutId, m.now());
    assert.equal(pending.ok ? "ok" : pending.code, "paypal_item_not_unclaimed");
    assert.equal(server.itemOf(reference).transaction_status, "PENDING");
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });

    server.setItemState(reference, "UNCLAIMED", "RECEIVER_UNREGISTERED");
    const canceled = await cancelUnclaimedItem(deps, payoutId, m.now());
    assert.ok(canceled.ok, canceled.ok ? "" : canceled.message);
    assert.equal(server.itemOf(reference).transaction_status, "RETURNED");
    assert.deepEqual(await statusOf(m, payoutId), {
      status: "modality_offered",
      failure_reason: "unclaimed_canceled",
    });
    assert.deepEqual(await rows(m, "SELECT status, return_code FROM rail_batch_entries"), [
      { status: "failed", return_code: "UNCLAIMED_CANCELED" },
    ]);
    // The money is held again for the payee's new choice.
    const balances = await m.balances();
    assert.deepEqual([balances.available, balances.reserved, balances.in_transit], [
      1_000_000 - 7_500,
      7_500,
      0,
    ]);
    // Chosen again: a new item under a new reference, paid once.
    await choosePaypalAgain(m, payoutId);
    await m.advance(5 * MINUTE_S);
    const again = await referenceOf(m, payoutId);
    assert.notEqual(again, reference);
    server.setItemState(again, "SUCCESS");
    await m.advance(5 * MINUTE_S);
    assert.deepEqual(await statusOf(m, payoutId), {
      status: "completed",
      failure_reason: "unclaimed_canceled",
    });
  });
});

async function choosePaypalAgain(m: Parameters<typeof statusOf>[0], payoutId: string) {
  const selected = await m.database.writer.write((tx) =>
    selectMethod(tx, payoutId, {
      paymentMethodId: 7,
      details: {},
      kept: { email: "again@payee.test" },
    }, m.now())
  );
  if (!selected.ok) throw new Error(selected.message);
  await m.settle();
}

Deno.test("RETURNED (unclaimed for 30 days) fails the payout and re-offers it; FAILED, BLOCKED and DENIED fail with PayPal's error name", async () => {
  for (
    const [state, errorName, reason] of [
      ["RETURNED", "RECEIVER_UNREGISTERED", "unclaimed_returned"],
      ["FAILED", "RECEIVER_ACCOUNT_LOCKED", "RECEIVER_ACCOUNT_LOCKED"],
      ["BLOCKED", "RISK_DECLINE", "RISK_DECLINE"],
      ["DENIED", undefined, "denied"],
    ] as const
  ) {
    await withPaypal(async ({ m, server }) => {
      await m.fund(1_000_000);
      const payoutId = await choosePaypal(m, "paypal", 4_000);
      server.setItemState(await referenceOf(m, payoutId), state, errorName);
      await m.advance(MINUTE_S);
      assert.deepEqual(await statusOf(m, payoutId), {
        status: "modality_offered",
        failure_reason: reason,
      }, state);
      const balances = await m.balances();
      assert.deepEqual([balances.reserved, balances.in_transit], [4_000, 0], state);
    });
  }
});

Deno.test("HELD, PENDING and ONHOLD keep waiting", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await choosePaypal(m, "venmo", 4_000);
    const reference = await referenceOf(m, payoutId);
    for (const state of ["HELD", "ONHOLD", "PENDING"]) {
      server.setItemState(reference, state);
      await m.advance(3_600);
      assert.deepEqual(
        await statusOf(m, payoutId),
        { status: "funds_sent", failure_reason: null },
        state,
      );
    }
  });
});

for (const disruption of ["take_then_5xx", "take_then_hang"] as const) {
  Deno.test(`PayPal took the batch but answered ${disruption === "take_then_5xx" ? "500" : "nothing (timeout)"}: the batch is sent again under the same sender_batch_id, PayPal refuses the duplicate, and the payee is paid once`, async () => {
    await withPaypal(async ({ m, server }) => {
      await m.fund(1_000_000);
      server.disruptNext("POST", /^\/v1\/payments\/payouts$/, disruption);
      const { logs } = await capturingLogs(async () => {
        const payoutId = await choosePaypal(m, "paypal", 9_900);
        const [batch] = await rows(m, "SELECT id, status FROM rail_batches");
        assert.equal(batch.status, "transmitting");
        assert.deepEqual(await statusOf(m, payoutId), {
          status: "modality_selected",
          failure_reason: null,
        });
        assert.equal(server.batches.size, 1, "PayPal has the batch");
        // The scheduler retries the transmission 5 s later.
        await m.advance(5);
        const [after] = await rows(m, "SELECT id, status, rail_reference FROM rail_batches");
        assert.equal(after.status, "transmitted");
        assert.equal(after.rail_reference, [...server.batches.keys()][0]);
        assert.equal(server.batches.size, 1);
        assert.equal(server.paymentsOf(await referenceOf(m, payoutId)), 1);
        assert.equal(server.requests.filter((r) => r === "POST /v1/payments/payouts").length, 2);
        assert.deepEqual(await statusOf(m, payoutId), {
          status: "funds_sent",
          failure_reason: null,
        });
        server.setItemState(await referenceOf(m, payoutId), "SUCCESS");
        await m.advance(MINUTE_S);
        assert.deepEqual(await statusOf(m, payoutId), {
          status: "completed",
          failure_reason: null,
        });
      });
      assert.ok(logs.some((log) => log.kind === "paypal.transmit" && log.outcome === "retried"));
    });
  });
}

Deno.test("a 5xx before PayPal took anything is retried until PayPal answers; one batch", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    server.disruptNext("POST", /^\/v1\/payments\/payouts$/, "5xx");
    server.disruptNext("POST", /^\/v1\/payments\/payouts$/, "hang");
    await capturingLogs(async () => {
      const payoutId = await choosePaypal(m, "venmo", 1_000);
      assert.equal(server.batches.size, 0);
      await m.advance(5);
      assert.equal(server.batches.size, 0);
      await m.advance(30);
      assert.equal(server.batches.size, 1);
      assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    });
  });
});

Deno.test("a batch whose transmission started over 30 days ago is never sent again: it goes in doubt for an operator", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    server.disruptNext("POST", /^\/v1\/payments\/payouts$/, "take_then_5xx");
    const { logs } = await capturingLogs(async () => {
      await choosePaypal(m, "paypal", 2_000);
      await m.database.writer.write((tx) =>
        tx.execute({
          sql: "UPDATE rail_batches SET created_at = created_at - ?",
          args: [31 * 86_400_000],
        })
      );
      await m.advance(5);
    });
    assert.deepEqual(await rows(m, "SELECT status FROM rail_batches"), [{ status: "in_doubt" }]);
    assert.equal(server.requests.filter((r) => r === "POST /v1/payments/payouts").length, 1);
    assert.ok(logs.some((log) => String(log.msg).includes("in doubt")));
  });
});

Deno.test("INSUFFICIENT_FUNDS (the insurer's PayPal balance) alerts an operator and sends the item again; the payee's payout never fails", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await choosePaypal(m, "paypal", 25_000);
    const reference = await referenceOf(m, payoutId);
    server.setItemState(reference, "FAILED", "INSUFFICIENT_FUNDS");
    const { logs } = await capturingLogs(() => m.advance(MINUTE_S));
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    const alerts = logs.filter((log) => log.alert === "paypal_insufficient_funds");
    assert.equal(alerts.length, 1);
    assert.equal(alerts[0].payout_id, payoutId);
    assert.equal(alerts[0].level, "error");
    // An hour later the item goes again, alone, in a new batch; the old one is not sent again.
    await m.advance(3_600);
    assert.equal(server.batches.size, 2);
    assert.equal(server.paymentsOf(reference), 2);
    const batches = await rows(
      m,
      "SELECT status, entry_count FROM rail_batches ORDER BY created_at",
    );
    assert.deepEqual(batches, [{ status: "transmitted", entry_count: 1 }, {
      status: "transmitted",
      entry_count: 1,
    }]);
    server.setItemState(reference, "SUCCESS");
    await m.advance(MINUTE_S);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    const balances = await m.balances();
    assert.deepEqual([balances.available, balances.reserved, balances.in_transit], [
      1_000_000 - 25_000,
      0,
      0,
    ]);
  });
});

Deno.test("REFUNDED after SUCCESS is a late return: the payout stays completed and the money is back in available, posted as payout.late_return, once", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await choosePaypal(m, "venmo", 3_000);
    const reference = await referenceOf(m, payoutId);
    server.setItemState(reference, "SUCCESS");
    await m.advance(MINUTE_S);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    server.setItemState(reference, "REFUNDED");
    for (const id of ["WH-REFUND-1", "WH-REFUND-1", "WH-REFUND-2"]) {
      await m.database.writer.write((tx) =>
        recordVerifiedNotice(tx, {
          id,
          companyId: m.companyId,
          eventType: "PAYMENT.PAYOUTS-ITEM.REFUNDED",
          resourceId: server.itemOf(reference).payout_item_id,
        }, m.now())
      );
    }
    await m.settle();
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.deepEqual(
      await rows(
        m,
        "SELECT kind FROM ledger_transactions WHERE payout_id = ? AND kind = 'payout.late_return'",
        payoutId,
      ),
      [{ kind: "payout.late_return" }],
    );
    assert.deepEqual(
      await rows(m, "SELECT id, processed_at IS NOT NULL AS done FROM paypal_notices ORDER BY id"),
      [
        { id: "WH-REFUND-1", done: 1 },
        { id: "WH-REFUND-2", done: 1 },
      ],
    );
    const balances = await m.balances();
    assert.equal(balances.available, 1_000_000);
  });
});

Deno.test("the process stops after PayPal took the batch, before the answer was recorded: once the claim lapses the batch is sent again, PayPal's duplicate answer records it, and the payee is paid once", async () => {
  await withPaypal(async ({ m, server, clock }) => {
    await m.fund(1_000_000);
    const created = await m.create({ amountCents: 6_000, allowedPaymentMethodIds: [7] });
    if (!created.ok) throw new Error(created.message);
    await m.settle();
    const payoutId = created.value.payouts[0].id;
    const selected = await m.database.writer.write((tx) =>
      selectMethod(tx, payoutId, {
        paymentMethodId: 7,
        details: {},
        kept: { email: "c@payee.test" },
      }, m.now())
    );
    assert.ok(selected.ok);
    const writer = m.database.writer;
    const write = writer.write.bind(writer);
    let stopped = false;
    writer.write = <T>(unit: Parameters<typeof write<T>>[0]): Promise<T> =>
      stopped ? Promise.reject(new Error("the process stopped")) : write(unit);
    server.afterTake = () => stopped = true;
    await capturingLogs(() => assert.rejects(m.settle(), /the process stopped/));
    // Restarted: the claim of the interrupted run keeps others away for its lease.
    writer.write = write;
    server.afterTake = null;
    assert.deepEqual(await rows(m, "SELECT status FROM rail_batches"), [{
      status: "transmitting",
    }]);
    await m.settle();
    assert.equal(server.requests.filter((r) => r === "POST /v1/payments/payouts").length, 1);
    clock.set(clock.now() + 6 * 60_000);
    await m.settle();
    assert.deepEqual(await rows(m, "SELECT status FROM rail_batches"), [{ status: "transmitted" }]);
    assert.equal(server.requests.filter((r) => r === "POST /v1/payments/payouts").length, 2);
    assert.equal(server.batches.size, 1);
    assert.equal(server.paymentsOf(await referenceOf(m, payoutId)), 1);
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
  });
});

Deno.test("an item webhook of an item PayPal reports FAILED with no error of its own reads the item's batch: a denied batch fails the payout paypal_batch_denied (return code DENIED), offered again", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await choosePaypal(m, "paypal", 1_500);
    const item = server.setItemState(await referenceOf(m, payoutId), "FAILED");
    server.batchStatuses.set(item.payout_batch_id, "DENIED");
    await m.database.writer.write((tx) =>
      recordVerifiedNotice(tx, {
        id: "WH-ITEM-FAILED-1",
        companyId: m.companyId,
        eventType: "PAYMENT.PAYOUTS-ITEM.FAILED",
        resourceId: item.payout_item_id,
      }, m.now())
    );
    await m.settle();
    assert.deepEqual(await statusOf(m, payoutId), {
      status: "modality_offered",
      failure_reason: "paypal_batch_denied",
    });
    assert.deepEqual(await rows(m, "SELECT status, return_code FROM rail_batch_entries"), [
      { status: "failed", return_code: "DENIED" },
    ]);
    assert.deepEqual(server.requests.filter((r) => r.startsWith("GET ")), [
      `GET /v1/payments/payouts-item/${item.payout_item_id}`,
      `GET /v1/payments/payouts/${item.payout_batch_id}`,
    ]);
  });
});

Deno.test("a batch notice (PAYMENT.PAYOUTSBATCH.*) reads every item of the batch from PayPal and acts on each", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const first = await choosePaypal(m, "paypal", 1_100, "a");
    const second = await choosePaypal(m, "paypal", 2_200, "b");
    assert.equal(server.batches.size, 2, "chosen at 15:00 and at 15:00 again: each ran its cutoff");
    server.setItemState(await referenceOf(m, first), "SUCCESS");
    server.setItemState(await referenceOf(m, second), "FAILED", "RECEIVER_UNCONFIRMED");
    for (const payoutBatchId of server.batches.keys()) {
      await m.database.writer.write((tx) =>
        recordVerifiedNotice(tx, {
          id: `WH-${payoutBatchId}`,
          companyId: m.companyId,
          eventType: "PAYMENT.PAYOUTSBATCH.SUCCESS",
          resourceId: payoutBatchId,
        }, m.now())
      );
    }
    await m.settle();
    assert.deepEqual(await statusOf(m, first), { status: "completed", failure_reason: null });
    assert.deepEqual(await statusOf(m, second), {
      status: "modality_offered",
      failure_reason: "RECEIVER_UNCONFIRMED",
    });
    assert.equal(
      server.requests.filter((r) => r.startsWith("GET /v1/payments/payouts/")).length,
      2,
    );
  });
});
