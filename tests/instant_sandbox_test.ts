/**
 * The sandbox pays instant deposit through the Increase adapter bound to the Increase simulator: a
 * test company without Increase settings gets the capability check, the $0 validation, one push
 * under the reference as Idempotency-Key, the simulator's signed event 5 s later on the sandbox
 * clock and the check that reads the push, as live does with Increase. The sandbox's magic cards
 * and routing number decide the outcomes; the simulator keeps its state in the test database.
 */
import assert from "node:assert/strict";
import { lineTieOut } from "../lib/ledger/reports.ts";
import { IncreaseClient } from "../lib/instant/client.ts";
import {
  checkTypedCard,
  increaseSimulator,
  SIMULATOR_SETTINGS,
  tokenizeSandboxCard,
} from "../lib/instant/simulator.ts";
import { instantBankReachable } from "../lib/instant/service.ts";
import { composeRails } from "../lib/payouts/runtime.ts";
import { loadPayout } from "../lib/payouts/store.ts";
import { submissionReference } from "../lib/rails/seam.ts";
import { sandboxTestDetails } from "../lib/rails/sandbox.ts";
import { testSecretBox } from "./helpers.ts";
import { chooseInstantBank, INSTANT_METHOD } from "./instant_helpers.ts";
import {
  MONEY_SETTINGS,
  type MoneyFixture,
  moneyProviderDeps,
  openMoneyFixture,
  sandboxCardFor,
} from "./money_core_helpers.ts";

const FUNDED = 1_000_000;
const AMOUNT = 12_500;

async function withSandbox(fn: (m: MoneyFixture) => Promise<void>): Promise<void> {
  const m = await openMoneyFixture();
  try {
    await m.fund(FUNDED);
    await fn(m);
  } finally {
    await m.close();
  }
}

async function offeredInstant(m: MoneyFixture, email = "noaction@example.test"): Promise<string> {
  const created = await m.create({
    email,
    amountCents: AMOUNT,
    allowedPaymentMethodIds: [INSTANT_METHOD, 1],
  });
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  return created.value.payouts[0].id;
}

async function rows(m: MoneyFixture, sql: string): Promise<Record<string, unknown>[]> {
  return (await m.database.readClient.execute(sql)).rows.map((row) => ({ ...row }));
}

async function statusOf(m: MoneyFixture, payoutId: string) {
  const payout = await m.payout(payoutId);
  return { status: payout.status, failure_reason: payout.failure_reason };
}

Deno.test("sandbox without Increase settings: a test card is pushed through the adapter against the simulator; its signed event 5 s later completes the payout; ledger and tie-out", async () => {
  await withSandbox(async (m) => {
    const payoutId = await offeredInstant(m);
    assert.ok((await m.select(payoutId, INSTANT_METHOD, {})).ok);
    await m.settle();
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    const [transfer] = await rows(
      m,
      "SELECT reference, route, status, card_token_id, validation_id, transfer_id FROM instant_transfers",
    );
    assert.equal(transfer.reference, submissionReference(payoutId, 1));
    assert.equal(transfer.route, "visa");
    assert.equal(transfer.status, "pending_submission");
    assert.match(String(transfer.card_token_id), /^outbound_card_token_sbx_/);
    assert.match(String(transfer.validation_id), /^outbound_card_validation_sbx_/);
    assert.match(String(transfer.transfer_id), /^outbound_card_push_transfer_sbx_/);
    const payout = await m.payout(payoutId);
    assert.equal(payout.rail_reference, transfer.transfer_id);
    assert.deepEqual(JSON.parse(String(payout.method_details)).network, "visa");
    assert.deepEqual(
      [(await m.balances()).in_transit, (await m.balances()).reserved],
      [AMOUNT, 0],
    );

    await m.advance(4);
    assert.equal((await m.payout(payoutId)).status, "funds_sent", "not before 5 s");
    await m.advance(1);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.deepEqual(
      await rows(m, "SELECT category, object_id FROM increase_notices"),
      [{ category: "card_push_transfer.updated", object_id: transfer.transfer_id }],
    );
    assert.deepEqual(await rows(m, "SELECT status, checks FROM instant_transfers"), [
      { status: "complete", checks: 1 },
    ]);
    assert.deepEqual(await m.events(payoutId), [
      "created",
      "offered",
      "selected",
      "processing",
      "completed",
    ]);
    const b = await m.balances();
    assert.deepEqual(
      [b.available, b.reserved, b.in_transit, b.bank],
      [FUNDED - AMOUNT, 0, 0, -(FUNDED - AMOUNT)],
    );
    assert.equal((await lineTieOut(m.database.readClient, m.lineId, "2026-01-05"))?.difference, 0);
  });
});

