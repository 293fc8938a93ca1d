/**
 * ACH fundings through the bank file, and the sandbox end to end: a funding's debit goes in the
 * next cutoff's file and clears when its return window closes; over the same-day limit it waits
 * for the next-day cutoff; a returned debit returns the funding; live without bank settings is
 * refused. End to end in test, with the sandbox bank itself: one file carries the funding's debit
 * and three payees' credits; 000222222227 makes the bank refuse the file once; 000111111116 comes
 * back R03 in the sandbox bank's return file.
 */
import assert from "node:assert/strict";
import { addFunds } from "../lib/funding/store.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { selectMethod, settleRailBatchEntry } from "../lib/payouts/jobs.ts";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import { openTempDatabase, testSecretBox } from "./helpers.ts";
import {
  DAY_SECONDS,
  MONEY_SETTINGS,
  type MoneyFixture,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";
import { rows, statuses } from "./ach_helpers.ts";

const MINUTE_SECONDS = 60;

async function withSandboxBank(fn: (m: MoneyFixture) => Promise<void>) {
  const m = await openMoneyFixture();
  try {
    await fn(m);
  } finally {
    await m.close();
  }
}

const fundingOf = async (m: MoneyFixture, id: string) =>
  (await rows(
    m,
    "SELECT status, expected_available_at, completed_at FROM fundings WHERE id = ?",
    id,
  ))[0];

const fileRows = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT f.file_name, f.cutoff_kind, f.effective_date, f.entry_count, f.credit_total_cents,
            f.debit_total_cents, b.status, b.transmitted_at
     FROM ach_files f JOIN rail_batches b ON b.id = f.batch_id ORDER BY b.rowid`,
  );

/** The payee chose ACH in the portal: routing and account type kept, the account sealed. */
async function chooseAchAccount(m: MoneyFixture, payoutId: string, accountNumber: string) {
  const kept = {
    routing_number: "021000021",
    account_type: "checking",
    account_sealed: await testSecretBox.sealText(accountNumber),
  };
  const selected = await m.database.writer.write((tx) =>
    selectMethod(tx, payoutId, {
      paymentMethodId: 1,
      details: { accountNumber },
      kept,
    }, m.now())
  );
  assert.ok(selected.ok);
}

Deno.test("sandbox end to end: one file carries the funding's debit and three payees' credits; refused once, sent on its retry; one returned R03; the rest settled", async () => {
  await withSandboxBank(async (m) => {
    await m.fund(100_000);
    const fundingId = await m.fund(50_000, "ACH");
    const created = await m.create([
      { payeeUuid: "settles", amountCents: 10_000 },
      { payeeUuid: "returned", amountCents: 10_000 },
      { payeeUuid: "refused-once", amountCents: 10_000 },
    ]);
    assert.ok(created.ok);
    await m.settle();
    const [settles, returned, refusedOnce] = created.value.payouts.map((p) => p.id);
    await chooseAchAccount(m, settles, "000123456789");
    await chooseAchAccount(m, returned, "000111111116");
    await chooseAchAccount(m, refusedOnce, "000222222227");
    await m.settle();
    assert.deepEqual(await statuses(m, [settles, returned, refusedOnce]), [
      "modality_selected",
      "modality_selected",
      "modality_selected",
    ]);

    await m.advance(30 * MINUTE_SECONDS); // 10:30 New York: the file is refused once
    assert.deepEqual((await fileRows(m)).map((f) => [f.status, f.transmitted_at]), [[
      "built",
      null,
    ]]);
    await m.advance(5); // its retry is taken
    assert.deepEqual(await fileRows(m), [{
      file_name: "ACH_1123456789_20260105_A.txt",
      cutoff_kind: "same_day",
      effective_date: "2026-01-05",
      entry_count: 4,
      credit_total_cents: 30_000,
      debit_total_cents: 50_000,
      status: "transmitted",
      transmitted_at: START + 30 * 60_000 + 5_000,
    }]);
    assert.deepEqual(
      await statuses(m, [settles, returned, refusedOnce]),
      Array(3).fill("funds_sent"),
    );

    // Wednesday 09:00 New York: the sandbox bank's return file.
    await m.advance((Date.UTC(2026, 0, 7, 14) - m.now()) / 1000);
    assert.deepEqual(await statuses(m, [settles, returned, refusedOnce]), [
      "funds_sent",
      "modality_offered",
      "funds_sent",
    ]);
    assert.equal((await m.payout(returned)).failure_reason, "R03");
    const [imported] = await rows(m, "SELECT source, applied_count FROM ach_imports");
    assert.deepEqual(imported, { source: "sandbox_bank", applied_count: 1 });

    // Wednesday 17:00 New York: the return window closes.
    await m.advance((Date.UTC(2026, 0, 7, 22) - m.now()) / 1000);
    assert.deepEqual(await statuses(m, [settles, returned, refusedOnce]), [
      "completed",
      "modality_offered",
      "completed",
    ]);
    assert.deepEqual(await fundingOf(m, fundingId), {
      status: "Completed",
      expected_available_at: Date.UTC(2026, 0, 7, 22),
      completed_at: Date.UTC(2026, 0, 7, 22),
    });
    assert.deepEqual(
      await rows(
        m,
        "SELECT direction, status, return_code FROM rail_batch_entries ORDER BY trace_number",
      ),
      [
        { direction: "debit", status: "completed", return_code: null },
        { direction: "credit", status: "completed", return_code: null },
        { direction: "credit", status: "failed", return_code: "R03" },
        { direction: "credit", status: "completed", return_code: null },
      ],
    );
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit, b.pending_funding, b.bank], [
      100_000 + 50_000 - 30_000,
      10_000,
      0,
      0,
      -150_000 + 20_000,
    ]);
    assert.deepEqual(await m.events(refusedOnce), [
      "created",
      "offered",
      "selected",
      "processing",
      "completed",
    ]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("an ACH funding over $1,000,000.00 skips the same-day cutoffs and goes in the 17:00 next-day file", async () => {
  await withSandboxBank(async (m) => {
    const large = await m.fund(150_000_000, "ACH");
    const small = await m.fund(40_000, "ACH");
    assert.deepEqual(await fundingOf(m, large), {
      status: "Pending",
      expected_available_at: null,
      completed_at: null,
    });
    await m.advance(30 * MINUTE_SECONDS); // 10:30: the small one goes, the large one waits
    assert.deepEqual(
      (await fileRows(m)).map((f) => [f.cutoff_kind, f.debit_total_cents]),
      [["same_day", 40_000]],
    );
    await m.advance((Date.UTC(2026, 0, 5, 22) - m.now()) / 1000); // 17:00 New York
    assert.deepEqual(
      (await fileRows(m)).map((f) => [f.cutoff_kind, f.effective_date, f.debit_total_cents]),
      [["same_day", "2026-01-05", 40_000], ["next_day", "2026-01-06", 150_000_000]],
    );
    assert.equal((await fundingOf(m, large)).expected_available_at, Date.UTC(2026, 0, 8, 22));
    assert.equal((await m.balances()).pending_funding, 150_040_000);
    await m.advance(3 * DAY_SECONDS);
    assert.deepEqual(
      [(await fundingOf(m, small)).status, (await fundingOf(m, large)).status],
      ["Completed", "Completed"],
    );
    const b = await m.balances();
    assert.deepEqual([b.available, b.pending_funding], [150_040_000, 0]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a debit the bank returns (R01) returns the funding: pending_funding back to the bank, nothing available", async () => {
  await withSandboxBank(async (m) => {
    const fundingId = await m.fund(40_000, "ACH");
    await m.advance(30 * MINUTE_SECONDS);
    const returned = await m.database.writer.write((tx) =>
      settleRailBatchEntry(
        tx,
        payoutRuntime("test", MONEY_SETTINGS),
        `${fundingId}-1`,
        { kind: "failed", reason: "R01", returnCode: "R01" },
        m.now(),
      )
    );
    assert.ok(returned.ok);
    assert.equal((await fundingOf(m, fundingId)).status, "Returned");
    await m.advance(3 * DAY_SECONDS);
    const b = await m.balances();
    assert.deepEqual([b.available, b.pending_funding, b.bank], [0, 0, 0]);
    assert.deepEqual(
      await rows(m, "SELECT status, return_code FROM rail_batch_entries"),
      [{ status: "failed", return_code: "R01" }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a live ACH funding of a company without bank settings is refused with ach_not_configured, nothing written", async () => {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-ach-live-" });
  const database = await openTempDatabase(dir, "live");
  try {
    await database.writer.write(async (tx) => {
      await tx.execute({
        sql:
          "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_live', 'Acme', '123456789', ?)",
        args: [START],
      });
      await tx.execute({
        sql:
          "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_live', 'co_live', 'auto', ?)",
        args: [START],
      });
    });
    const refused = await database.writer.write((tx) =>
      addFunds(
        tx,
        {
          companyId: "co_live",
          lineId: "line_live",
          paymentMethod: "ACH",
          amountCents: 40_000,
          description: "first funding",
          largeDisbursement: false,
          requestFingerprint: "f",
        },
        "live",
        START,
      )
    );
    assert.deepEqual(refused, {
      ok: false,
      code: "ach_not_configured",
      message:
        "company co_live has no bank settings in live, so no ACH debit can be sent; fund by wire, or have an operator set them (deno task admin bank:set)",
      field: "payment_method",
    });
    const counts = await database.readClient.execute(
      `SELECT (SELECT count(*) FROM fundings) AS fundings, (SELECT count(*) FROM rail_batch_entries) AS entries,
              (SELECT count(*) FROM scheduled_jobs) AS jobs, (SELECT count(*) FROM ledger_entries) AS ledger`,
    );
    assert.deepEqual({ ...counts.rows[0] }, { fundings: 0, entries: 0, jobs: 0, ledger: 0 });
  } finally {
    await database.close();
    await Deno.remove(dir, { recursive: true });
  }
});
