/**
 * The sandbox's PayPal (lib/paypal/simulator.ts): a test company without PayPal settings is paid
 * through the PayPal rail as live is (a batch at the five-minute cutoff, items read by polling and
 * on PayPal's webhooks, which it sends in process through live's receiver and signature check),
 * against the simulator answering in process, which decides each item by its receiver and keeps
 * what it took in the test database.
 */
import assert from "node:assert/strict";
import {
  MONEY_SETTINGS,
  moneyBatchDeps,
  moneyProviderDeps,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";
import type { MoneyFixture } from "./money_core_helpers.ts";
import { fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";
import { v1 } from "./portal_helpers.ts";
import { capturingLogs, rows, statusOf } from "./paypal_helpers.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { resolveBatch } from "../lib/rails/batches_service.ts";
import { BATCH_TRANSMIT_LEASE_MS } from "../lib/rails/batch.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import { cancelUnclaimedItem, receiveWebhook } from "../lib/paypal/service.ts";
import { PAYPAL_JOBS } from "../lib/paypal/store.ts";
import { type PayoutItemRequest, PaypalClient } from "../lib/paypal/client.ts";
import { PaypalSimulator } from "../lib/paypal/simulator.ts";
import { sandboxTestDetails } from "../lib/rails/sandbox.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { listUnclaimed } from "../lib/obligations/unclaimed.ts";

const DAY_S = 86_400;

async function withSandbox(
  fn: (m: MoneyFixture, clock: FakeClock) => Promise<void>,
): Promise<void> {
  const clock = new FakeClock(START);
  const m = await openMoneyFixture({ clock });
  try {
    await m.fund(1_000_000);
    await fn(m, clock);
  } finally {
    await m.close();
  }
}

/** A payout of a test payee by e-mail (`/api`), which acts by itself when its marker says so. */
async function payoutOf(m: MoneyFixture, email: string, amountCents: number): Promise<string> {
  const created = await m.create({ email, amountCents, allowedPaymentMethodIds: [6, 7] });
  if (!created.ok) throw new Error(created.message);
  return created.value.payouts[0].id;
}

/** The events of a payout paid at its first choice. */
const PAID_EVENTS = ["created", "offered", "selected", "processing", "completed"];

/** A payout PayPal failed, with `reason`: failed, then offered again under today's rules. */
async function failedAndOfferedAgain(
  m: MoneyFixture,
  payoutId: string,
  reason: string,
): Promise<void> {
  assert.deepEqual(await statusOf(m, payoutId), {
    status: "modality_offered",
    failure_reason: reason,
  });
  assert.deepEqual(await m.events(payoutId), [
    "created",
    "offered",
    "selected",
    "processing",
    "failed",
    "offered",
  ]);
}

/** Each payee chooses PayPal at an e-mail or Venmo at a phone, as the portal keeps it. */
async function chooseReceivers(
  m: MoneyFixture,
  choices: readonly [payoutId: string, kept: { email: string } | { phone: string }][],
): Promise<void> {
  for (const [payoutId, kept] of choices) {
    const selected = await m.database.writer.write((tx) =>
      selectMethod(tx, payoutId, {
        paymentMethodId: "email" in kept ? 7 : 6,
        details: {},
        kept,
      }, m.now())
    );
    assert.ok(selected.ok);
  }
}

/**
 * Two payouts whose payees chose receivers the sandbox's PayPal leaves unclaimed (a PayPal e-mail
 * and a Venmo phone), sent in one batch.
 */
async function unclaimedPayouts(m: MoneyFixture): Promise<[string, string]> {
  const paypal = await payoutOf(m, "noaction@example.test", 4_000);
  const venmo = await payoutOf(m, "noaction@example.test", 5_000);
  await m.settle();
  await chooseReceivers(m, [[paypal, { email: "unclaimed@example.test" }], [venmo, {
    phone: sandboxTestDetails.venmoUnclaimedPhone,
  }]]);
  await m.settle();
  return [paypal, venmo];
}

/** The simulator's items, in the order it took them. */
const simulated = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT payout_item_id, payout_batch_id, sender_item_id, recipient_wallet, receiver,
            amount_value, transaction_status, error_name
     FROM sandbox_paypal_items ORDER BY rowid`,
  );

/**
 * The batch of an interrupted transmission, started over 30 days ago (PayPal may have forgotten
 * its sender_batch_id), once the interrupted claim lapsed and its job ran again: in doubt.
 */
async function inDoubt(m: MoneyFixture, clock: FakeClock): Promise<Record<string, unknown>> {
  await m.database.writer.write((tx) =>
    tx.execute({
      sql: "UPDATE rail_batches SET created_at = created_at - ?",
      args: [31 * DAY_S * 1000],
    })
  );
  clock.set(START + BATCH_TRANSMIT_LEASE_MS + 1);
  await capturingLogs(() => m.advance(10 * 60));
  const [batch] = await rows(m, "SELECT id, status FROM rail_batches");
  assert.equal(batch.status, "in_doubt");
  return batch;
}

/** `rails:resolve --environment test --file <batchId> --as <as>`, as an operator runs it. */
const resolveInTest = (m: MoneyFixture, batchId: string, as: "transmitted" | "not_received") =>
  resolveBatch(
    moneyBatchDeps(m.database, "test"),
    { operator: null, origin: "cli" },
    batchId,
    as,
    m.now(),
  );

Deno.test("success+venmo without PayPal settings: queued, sent in the PayPal batch of the next cutoff to the sandbox's PayPal, completed at the batch's first poll a minute later", async () => {
  await withSandbox(async (m) => {
    // Off the five-minute mark: the payout waits for the cutoff at START + 5 min.
    await m.advance(60);
    const payoutId = await payoutOf(m, "success+venmo@example.test", 1_000);
    await m.settle();
    assert.deepEqual(await statusOf(m, payoutId), {
      status: "modality_selected",
      failure_reason: null,
    });
    assert.deepEqual(await rows(m, "SELECT status FROM rail_batch_entries"), [{
      status: "queued",
    }]);
    await m.advance(4 * 60);
    const [batch] = await rows(m, "SELECT id, status, rail_reference FROM rail_batches");
    assert.deepEqual([batch.status, batch.rail_reference], ["transmitted", batch.id]);
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    assert.deepEqual(await simulated(m), [{
      payout_item_id: `${batch.id}-1`,
      payout_batch_id: batch.id,
      sender_item_id: `${payoutId}-1`,
      recipient_wallet: "VENMO",
      receiver: sandboxTestDetails.venmoPhone,
      amount_value: "10.00",
      transaction_status: "SUCCESS",
      error_name: null,
    }]);
    await m.advance(59);
    assert.equal((await m.payout(payoutId)).status, "funds_sent");
    await m.advance(1);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.deepEqual(
      await rows(
        m,
        "SELECT to_status, at FROM payout_transitions WHERE payout_id = ? ORDER BY rowid",
        payoutId,
      ),
      [
        { to_status: "created", at: START + 60_000 },
        { to_status: "modality_offered", at: START + 60_000 },
        { to_status: "modality_selected", at: START + 60_000 },
        { to_status: "funds_sent", at: START + 5 * 60_000 },
        { to_status: "completed", at: START + 6 * 60_000 },
      ],
    );
    assert.deepEqual(await m.events(payoutId), PAID_EVENTS);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("fail+paypal and fail+venmo: the sandbox's PayPal fails the item RECEIVER_UNREGISTERED at the first poll; the payout fails and is offered again", async () => {
  await withSandbox(async (m) => {
    const paypal = await payoutOf(m, "fail+paypal@example.test", 2_000);
    const venmo = await payoutOf(m, "fail+venmo@example.test", 3_000);
    await m.settle();
    assert.deepEqual(
      (await simulated(m)).map((item) => [
        item.recipient_wallet,
        item.receiver,
        item.transaction_status,
        item.error_name,
      ]),
      [
        ["PAYPAL", "fail+paypal@example.test", "FAILED", "RECEIVER_UNREGISTERED"],
        ["VENMO", sandboxTestDetails.venmoUnregisteredPhone, "FAILED", "RECEIVER_UNREGISTERED"],
      ],
    );
    await m.advance(60);
    for (const payoutId of [paypal, venmo]) {
      await failedAndOfferedAgain(m, payoutId, "RECEIVER_UNREGISTERED");
    }
    assert.deepEqual(
      await rows(m, "SELECT status, return_code FROM rail_batch_entries ORDER BY rowid"),
      [
        { status: "failed", return_code: "RECEIVER_UNREGISTERED" },
        { status: "failed", return_code: "RECEIVER_UNREGISTERED" },
      ],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("unclaimed at the sandbox's PayPal: the payout stays funds_sent; paypal's cancel of the simulator's item fails it (unclaimed_canceled) and offers it again; another is returned 30 days on (unclaimed_returned)", async () => {
  await withSandbox(async (m) => {
    const [canceled, returned] = await unclaimedPayouts(m);
    await m.advance(DAY_S);
    assert.deepEqual(
      (await rows(m, "SELECT transaction_status FROM paypal_items ORDER BY rowid")).map((r) =>
        r.transaction_status
      ),
      ["UNCLAIMED", "UNCLAIMED"],
    );
    const cancel = await cancelUnclaimedItem(
      { ...moneyProviderDeps(m.database), runtime: payoutRuntime("test", MONEY_SETTINGS) },
      canceled,
      m.now(),
    );
    assert.ok(cancel.ok, cancel.ok ? "" : cancel.message);
    assert.deepEqual(await statusOf(m, canceled), {
      status: "modality_offered",
      failure_reason: "unclaimed_canceled",
    });
    assert.equal((await m.payout(returned)).status, "funds_sent");
    await m.advance(29 * DAY_S);
    assert.deepEqual(await statusOf(m, returned), {
      status: "modality_offered",
      failure_reason: "unclaimed_returned",
    });
    assert.deepEqual(
      (await simulated(m)).map((item) => item.transaction_status),
      ["RETURNED", "UNCLAIMED"],
      "the simulator keeps a cancel; the 30 days are read on the sandbox clock",
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("refunded at the sandbox's PayPal: the payout completes at the first poll, and 3 days after PayPal took it the item is refunded and told as PayPal's webhook would: a late return, the payout stays completed, owed as unclaimed property", async () => {
  await withSandbox(async (m) => {
    const byEmail = await payoutOf(m, "noaction@example.test", 4_000);
    const byPhone = await payoutOf(m, "noaction@example.test", 5_000);
    await m.settle();
    await chooseReceivers(m, [[byEmail, { email: "refunded@example.test" }], [byPhone, {
      phone: sandboxTestDetails.venmoRefundedPhone,
    }]]);
    // The 15:05 batch, its first poll at 15:06.
    await m.advance(7 * 60);
    for (const id of [byEmail, byPhone]) assert.equal((await m.payout(id)).status, "completed");
    const [taken] = await rows(m, "SELECT created_at FROM sandbox_paypal_batches");
    const before = (await m.balances()).available;
    await m.advance((Number(taken.created_at) + 3 * DAY_S * 1000 - m.now()) / 1000 - 60);
    assert.equal((await m.balances()).available, before, "not refunded a minute before");
    await m.advance(60);
    assert.deepEqual(
      (await simulated(m)).map((item) => item.transaction_status),
      ["SUCCESS", "SUCCESS"],
      "kept as taken; the refund is read on the sandbox clock",
    );
    assert.deepEqual(
      (await rows(m, "SELECT transaction_status FROM paypal_items ORDER BY rowid")).map((r) =>
        r.transaction_status
      ),
      ["REFUNDED", "REFUNDED"],
    );
    for (const id of [byEmail, byPhone]) assert.equal((await m.payout(id)).status, "completed");
    assert.equal((await m.balances()).available, before + 9_000);
    assert.deepEqual(
      await rows(
        m,
        `SELECT kind, payout_id FROM ledger_transactions WHERE kind = 'payout.late_return'
          ORDER BY rowid`,
      ),
      [{ kind: "payout.late_return", payout_id: byEmail }, {
        kind: "payout.late_return",
        payout_id: byPhone,
      }],
    );
    assert.deepEqual(
      (await listUnclaimed(m.database, m.companyId)).map((item) => [item.payoutId, item.kind])
        .sort(),
      [[byEmail, "late_return"], [byPhone, "late_return"]].sort(),
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("the sandbox's PayPal keeps what it took: a repeated sender_batch_id is answered with the first batch, after a restart too; each item's state comes from its receiver; unknown credentials are refused", async () => {
  await withSandbox(async (m) => {
    const item = (receiver: string, wallet: "PAYPAL" | "VENMO", n: number): PayoutItemRequest => ({
      recipient_type: wallet === "VENMO" ? "PHONE" : "EMAIL",
      recipient_wallet: wallet,
      receiver,
      amount: { currency: "USD", value: "1.00" },
      sender_item_id: `po_x-${n}`,
      note: "Claim payment",
    });
    const items = [
      item("payee@example.test", "PAYPAL", 1),
      item("fail+paypal@example.test", "PAYPAL", 2),
      item("FAIL+VENMO@example.test", "PAYPAL", 3),
      item("unclaimed@example.test", "PAYPAL", 4),
      item(sandboxTestDetails.venmoPhone, "VENMO", 5),
      item(sandboxTestDetails.venmoUnregisteredPhone, "VENMO", 6),
      item(sandboxTestDetails.venmoUnclaimedPhone, "VENMO", 7),
    ];
    const first = new PaypalSimulator(m.database);
    const client = new PaypalClient(first.connectionFor(m.companyId));
    assert.deepEqual(await client.createBatch("rbt_one", items), {
      kind: "created",
      payoutBatchId: "rbt_one",
    });
    assert.deepEqual(await client.createBatch("rbt_one", items.slice(0, 1)), {
      kind: "duplicate",
      payoutBatchId: "rbt_one",
    });
    const restarted = new PaypalClient(new PaypalSimulator(m.database).connectionFor(m.companyId));
    assert.deepEqual(await restarted.createBatch("rbt_one", items), {
      kind: "duplicate",
      payoutBatchId: "rbt_one",
    });
    const batch = await restarted.getBatch("rbt_one");
    assert.deepEqual(batch.batch_header.batch_status, "PROCESSING");
    assert.deepEqual(
      batch.items.map((i) => [i.payout_item_id, i.transaction_status, i.errors?.name ?? null]),
      [
        ["rbt_one-1", "SUCCESS", null],
        ["rbt_one-2", "FAILED", "RECEIVER_UNREGISTERED"],
        ["rbt_one-3", "FAILED", "RECEIVER_UNREGISTERED"],
        ["rbt_one-4", "UNCLAIMED", null],
        ["rbt_one-5", "SUCCESS", null],
        ["rbt_one-6", "FAILED", "RECEIVER_UNREGISTERED"],
        ["rbt_one-7", "UNCLAIMED", null],
      ],
    );
    assert.equal((await restarted.getItem("rbt_one-1")).transaction_status, "SUCCESS");
    // Only an UNCLAIMED item is cancelled, as PayPal does.
    const refused = await restarted.cancelItem("rbt_one-1");
    assert.deepEqual(refused.kind === "refused" ? [refused.status, refused.error.name] : null, [
      400,
      "ITEM_INCORRECT_STATUS",
    ]);
    const stranger = new PaypalClient(first.connectionFor("co_nobody"));
    await assert.rejects(
      stranger.getBatch("rbt_one"),
      /PayPal refused the client credentials of https:\/\/api-m\.paypal-simulator\.invalid: 401 invalid_client/,
    );
  });
});

Deno.test("operators act on the sandbox's PayPal batches as on PayPal's: one whose process stopped after the simulator took it, over 30 days ago, goes in doubt; rails:resolve --as transmitted in test records it, its poll completes the payout, paid once", async () => {
  await withSandbox(async (m, clock) => {
    const payoutId = await payoutOf(m, "success+paypal@example.test", 6_000);
    const writer = m.database.writer;
    const write = writer.write.bind(writer);
    let stopped = false;
    // The process stops right after the simulator kept the batch, before the answer is recorded.
    writer.write = async <T>(unit: Parameters<typeof write<T>>[0]): Promise<T> => {
      if (stopped) throw new Error("the process stopped");
      const result = await write(unit);
      stopped = (await simulated(m)).length > 0;
      return result;
    };
    await capturingLogs(() => assert.rejects(m.settle(), /the process stopped/));
    writer.write = write;
    const batch = await inDoubt(m, clock);
    const resolved = await resolveInTest(m, String(batch.id), "transmitted");
    assert.deepEqual(resolved, {
      ok: true,
      value: { batchId: batch.id, status: "transmitted", approvalId: null },
    });
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    await m.advance(60);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.deepEqual((await simulated(m)).map((item) => item.payout_batch_id), [batch.id]);
    assert.deepEqual(
      await rows(m, "SELECT action FROM audit_log WHERE object_id = ?", String(batch.id)),
      [{ action: "paypal:resolve" }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("rails:resolve --as not_received in test voids a sandbox PayPal batch the simulator never took and queues its item again: the next cutoff's batch takes it under a new reference, paid once", async () => {
  await withSandbox(async (m, clock) => {
    const payoutId = await payoutOf(m, "success+paypal@example.test", 7_000);
    const writer = m.database.writer;
    const write = writer.write.bind(writer);
    // The simulator's own unit fails (its side went down): the call is unanswered, nothing taken.
    writer.write = async <T>(unit: Parameters<typeof write<T>>[0]): Promise<T> => {
      if (String(unit).includes("INSERT INTO sandbox_paypal_batches")) {
        throw new Error("the sandbox's PayPal is down");
      }
      return await write(unit);
    };
    await capturingLogs(() => m.settle());
    writer.write = write;
    assert.deepEqual(await simulated(m), []);
    const batch = await inDoubt(m, clock);
    const resolved = await resolveInTest(m, String(batch.id), "not_received");
    assert.deepEqual(resolved, {
      ok: true,
      value: { batchId: batch.id, status: "voided", approvalId: null },
    });
    await m.advance(6 * 60);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    const batches = await rows(m, "SELECT id, status FROM rail_batches ORDER BY rowid");
    assert.deepEqual(batches.map((b) => b.status), ["voided", "transmitted"]);
    assert.deepEqual(
      (await simulated(m)).map((item) => [item.payout_batch_id, item.sender_item_id]),
      [[batches[1].id, `${payoutId}-2`]],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("/v1, the sandbox's PayPal on the sandbox clock: payees success+paypal and fail+venmo chosen at 15:01 go in the 15:05 PayPal batch and settle at its first poll at 15:06, as their disbursements' timelines show", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000_00);
    const advance = async (seconds: number) =>
      await (await v1(f, "POST", "/v1/sandbox/clock/advance", { seconds })).body?.cancel();
    // Off the five-minute mark (15:01): the payouts wait for the 15:05 cutoff.
    await advance(60);
    const ids: Record<string, string> = {};
    for (const [payee, modality] of [["success+paypal", "paypal"], ["fail+venmo", "venmo"]]) {
      assert.equal(
        (await v1(f, "POST", "/v1/payees", {
          id: payee,
          first_name: "Pat",
          last_name: "Doe",
          email: "pat@example.test",
        })).status,
        201,
      );
      const created = await v1(f, "POST", "/v1/disbursements", {
        amount: 75,
        claim_id: `CLM-${modality}`,
        payee: { id: payee },
        modalities: [modality],
      });
      assert.equal(created.status, 201);
      ids[payee] = (await created.json() as { id: string }).id;
    }
    const read = async (payee: string) =>
      await (await v1(f, "GET", `/v1/disbursements/${ids[payee]}`)).json() as {
        status: string;
        timeline: { status: string; at: string; detail?: string }[];
      };
    const statuses =
      async () => [(await read("success+paypal")).status, (await read("fail+venmo")).status];
    await advance(1);
    assert.deepEqual(await statuses(), ["modality_selected", "modality_selected"]);
    await advance(4 * 60 - 1);
    assert.deepEqual(await statuses(), ["funds_sent", "funds_sent"]);
    await advance(59);
    assert.deepEqual(await statuses(), ["funds_sent", "funds_sent"]);
    await advance(1);
    const at = (time: string) => `2026-01-05T${time}.000Z`;
    // The submission's reference (the payout's id and number) names the PayPal item.
    const shown = async (payee: string) =>
      (await read(payee)).timeline.map((step) =>
        step.status === "funds_sent" && /^po_[0-9A-Za-z]+-1$/.test(step.detail ?? "")
          ? { ...step, detail: "po_…-1" }
          : step
      );
    const chosen = (modality: string) => [
      { status: "created", at: at("15:01:00") },
      { status: "modality_offered", at: at("15:01:00") },
      { status: "modality_selected", at: at("15:01:00"), detail: modality },
      { status: "funds_sent", at: at("15:05:00"), detail: "po_…-1" },
    ];
    assert.deepEqual(await shown("success+paypal"), [
      ...chosen("paypal"),
      { status: "completed", at: at("15:06:00") },
    ]);
    assert.deepEqual(await shown("fail+venmo"), [
      ...chosen("venmo"),
      { status: "failed", at: at("15:06:00"), detail: "RECEIVER_UNREGISTERED" },
      {
        status: "modality_offered",
        at: at("15:06:00"),
        detail: "re-offered after RECEIVER_UNREGISTERED",
      },
    ]);
  });
});

/** The PayPal batches' polls will not run: what comes of the items comes by webhook only. */
async function stopPolls(m: MoneyFixture): Promise<void> {
  await m.database.writer.write((tx) =>
    tx.execute({
      sql: "UPDATE scheduled_jobs SET done_at = ? WHERE kind = ? AND done_at IS NULL",
      args: [m.now(), PAYPAL_JOBS.poll],
    })
  );
}

const notices = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT event_type, resource_id, processed_at IS NOT NULL AS processed
       FROM paypal_notices ORDER BY event_type, resource_id`,
  );

Deno.test("sandbox's PayPal webhooks: a minute after it takes the batch, SUCCEEDED and FAILED for its items and PAYOUTSBATCH.SUCCESS, verified and acted on with no poll: completed, and failed RECEIVER_UNREGISTERED and offered again, at 15:06 as the poll would", async () => {
  await withSandbox(async (m) => {
    await m.advance(60);
    const paid = await payoutOf(m, "success+venmo@example.test", 1_000);
    const failed = await payoutOf(m, "fail+paypal@example.test", 2_000);
    await m.settle();
    await m.advance(4 * 60);
    const [batch] = await rows(m, "SELECT id, status FROM rail_batches");
    assert.equal(batch.status, "transmitted");
    await stopPolls(m);
    await m.advance(59);
    assert.deepEqual(await notices(m), []);
    assert.deepEqual(await statusOf(m, paid), { status: "funds_sent", failure_reason: null });

    await m.advance(1);
    assert.deepEqual(await notices(m), [
      { event_type: "PAYMENT.PAYOUTS-ITEM.FAILED", resource_id: `${batch.id}-2`, processed: 1 },
      { event_type: "PAYMENT.PAYOUTS-ITEM.SUCCEEDED", resource_id: `${batch.id}-1`, processed: 1 },
      { event_type: "PAYMENT.PAYOUTSBATCH.SUCCESS", resource_id: batch.id, processed: 1 },
    ]);
    assert.deepEqual(await statusOf(m, paid), { status: "completed", failure_reason: null });
    assert.deepEqual(await statusOf(m, failed), {
      status: "modality_offered",
      failure_reason: "RECEIVER_UNREGISTERED",
    });
    assert.deepEqual(
      await rows(
        m,
        "SELECT at FROM payout_transitions WHERE payout_id IN (?, ?) AND from_status = 'funds_sent'",
        paid,
        failed,
      ),
      [{ at: START + 6 * 60_000 }, { at: START + 6 * 60_000 }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("sandbox's PayPal webhooks: UNCLAIMED keeps the payouts funds_sent; a cancel sends CANCELED; 30 days on RETURNED fails the other (unclaimed_returned) and offers it again, with no poll", async () => {
  await withSandbox(async (m) => {
    const [canceled, returned] = await unclaimedPayouts(m);
    const [batch] = await rows(m, "SELECT id, status FROM rail_batches");
    assert.equal(batch.status, "transmitted");
    await stopPolls(m);
    await m.advance(60);
    const unclaimed = [
      { event_type: "PAYMENT.PAYOUTS-ITEM.UNCLAIMED", resource_id: `${batch.id}-1`, processed: 1 },
      { event_type: "PAYMENT.PAYOUTS-ITEM.UNCLAIMED", resource_id: `${batch.id}-2`, processed: 1 },
      { event_type: "PAYMENT.PAYOUTSBATCH.PROCESSING", resource_id: batch.id, processed: 1 },
    ];
    assert.deepEqual(await notices(m), unclaimed);
    assert.deepEqual(
      (await rows(m, "SELECT transaction_status FROM paypal_items ORDER BY rowid")).map((r) =>
        r.transaction_status
      ),
      ["UNCLAIMED", "UNCLAIMED"],
    );
    assert.equal((await m.payout(canceled)).status, "funds_sent");

    const cancel = await cancelUnclaimedItem(
      { ...moneyProviderDeps(m.database), runtime: payoutRuntime("test", MONEY_SETTINGS) },
      canceled,
      m.now(),
    );
    assert.ok(cancel.ok, cancel.ok ? "" : cancel.message);
    await m.settle();
    assert.deepEqual(await notices(m), [
      { event_type: "PAYMENT.PAYOUTS-ITEM.CANCELED", resource_id: `${batch.id}-1`, processed: 1 },
      ...unclaimed,
    ]);
    assert.deepEqual(await statusOf(m, canceled), {
      status: "modality_offered",
      failure_reason: "unclaimed_canceled",
    });

    await m.advance(30 * DAY_S - 120);
    assert.equal((await m.payout(returned)).status, "funds_sent");
    await m.advance(120);
    assert.deepEqual(await statusOf(m, returned), {
      status: "modality_offered",
      failure_reason: "unclaimed_returned",
    });
    assert.deepEqual(
      (await notices(m)).filter((n) => !String(n.event_type).endsWith("UNCLAIMED")),
      [
        { event_type: "PAYMENT.PAYOUTS-ITEM.CANCELED", resource_id: `${batch.id}-1`, processed: 1 },
        { event_type: "PAYMENT.PAYOUTS-ITEM.RETURNED", resource_id: `${batch.id}-2`, processed: 1 },
        { event_type: "PAYMENT.PAYOUTSBATCH.PROCESSING", resource_id: batch.id, processed: 1 },
        { event_type: "PAYMENT.PAYOUTSBATCH.SUCCESS", resource_id: batch.id, processed: 1 },
      ],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("sandbox's PayPal verifies only what it signed: a webhook for a test company without settings whose transmission signature is not the simulator's is refused webhook_not_verified, nothing recorded", async () => {
  await withSandbox(async (m) => {
    const body = JSON.stringify({
      id: "WH-FORGED",
      event_type: "PAYMENT.PAYOUTS-ITEM.SUCCEEDED",
      resource: { payout_item_id: "rbt_x-1" },
    });
    const refused = await receiveWebhook(moneyProviderDeps(m.database), {
      companyId: m.companyId,
      headers: {
        authAlgo: "SHA256withRSA",
        certUrl: "https://api-m.paypal.com/v1/notifications/certs/CERT-x",
        transmissionId: "t-1",
        transmissionSig: "bm90IHRoZSBzaW11bGF0b3Incw==",
        transmissionTime: new Date(START).toISOString(),
      },
      body,
    }, START);
    assert.deepEqual(refused.ok ? "ok" : refused.code, "webhook_not_verified");
    assert.deepEqual(await notices(m), []);
  });
});

/** Payouts of `noaction` payees who then chose these PayPal e-mails, all in the next batch. */
async function payoutsTo(
  m: MoneyFixture,
  receivers: readonly (string | { phone: string })[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const index of receivers.keys()) {
    ids.push(await payoutOf(m, "noaction@example.test", 1_000 * (index + 1)));
  }
  await m.settle();
  await chooseReceivers(
    m,
    ids.map((id, index) => {
      const receiver = receivers[index];
      return [id, typeof receiver === "string" ? { email: receiver } : receiver];
    }),
  );
  return ids;
}

/** Each PayPal e-mail marker with the Venmo phone that acts as it does. */
const byEmailAndPhone = (marker: string, phone: string) =>
  [[`${marker}@`, `${marker}@example.test`], [`Venmo ${phone}`, { phone }]] as const;

/** The line's reserved and in-transit money. */
async function held(m: MoneyFixture): Promise<{ reserved: number; in_transit: number }> {
  const { reserved, in_transit } = await m.balances();
  return { reserved, in_transit };
}

const itemStatuses = async (m: MoneyFixture) =>
  (await rows(m, "SELECT transaction_status FROM paypal_items ORDER BY rowid")).map((r) =>
    r.transaction_status
  );

for (const [name, receiver] of byEmailAndPhone("held", sandboxTestDetails.venmoHeldPhone)) {
  Deno.test(`sandbox's PayPal, ${name}: the item is ONHOLD (webhooks PAYOUTS-ITEM.HELD and PAYOUTSBATCH.PROCESSING), the payout stays funds_sent with its money in transit; a day after the batch PayPal releases it (SUCCEEDED, PAYOUTSBATCH.SUCCESS) and the payout completes, with no poll`, async () => {
    await withSandbox(async (m) => {
      const [payoutId] = await payoutsTo(m, [receiver]);
      const before = await held(m);
      await m.settle();
      const [batch] = await rows(m, "SELECT id, status, created_at FROM rail_batches");
      assert.equal(batch.status, "transmitted");
      await stopPolls(m);
      await m.advance(60);
      assert.deepEqual(await notices(m), [
        { event_type: "PAYMENT.PAYOUTS-ITEM.HELD", resource_id: `${batch.id}-1`, processed: 1 },
        { event_type: "PAYMENT.PAYOUTSBATCH.PROCESSING", resource_id: batch.id, processed: 1 },
      ]);
      assert.deepEqual(await itemStatuses(m), ["ONHOLD"]);
      assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
      assert.deepEqual(await held(m), {
        reserved: before.reserved - 1_000,
        in_transit: before.in_transit + 1_000,
      });
      const [taken] = await rows(m, "SELECT created_at FROM sandbox_paypal_batches");
      await m.advance((Number(taken.created_at) + DAY_S * 1000 - m.now()) / 1000 - 60);
      assert.equal((await m.payout(payoutId)).status, "funds_sent", "held a minute before the day");
      await m.advance(60);
      assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
      assert.deepEqual(await itemStatuses(m), ["SUCCESS"]);
      assert.deepEqual(
        (await notices(m)).map((n) => n.event_type),
        [
          "PAYMENT.PAYOUTS-ITEM.HELD",
          "PAYMENT.PAYOUTS-ITEM.SUCCEEDED",
          "PAYMENT.PAYOUTSBATCH.PROCESSING",
          "PAYMENT.PAYOUTSBATCH.SUCCESS",
        ],
      );
      assert.deepEqual(await held(m), {
        reserved: before.reserved - 1_000,
        in_transit: before.in_transit,
      });
      assert.deepEqual(await m.events(payoutId), PAID_EVENTS);
      assert.deepEqual(await verifyLedger(m.database.readClient), []);
    });
  });
}

for (const [name, receiver] of byEmailAndPhone("blocked", sandboxTestDetails.venmoBlockedPhone)) {
  Deno.test(`sandbox's PayPal, ${name}: BLOCKED is final: the webhook PAYOUTS-ITEM.BLOCKED fails the payout (blocked, return code BLOCKED) a minute after the batch, its money back in reserved, and it is offered again`, async () => {
    await withSandbox(async (m) => {
      const [payoutId] = await payoutsTo(m, [receiver]);
      const before = await held(m);
      await m.settle();
      const [batch] = await rows(m, "SELECT id FROM rail_batches");
      await stopPolls(m);
      assert.equal((await m.payout(payoutId)).status, "funds_sent");
      await m.advance(60);
      assert.deepEqual(await notices(m), [
        { event_type: "PAYMENT.PAYOUTS-ITEM.BLOCKED", resource_id: `${batch.id}-1`, processed: 1 },
        { event_type: "PAYMENT.PAYOUTSBATCH.SUCCESS", resource_id: batch.id, processed: 1 },
      ]);
      await failedAndOfferedAgain(m, payoutId, "blocked");
      assert.deepEqual(await rows(m, "SELECT status, return_code FROM rail_batch_entries"), [
        { status: "failed", return_code: "BLOCKED" },
      ]);
      assert.deepEqual(await held(m), before);
      assert.deepEqual(await verifyLedger(m.database.readClient), []);
    });
  });
}

for (
  const [[name, receiver], by] of byEmailAndPhone("denied", sandboxTestDetails.venmoDeniedPhone)
    .flatMap((pair) => (["webhook", "poll"] as const).map((by) => [pair, by] as const))
) {
  Deno.test(
    `sandbox's PayPal, ${name}: PayPal denies the whole batch; by its ${by} (${
      by === "webhook" ? "PAYOUTSBATCH.DENIED only" : "GET batch: DENIED"
    }) every payout of the batch fails paypal_batch_denied (return code DENIED), its money back in reserved, and is offered again`,
    async () => {
      await withSandbox(async (m) => {
        const ids = await payoutsTo(m, [receiver, "payee@example.test"]);
        const before = await held(m);
        await m.settle();
        const [batch] = await rows(m, "SELECT id FROM rail_batches");
        if (by === "webhook") await stopPolls(m);
        assert.deepEqual(await held(m), {
          reserved: before.reserved - 3_000,
          in_transit: before.in_transit + 3_000,
        });
        const client = new PaypalClient(
          new PaypalSimulator(m.database).connectionFor(m.companyId),
        );
        const answer = await client.getBatch(String(batch.id));
        assert.deepEqual(
          [
            answer.batch_header.batch_status,
            ...answer.items.map((i) => [i.transaction_status, i.errors ?? null]),
          ],
          ["DENIED", ["FAILED", null], ["FAILED", null]],
        );
        await m.advance(60);
        assert.deepEqual(await notices(m), [
          { event_type: "PAYMENT.PAYOUTSBATCH.DENIED", resource_id: batch.id, processed: 1 },
        ]);
        for (const payoutId of ids) {
          await failedAndOfferedAgain(m, payoutId, "paypal_batch_denied");
        }
        assert.deepEqual(
          await rows(m, "SELECT status, return_code FROM rail_batch_entries ORDER BY rowid"),
          [{ status: "failed", return_code: "DENIED" }, {
            status: "failed",
            return_code: "DENIED",
          }],
        );
        assert.deepEqual(await itemStatuses(m), ["FAILED", "FAILED"]);
        assert.deepEqual(await held(m), before);
        assert.deepEqual(await verifyLedger(m.database.readClient), []);
      });
    },
  );
}