for (
  const [card, reason] of [
    [sandboxTestDetails.cardNotPushable, "card_not_eligible"],
    [sandboxTestDetails.cardDeclined, "card_declined"],
  ] as const
) {
  Deno.test(`sandbox: card ${card} fails ${reason} before any push and is offered again; its hold is back`, async () => {
    await withSandbox(async (m) => {
      const payoutId = await offeredInstant(m);
      assert.ok((await m.select(payoutId, INSTANT_METHOD, { cardNumber: card })).ok);
      await m.settle();
      assert.deepEqual(await statusOf(m, payoutId), {
        status: "modality_offered",
        failure_reason: reason,
      });
      assert.deepEqual(await m.events(payoutId), [
        "created",
        "offered",
        "selected",
        "failed",
        "offered",
      ]);
      assert.deepEqual(
        await rows(
          m,
          "SELECT count(*) AS n FROM increase_simulator_objects WHERE type = 'card_push_transfer'",
        ),
        [{ n: 0 }],
      );
      assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM instant_transfers"), [{ n: 0 }]);
      const b = await m.balances();
      assert.deepEqual([b.available, b.reserved, b.in_transit], [FUNDED - AMOUNT, AMOUNT, 0]);
    });
  });
}

Deno.test("sandbox: a success+instant payee is paid to the simulator's test card by itself; fail+instant's card is declined and offered again", async () => {
  await withSandbox(async (m) => {
    const paid = await offeredInstant(m, "success+instant@example.test");
    const declined = await offeredInstant(m, "fail+instant@example.test");
    await m.settle();
    assert.deepEqual(await statusOf(m, declined), {
      status: "modality_offered",
      failure_reason: "card_declined",
    });
    await m.advance(5);
    assert.deepEqual(await statusOf(m, paid), { status: "completed", failure_reason: null });
    const details = JSON.parse(String((await m.payout(paid)).method_details));
    assert.deepEqual([details.last_four, details.network], ["5556", "visa"]);
  });
});

Deno.test("sandbox: a submission repeated after a crash (the simulator answered, nothing was recorded) gets the same push; one push, one validation", async () => {
  await withSandbox(async (m) => {
    const payoutId = await offeredInstant(m);
    assert.ok((await m.select(payoutId, INSTANT_METHOD, {})).ok);
    // The submit job's call reached the simulator, then the process died before recording it.
    const { directory } = composeRails("test", MONEY_SETTINGS, m.database, testSecretBox);
    const payout = (await loadPayout(m.database.readClient, payoutId))!;
    const rail = directory.forModality("instant_deposit");
    assert.ok(rail.shape === "per_payout");
    const first = await rail.submit({
      reference: submissionReference(payoutId, 1),
      companyId: m.companyId,
      payoutId,
      modality: "instant_deposit",
      amountCents: AMOUNT,
      attempt: 0,
      submittedAt: m.now(),
      details: Object.fromEntries(
        Object.entries(payout.methodDetails).filter(([, v]) => typeof v === "string"),
      ) as Record<string, string>,
    });
    assert.ok(first.kind === "accepted");
    await m.settle();
    assert.equal((await m.payout(payoutId)).status, "funds_sent");
    const [transfer] = await rows(m, "SELECT transfer_id FROM instant_transfers");
    assert.equal(transfer.transfer_id, first.railReference);
    assert.deepEqual(
      await rows(
        m,
        "SELECT type, count(*) AS n FROM increase_simulator_objects GROUP BY type ORDER BY type",
      ),
      [{ type: "card_push_transfer", n: 1 }, { type: "card_validation", n: 1 }],
    );
    await m.advance(5);
    assert.equal((await m.payout(payoutId)).status, "completed");
    assert.equal((await m.balances()).in_transit, 0);
  });
});

Deno.test("simulator: a card token typed at the hosted field reads as Increase's Card Token object (the test card it behaves as, with the expiry typed: the last day of its month); an unknown token is 404", async () => {
  await withSandbox(async (m) => {
    const typed = await tokenizeSandboxCard(
      m.database,
      { pan: "4000 0566 5566 5556", expiry: "07/31", cvv: "123" },
      m.now(),
    );
    assert.ok(typed.ok);
    const client = new IncreaseClient(
      SIMULATOR_SETTINGS,
      undefined,
      increaseSimulator(m.database, m.companyId, m.now()),
    );
    const read = await client.cardToken(typed.tokenId);
    assert.deepEqual(read, {
      kind: "ok",
      value: {
        id: typed.tokenId,
        created_at: new Date(m.now()).toISOString(),
        expiration_date: "2031-07-31",
        last4: "5556",
        length: 16,
        prefix: "40000566",
        type: "card_token",
      },
    });
    const missing = await client.cardToken("outbound_card_token_missing");
    assert.deepEqual(missing.kind === "refused" && [missing.status, missing.type], [
      404,
      "object_not_found_error",
    ]);
  });
});

