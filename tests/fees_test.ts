import assert from "node:assert/strict";
import { billedAmountCents, feesFor, holdFor } from "../lib/payouts/fees.ts";
import { sandboxScenario, testPayeeMarker, testPayeeWallet } from "../lib/rails/mod.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { runDueJobs } from "../db/scheduler.ts";
import { openMoneyFixture } from "./money_core_helpers.ts";
import { testSecretBox } from "./helpers.ts";

const schedule = new Map([
  [1, { payorFeeCents: 150, payeeFeeCents: 25, serviceFeeCents: 50 }],
  [7, { payorFeeCents: 300, payeeFeeCents: 0, serviceFeeCents: 0 }],
]);

Deno.test("fees: BilledAmount, per-method lookup and the create hold", () => {
  assert.deepEqual(feesFor(schedule, 2), {
    payorFeeCents: 0,
    payeeFeeCents: 0,
    serviceFeeCents: 0,
  });
  assert.equal(billedAmountCents(10_000, feesFor(schedule, 1)), 10_200);
  assert.equal(
    holdFor(10_000, [1, 2, 7], schedule),
    10_300,
    "the highest payor + service fee among the allowed",
  );
  assert.equal(holdFor(10_000, [1, 2], schedule), 10_200);
  assert.equal(holdFor(10_000, [2], schedule), 10_000);
});

Deno.test("test payee markers and sandbox scenarios", () => {
  assert.deepEqual(testPayeeMarker("success+ach@example.test"), {
    kind: "success",
    modality: "ach",
  });
  assert.deepEqual(testPayeeMarker("FAIL+instant@example.test"), {
    kind: "fail",
    modality: "instant_deposit",
  });
  assert.deepEqual(testPayeeMarker("noaction"), { kind: "noaction" });
  assert.equal(testPayeeMarker("success+cash@example.test"), null);
  assert.equal(testPayeeMarker("pat@example.test"), null);
  assert.equal(sandboxScenario("ach", { accountNumber: "000111111116" }, null), "returns_r03");
  assert.equal(sandboxScenario("ach", { accountNumber: "000222222227" }, null), "transient_once");
  assert.equal(sandboxScenario("vcc", { cardNumber: "4000000000000002" }, null), "declined");
  assert.equal(sandboxScenario("check", { zip: "00000" }, null), "undeliverable");
  // PayPal and Venmo have no scenario: the sandbox's PayPal decides by the receiver the payee enters.
  assert.equal(sandboxScenario("venmo", {}, { kind: "fail", modality: "venmo" }), "settles");
  assert.deepEqual(
    [
      testPayeeWallet({ kind: "fail", modality: "venmo" }, "fail+venmo@example.test"),
      testPayeeWallet({ kind: "success", modality: "venmo" }, null),
      testPayeeWallet({ kind: "fail", modality: "paypal" }, "fail+paypal@example.test"),
      testPayeeWallet({ kind: "fail", modality: "paypal" }, "pat@example.test"),
      testPayeeWallet({ kind: "success", modality: "paypal" }, null),
      testPayeeWallet({ kind: "success", modality: "ach" }, null),
    ],
    [
      { phone: "+15555550404" },
      { phone: "+15555550100" },
      undefined,
      { email: "fail+paypal@example.com" },
      { email: "success+paypal@example.com" },
      undefined,
    ],
  );
  assert.equal(sandboxScenario("ach", { accountNumber: "000123456789" }, null), "settles");
});

Deno.test("an unconfigured live rail refuses loudly: the payout fails and is offered again, nothing is paid", async () => {
  const m = await openMoneyFixture();
  const originalError = console.error;
  const logged: string[] = [];
  console.error = (line: string) => logged.push(line);
  try {
    await m.fund(50_000);
    const created = await m.create({ amountCents: 20_000 });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle();
    const settings = { offerTtlDays: 1, baseUrl: "http://127.0.0.1:8000" };
    // A sanctions list in force (empty), so the payout is screened and reaches its rail.
    await m.database.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO sanctions_lists (id, sha256, entry_count, file_name, loaded_at)
              VALUES ('sdn_empty', 'none', 0, 'sdn.csv', ?)`,
        args: [m.now()],
      })
    );
    const result = await m.database.writer.write((tx) =>
      selectMethod(tx, id, { paymentMethodId: 1, details: {} }, m.now())
    );
    assert.ok(result.ok);
    // The live rail is called by the payout's submit job.
    await runDueJobs(
      m.database,
      m.companyId,
      m.now(),
      jobHandlersOf("live", settings, m.database, testSecretBox),
    );
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.failure_reason], [
      "modality_offered",
      "rail_not_configured",
    ]);
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit, b.bank], [30_000, 20_000, 0, -50_000]);
    assert.equal(logged.length, 1);
    assert.match(
      JSON.parse(logged[0]).msg,
      /^no ach rail is configured for company co_money in live; payout po_\w+ was not sent$/,
    );
  } finally {
    console.error = originalError;
    await m.close();
  }
});
