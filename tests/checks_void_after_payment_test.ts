/**
 * A void that may meet a payment (issue "Money in flight"): a check whose issue reached the bank
 * is voided, and the bank may pay it before the void reaches it. The payout keeps its money in
 * flight (funds_sent, waiting with a reason) until a paid-items file imported a business day after
 * the void's file was sent covers it: only then is it offered again. A paid item of the check goes
 * to the exceptions queue, the payout is never offered again, and the payment standing completes
 * it; the bank reversing its payment lets the void stand.
 */
import assert from "node:assert/strict";
import { resolveCheckException } from "../lib/checks/exceptions.ts";
import { importPaidItems, type PaidImportDeps } from "../lib/checks/paid_import.ts";
import { voidAwaitingPaidItems, voidCheckAudited } from "../lib/checks/voids.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import type { AuditActor } from "../lib/audit/store.ts";
import { MONEY_SETTINGS, type MoneyFixture } from "./money_core_helpers.ts";
import { checkFilesOf, chooseCheck, markSent, rows, withCheckFixture } from "./checks_helpers.ts";

const HOUR_SECONDS = 3600;
const DAY_SECONDS = 86_400;
const admin: AuditActor = { operator: { id: "op_admin", email: "admin@ops.test" }, origin: "cli" };
const EMPTY_FILE = "check_number,amount,paid_date\n";

const depsOf = (m: MoneyFixture): PaidImportDeps => ({
  database: m.database,
  environment: "live",
  runtime: payoutRuntime("live", MONEY_SETTINGS),
});

async function importCsv(m: MoneyFixture, text: string) {
  const original = console.error;
  console.error = () => {};
  try {
    const imported = await importPaidItems(depsOf(m), {
      companyId: m.companyId,
      content: new TextEncoder().encode(text),
      fileName: "paid.csv",
      source: "sftp",
      importedBy: null,
    }, m.now());
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    return imported.value;
  } finally {
    console.error = original;
  }
}

async function sendPositivePay(m: MoneyFixture): Promise<void> {
  for (const file of await checkFilesOf(m)) {
    if (file.kind === "positive_pay" && file.status === "built") {
      const marked = await markSent(m, "live", String(file.batch_id));
      assert.ok(marked.ok, marked.ok ? "" : marked.message);
    }
  }
}

/**
 * A $250.00 check issued and sent Monday 5 January, voided by an operator, and its void sent in
 * Monday's 16:00 file (marked sent at 17:00 New York): the payout and the moment the void was sent.
 */
async function voidSent(m: MoneyFixture): Promise<{ id: string; voidSentAt: number }> {
  const [id] = await chooseCheck(m, [25_000]);
  await m.advance(HOUR_SECONDS); // past the 10:30 cutoff
  await sendPositivePay(m);
  assert.equal((await m.payout(id)).status, "funds_sent");
  const voided = await m.database.writer.write((tx) =>
    voidCheckAudited(tx, "live", admin, {
      companyId: m.companyId,
      checkNumber: 5001,
      reason: "payee asked for another method",
      voidedBy: "admin@ops.test",
    }, m.now())
  );
  assert.ok(voided.ok);
  await m.advance(6 * HOUR_SECONDS); // past the 16:00 cutoff
  await sendPositivePay(m);
  return { id, voidSentAt: m.now() };
}

const payoutOf = async (m: MoneyFixture, id: string) => {
  const payout = await m.payout(id);
  return [payout.status, payout.failure_reason];
};

Deno.test("a void sent to the bank keeps the payout in flight, waiting with its reason, until a paid-items file a business day later covers it; then it fails check_voided and is offered again", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const { id, voidSentAt } = await voidSent(m);
    const reference = `${id}-1`;
    assert.deepEqual(await payoutOf(m, id), ["funds_sent", null], "the bank may have paid it");
    assert.deepEqual(await voidAwaitingPaidItems(m.database.readClient, reference), {
      checkNumber: 5001,
      coveredFrom: voidSentAt + DAY_SECONDS * 1000,
      exceptionOpen: false,
    });
    const held = await m.balances();
    assert.equal(held.in_transit, 25_000);

    // The same evening's file tells of the day before the void: it covers nothing.
    await importCsv(m, EMPTY_FILE);
    assert.deepEqual(await payoutOf(m, id), ["funds_sent", null]);

    await m.advance(DAY_SECONDS); // Tuesday 17:00: a business day after the void was sent
    await importCsv(m, EMPTY_FILE);
    assert.deepEqual(await payoutOf(m, id), ["modality_offered", "check_voided"]);
    assert.equal(await voidAwaitingPaidItems(m.database.readClient, reference), null);
    const after = await m.balances();
    assert.deepEqual([after.in_transit, after.reserved], [0, held.reserved + 25_000]);
    assert.deepEqual(await rows(m, "SELECT status FROM rail_batch_entries"), [{
      status: "failed",
    }]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a check the bank paid before its void reached it: the paid item is an exception, the payout is never offered again, and the payment standing completes it", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const { id } = await voidSent(m);
    await m.advance(DAY_SECONDS);
    // Tuesday's file: the payee deposited the check Monday morning, before the void.
    const report = await importCsv(m, "check_number,amount,paid_date\n5001,250.00,2026-01-05\n");
    assert.deepEqual(report.notMatched.map((x) => [x.checkNumber, x.reason]), [[5001, "voided"]]);
    assert.deepEqual(await payoutOf(m, id), ["funds_sent", null]);
    assert.deepEqual(
      (await voidAwaitingPaidItems(m.database.readClient, `${id}-1`))?.exceptionOpen,
      true,
    );
    // Later files change nothing while the exception is open.
    await m.advance(DAY_SECONDS);
    await importCsv(m, EMPTY_FILE);
    assert.deepEqual(await payoutOf(m, id), ["funds_sent", null]);

    const before = await m.balances();
    const stands = await resolveCheckException(depsOf(m), admin, {
      exceptionId: report.notMatched[0].exceptionId!,
      resolution: "payment_stands",
      note: "the payee deposited it before the void",
      companyIds: null,
    }, m.now());
    assert.ok(stands.ok, stands.ok ? "" : stands.message);
    assert.deepEqual([stands.value.completedPayoutId, stands.value.ledgerTransactionId], [
      id,
      null,
    ]);
    assert.deepEqual(await payoutOf(m, id), ["completed", null]);
    const after = await m.balances();
    assert.deepEqual(
      [after.available, after.in_transit, after.bank],
      [before.available, before.in_transit - 25_000, before.bank + 25_000],
    );
    assert.deepEqual(
      await rows(m, "SELECT status, paid_date FROM checks WHERE check_number = 5001"),
      [{ status: "paid", paid_date: "2026-01-05" }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("the bank reversed its payment of a voided check: the void stands, and the payout covered already is offered again at the resolution", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const { id } = await voidSent(m);
    await m.advance(DAY_SECONDS);
    const report = await importCsv(m, "check_number,amount,paid_date\n5001,250.00,2026-01-05\n");
    assert.deepEqual(await payoutOf(m, id), ["funds_sent", null]);
    const reversed = await resolveCheckException(depsOf(m), admin, {
      exceptionId: report.notMatched[0].exceptionId!,
      resolution: "bank_reversed",
      note: null,
      companyIds: null,
    }, m.now());
    assert.ok(reversed.ok);
    assert.deepEqual(await payoutOf(m, id), ["modality_offered", "check_voided"]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});
