import assert from "node:assert/strict";
import { addFunds, receiveWire, returnAchFunding } from "../lib/funding/store.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import {
  computeTieOut,
  tieOutCsv,
  tieOutFundingsJson,
  tieOutJson,
  utcDayBounds,
} from "../lib/ledger/tieout.ts";
import { DAY_SECONDS, openMoneyFixture, START } from "./money_core_helpers.ts";

Deno.test("tie-out of a day with funding, fees, payouts and a returned funding balances to 0", async () => {
  const m = await openMoneyFixture();
  try {
    await m.database.writer.write((tx) =>
      tx.execute({
        sql:
          `INSERT INTO fee_schedules (company_id, payment_method_id, payor_fee_cents, payee_fee_cents, service_fee_cents)
              VALUES (?, 7, 200, 100, 50)`,
        args: [m.companyId],
      })
    );
    await m.fund(1_000_000); // Monday: wire
    const returnedAch = await m.fund(300_000, "ACH");
    const paid = await m.create({
      email: "success+paypal@example.test",
      amountCents: 40_000,
      allowedPaymentMethodIds: [7],
    });
    assert.ok(paid.ok);
    await m.settle();
    // The PayPal batch goes at the cutoff (START is on one); its first poll a minute on completes it.
    await m.advance(60);
    assert.equal((await m.payout(paid.value.payouts[0].id)).status, "completed");
    assert.ok(
      (await m.database.writer.write((tx) => returnAchFunding(tx, returnedAch, m.now()))).ok,
    );

    // The ACH funding was returned before its debit went to the bank: it never counted as funded.
    const monday = (await lineTieOut(m.database.readClient, m.lineId, "2026-01-05"))!;
    const payoutId = paid.value.payouts[0].id;
    const { rows: [completion] } = await m.database.readClient.execute({
      sql: "SELECT id, posted_at FROM ledger_transactions WHERE payout_id = ? AND kind = ?",
      args: [payoutId, "payout.complete"],
    });
    const postedAt = Number(completion.posted_at);
    const claimOrUuid = monday.payouts[0]?.claimOrUuid ?? null;
    assert.ok(claimOrUuid, "the payout line names its disbursement");
    assert.deepEqual(monday, {
      date: "2026-01-05",
      opening: 0,
      funded: 1_000_000,
      returnedFunding: 0,
      returned: 0,
      disbursed: 39_900, // 40,000 less the 100 payee fee
      fees: 350, // payee 100 + payor 200 + service 50
      closing: 1_000_000 - 40_250,
      difference: 0,
      fundings: [],
      // The day's one payout paid out: its line sums to the day's disbursed and fees.
      payouts: [{
        transactionId: String(completion.id),
        kind: "payout.complete",
        payoutId,
        claimOrUuid,
        postedAt,
        disbursedCents: 39_900,
        feesCents: 350,
        returnedCents: 0,
      }],
    });
    assert.equal(
      tieOutCsv("auto", monday),
      "line,date,currency,opening,funded,returned_funding,returned,disbursed,fees,closing,difference\n" +
        "auto,2026-01-05,USD,0.00,10000.00,0.00,0.00,399.00,3.50,9597.50,0.00\n" +
        "\n" +
        "funding_uuid,payment_method,amount,large_disbursement,disbursement_uuid,movements,released_disbursement_uuid,released_at\n" +
        "\n" +
        "transaction_id,kind,payout_id,claim_or_uuid,posted_at,disbursed,fees,returned\n" +
        `${completion.id},payout.complete,${payoutId},${claimOrUuid},${
          new Date(postedAt).toISOString()
        },399.00,3.50,0.00\n`,
    );
    assert.deepEqual(tieOutJson(monday), {
      date: "2026-01-05",
      currency: "USD",
      opening: 0,
      funded: 10_000,
      returned_funding: 0,
      returned: 0,
      disbursed: 399,
      fees: 3.5,
      closing: 9_597.5,
      difference: 0,
    });
    await m.advance(DAY_SECONDS);
    const tuesday = (await lineTieOut(m.database.readClient, m.lineId, "2026-01-06"))!;
    assert.deepEqual([tuesday.opening, tuesday.closing, tuesday.difference], [959_750, 959_750, 0]);
    assert.equal(await lineTieOut(m.database.readClient, m.lineId, "2026-02-30"), null);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  } finally {
    await m.close();
  }
});