Deno.test("simulator: the same Idempotency-Key and body answer the first object, another body is 409; a bad key is 401; another company cannot read the object", async () => {
  await withSandbox(async (m) => {
    const card = await sandboxCardFor(m.database);
    const client = (companyId: string) =>
      new IncreaseClient(
        SIMULATOR_SETTINGS,
        undefined,
        increaseSimulator(m.database, companyId, m.now()),
      );
    const push = (amount: string) =>
      client(m.companyId).createPush(
        { cardTokenId: card.card_token_id, amount, recipientName: "Pat Doe" },
        "po_x-1",
      );
    const first = await push("12.50");
    const again = await push("12.50");
    assert.ok(first.kind === "ok" && again.kind === "ok");
    assert.equal(again.value.id, first.value.id);
    await assert.rejects(push("13.00"), /Increase answered 409/);
    assert.deepEqual((await client("co_other").push(first.value.id)).kind, "refused");
    const forged = new IncreaseClient(
      { ...SIMULATOR_SETTINGS, apiKey: "another_key" },
      undefined,
      increaseSimulator(m.database, m.companyId, m.now()),
    );
    const refused = await forged.capabilities(card.card_token_id);
    assert.deepEqual(
      refused.kind === "refused" ? [refused.status, refused.type] : null,
      [401, "insufficient_permissions_error"],
    );
  });
});

Deno.test("sandbox: routing number 091000019 is not reachable by the simulator's routing lookup; an instant bank payment to another bank goes over RTP and completes 5 s later", async () => {
  await withSandbox(async (m) => {
    const deps = moneyProviderDeps(m.database);
    assert.equal(
      await instantBankReachable(
        deps,
        m.companyId,
        sandboxTestDetails.rtpUnreachableRouting,
        m.now(),
      ),
      false,
    );
    assert.equal(await instantBankReachable(deps, m.companyId, "021000021", m.now()), true);
    const paid = await chooseInstantBank(m, AMOUNT, "021000021");
    assert.equal((await m.payout(paid)).status, "funds_sent");
    const refused = await chooseInstantBank(m, AMOUNT, sandboxTestDetails.rtpUnreachableRouting);
    assert.deepEqual(await statusOf(m, refused), {
      status: "modality_offered",
      failure_reason: "bank_not_reachable",
    });
    await m.advance(5);
    assert.deepEqual(await statusOf(m, paid), { status: "completed", failure_reason: null });
    assert.deepEqual(await rows(m, "SELECT route, status FROM instant_transfers"), [
      { route: "rtp", status: "complete" },
    ]);
    assert.deepEqual(await rows(m, "SELECT category FROM increase_notices"), [
      { category: "real_time_payments_transfer.updated" },
    ]);
  });
});

Deno.test("simulator's hosted card field: a card that is not a sandbox test card is paid as 4000056655665556, and its number is not kept; a number failing Luhn is refused", async () => {
  await withSandbox(async (m) => {
    const card = (pan: string) => ({ pan, expiry: "12/30", cvv: "123" });
    const typed = await tokenizeSandboxCard(m.database, card("4111 1111 1111 1111"), m.now());
    assert.ok(typed.ok);
    assert.equal(typed.lastFour, "1111");
    assert.deepEqual(await rows(m, "SELECT card_number FROM increase_simulator_cards"), [
      { card_number: sandboxTestDetails.cardSucceeds },
    ]);
    const refused = await tokenizeSandboxCard(m.database, card("4111 1111 1111 1112"), m.now());
    assert.deepEqual(refused.ok ? null : refused.code, "card_number_invalid");
  });
});

Deno.test("simulator's hosted card field checks the card as Increase's vault takes it: the number's check digit, an expiry MM/YY (or MM/YYYY) good through the last day of its month, a CVV of 3 or 4 digits; each refusal names its field", () => {
  const now = Date.UTC(2026, 0, 31, 23, 0); // the last day of January 2026
  const pan = "4000 0566 5566 5556";
  const table: [string, string, string, string | null][] = [
    [pan, "01/26", "123", "2026-01-31"], // this month: at the limit
    [pan, "1/2026", "1234", "2026-01-31"],
    [pan, "12 / 30", " 123 ", "2030-12-31"],
    [pan, "02/28", "123", "2028-02-29"],
    [pan, "12/25", "123", "card_expired exp"], // one month past
    [pan, "13/30", "123", "card_expiry_invalid exp"],
    [pan, "00/30", "123", "card_expiry_invalid exp"],
    [pan, "1230", "123", "card_expiry_invalid exp"],
    [pan, "", "123", "card_expiry_invalid exp"],
    [pan, "12/30", "12", "card_cvv_invalid cvv"],
    [pan, "12/30", "12345", "card_cvv_invalid cvv"],
    [pan, "12/30", "", "card_cvv_invalid cvv"],
    ["4000 0566 5566 5557", "12/30", "123", "card_number_invalid pan"],
  ];
  for (const [typedPan, expiry, cvv, expected] of table) {
    const checked = checkTypedCard({ pan: typedPan, expiry, cvv }, now);
    assert.equal(
      checked.ok ? checked.expirationDate : `${checked.code} ${checked.field}`,
      expected,
      `${expiry} ${cvv}`,
    );
  }
});