Deno.test("verifyLedger reports a tampered balance and an unbalanced transaction", async () => {
  const m = await openMoneyFixture();
  try {
    await m.fund(50_000);
    await m.database.writer.write(async (tx) => {
      await tx.execute({
        sql:
          "UPDATE ledger_accounts SET balance_cents = balance_cents + 1 WHERE code = 'available' AND line_id = ?",
        args: [m.lineId],
      });
      await tx.execute(
        "UPDATE ledger_entries SET amount_cents = amount_cents - 1 WHERE id = (SELECT min(id) FROM ledger_entries)",
      );
    });
    const problems = await verifyLedger(m.database.readClient);
    assert.deepEqual(problems.map((p) => p.kind).sort(), [
      "balance_differs",
      "balance_differs",
      "unbalanced_transaction",
    ]);
    assert.match(
      problems.find((p) => p.kind === "unbalanced_transaction")!.detail,
      /entries sum to -1 cents/,
    );
  } finally {
    await m.close();
  }
});

Deno.test("a live wire is pending until received; then it is available and released waiting payouts", async () => {
  const m = await openMoneyFixture();
  try {
    const wire = await m.database.writer.write((tx) =>
      addFunds(
        tx,
        {
          companyId: m.companyId,
          lineId: m.lineId,
          paymentMethod: "WireTransfer",
          amountCents: 80_000,
          description: "wire for claim 77",
          largeDisbursement: true,
          requestFingerprint: "w1",
        },
        "live",
        m.now(),
      )
    );
    assert.ok(wire.ok);
    assert.equal(wire.value.funding.status, "Pending");
    assert.equal((await m.balances()).available, 0);
    const waiting = await m.create({ amountCents: 60_000 }, { large: true });
    assert.ok(waiting.ok && waiting.value.payouts[0].status === "pending_funds");
    const received = await m.database.writer.write((tx) =>
      receiveWire(tx, wire.value.funding.id, m.now())
    );
    assert.ok(received.ok && received.value.status === "Completed");
    assert.equal((await m.payout(waiting.value.payouts[0].id)).status, "created");
    const { rows: released } = await m.database.readClient.execute({
      sql: "SELECT released_by_funding_id, released_at FROM disbursements WHERE id = ?",
      args: [waiting.value.disbursementId],
    });
    assert.deepEqual({ ...released[0] }, {
      released_by_funding_id: wire.value.funding.id,
      released_at: m.now(),
    }, "the disbursement records the funding that released it");
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved], [20_000, 60_000]);
    const twice = await m.database.writer.write((tx) =>
      receiveWire(tx, wire.value.funding.id, m.now())
    );
    assert.ok(!twice.ok && twice.code === "funding_not_pending");
  } finally {
    await m.close();
  }
});

Deno.test("funding_uuid: the same request returns the first record; another request is refused", async () => {
  const m = await openMoneyFixture();
  try {
    const add = (fingerprint: string) =>
      m.database.writer.write((tx) =>
        addFunds(
          tx,
          {
            companyId: m.companyId,
            lineId: m.lineId,
            fundingUuid: "f-1",
            paymentMethod: "ACH",
            amountCents: 1_000,
            description: "x",
            largeDisbursement: false,
            requestFingerprint: fingerprint,
          },
          "test",
          m.now(),
        )
      );
    const first = await add("same");
    const again = await add("same");
    assert.ok(first.ok && again.ok);
    assert.equal(again.value.funding.id, first.value.funding.id);
    assert.equal(again.value.replayed, true);
    const other = await add("other");
    assert.ok(!other.ok && other.code === "funding_uuid_reused");
    const { rows: fundings } = await m.database.readClient.execute(
      "SELECT count(*) AS n FROM fundings",
    );
    assert.equal(Number(fundings[0].n), 1, "funded once");
    // Known once the debit's file is built.
    assert.equal(first.value.funding.expectedAvailableAt, null);
  } finally {
    await m.close();
  }
});

Deno.test("utcDayBounds accepts real calendar dates only", () => {
  assert.deepEqual(utcDayBounds("2026-01-05"), {
    start: Date.UTC(2026, 0, 5),
    end: Date.UTC(2026, 0, 6),
  });
  for (const bad of ["2026-02-30", "2026-1-5", "yesterday", "2026-13-01"]) {
    assert.equal(utcDayBounds(bad), null, bad);
  }
});

Deno.test("computeTieOut: money back from a completed payout is `returned`, added back; the CSV prints negatives with two decimals", () => {
  const day = computeTieOut("2026-01-06", 10_000, 19_400, [
    { kind: "funding.wire_received", account: "available", cents: 5_000 },
    { kind: "funding.wire_received", account: "bank", cents: -5_000 },
    { kind: "payout.late_return", account: "available", cents: 4_400 },
    { kind: "payout.late_return", account: "bank", cents: -4_400 },
  ]);
  assert.deepEqual(day, {
    date: "2026-01-06",
    opening: 10_000,
    funded: 5_000,
    returnedFunding: 0,
    returned: 4_400,
    disbursed: 0,
    fees: 0,
    closing: 19_400,
    difference: 0,
    fundings: [],
    payouts: [],
  });
  const short = computeTieOut("2026-01-06", 0, 150, []);
  assert.equal(short.difference, -150);
  assert.equal(
    tieOutCsv("auto", short).split("\n")[1],
    "auto,2026-01-06,USD,0.00,0.00,0.00,0.00,0.00,0.00,1.50,-1.50",
  );
});

Deno.test("the tie-out lists the day's large-disbursement fundings and what each released, in its JSON and as a CSV section", async () => {
  const m = await openMoneyFixture();
  try {
    const waiting = await m.create({ amountCents: 50_000 }, { large: true, uuid: "CLM,77" });
    assert.ok(waiting.ok);
    const wire = await m.database.writer.write((tx) =>
      addFunds(
        tx,
        {
          companyId: m.companyId,
          lineId: m.lineId,
          fundingUuid: "=W-1",
          paymentMethod: "WireTransfer",
          amountCents: 50_000,
          description: "wire for CLM,77",
          largeDisbursement: true,
          disbursementUuid: "CLM,77",
          requestFingerprint: "w",
        },
        "test",
        m.now(),
      )
    );
    assert.ok(wire.ok);
    await m.fund(20_000, "ACH"); // ordinary and releasing nothing: not listed
    const day = (await lineTieOut(m.database.readClient, m.lineId, "2026-01-05"))!;
    assert.equal(day.difference, 0);
    assert.deepEqual(day.fundings, [{
      fundingUuid: "=W-1",
      paymentMethod: "WireTransfer",
      amountCents: 50_000,
      largeDisbursement: true,
      disbursementUuid: "CLM,77",
      movements: ["wire_received"],
      released: [{ disbursementUuid: "CLM,77", releasedAt: START }],
    }]);
    assert.deepEqual(tieOutFundingsJson(day), [{
      funding_uuid: "=W-1",
      payment_method: "WireTransfer",
      amount: 500,
      large_disbursement: true,
      disbursement_uuid: "CLM,77",
      movements: ["wire_received"],
      released_disbursements: [
        { disbursement_uuid: "CLM,77", released_at: "2026-01-05T15:00:00.000Z" },
      ],
    }]);
    assert.equal(
      tieOutCsv("auto", day).split("\n").slice(2).join("\n"),
      "\n" +
        "funding_uuid,payment_method,amount,large_disbursement,disbursement_uuid,movements,released_disbursement_uuid,released_at\n" +
        `'=W-1,WireTransfer,500.00,true,"CLM,77",wire_received,"CLM,77",2026-01-05T15:00:00.000Z\n` +
        "\n" +
        "transaction_id,kind,payout_id,claim_or_uuid,posted_at,disbursed,fees,returned\n",
    );
    const nextDay = (await lineTieOut(m.database.readClient, m.lineId, "2026-01-06"))!;
    assert.deepEqual(nextDay.fundings, [], "nothing of the wire moved on the next day");
  } finally {
    await m.close();
  }
});
