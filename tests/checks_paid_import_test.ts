/**
 * Paid-items imports in live (issue 19): checks issued and sent by positive pay, then the bank's
 * CSV: a match completes its payout, an amount mismatch, a voided check, an unknown number and a
 * number paid twice become exceptions with their ledger effect, the same file again changes
 * nothing, a file without a column is refused with nothing written; operators resolve the
 * exceptions (the bank's payment stands, or the bank took it back), audited, with the ledger
 * balanced and the tie-out at zero.
 */
import assert from "node:assert/strict";
import { resolveCheckException } from "../lib/checks/exceptions.ts";
import { importPaidItems, type PaidImportDeps } from "../lib/checks/paid_import.ts";
import { listCheckExceptions } from "../lib/checks/views.ts";
import { voidCheckAudited } from "../lib/checks/voids.ts";
import { pollInbound } from "../lib/ach/inbound.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import type { AuditActor } from "../lib/audit/store.ts";
import type { MoneyFixture } from "./money_core_helpers.ts";
import { startTestSshd } from "./sshd_helpers.ts";
import { MONEY_SETTINGS, moneyBatchDeps } from "./money_core_helpers.ts";
import {
  checkFilesOf,
  chooseCheck,
  markSent,
  registerOf,
  rows,
  withCheckFixture,
} from "./checks_helpers.ts";

const HOUR_SECONDS = 3600;
const admin: AuditActor = { operator: { id: "op_admin", email: "admin@ops.test" }, origin: "cli" };

const depsOf = (m: MoneyFixture): PaidImportDeps => ({
  database: m.database,
  environment: "live",
  runtime: payoutRuntime("live", MONEY_SETTINGS),
});

const csv = (text: string) => new TextEncoder().encode(text);

/** Silences the warning lines an import logs for its exceptions. */
async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const original = console.error;
  console.error = () => {};
  try {
    return await fn();
  } finally {
    console.error = original;
  }
}

function importCsv(m: MoneyFixture, text: string, fileName = "paid.csv") {
  return quietly(() =>
    importPaidItems(depsOf(m), {
      companyId: m.companyId,
      content: csv(text),
      fileName,
      source: "cli",
      importedBy: "op_admin",
    }, m.now())
  );
}

/** Marks every built positive-pay file sent, oldest first. */
async function sendPositivePay(m: MoneyFixture): Promise<void> {
  for (const file of await checkFilesOf(m)) {
    if (file.kind === "positive_pay" && file.status === "built") {
      const marked = await markSent(m, "live", String(file.batch_id));
      assert.ok(marked.ok, marked.ok ? "" : marked.message);
    }
  }
}

const payoutStatus = async (m: MoneyFixture, id: string) => (await m.payout(id)).status;

const ledgerKinds = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT t.kind, a.code, e.amount_cents FROM ledger_transactions t
       JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
     WHERE t.kind LIKE 'check.%' ORDER BY t.rowid, e.amount_cents`,
  );

Deno.test("paid items: a match completes, a mismatch, a voided check, an unknown number and a double payment are exceptions; the same file again changes nothing", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const ids = await chooseCheck(m, [10_000, 20_000, 30_000, 40_000]);
    await m.advance(HOUR_SECONDS);
    await sendPositivePay(m);
    assert.deepEqual(
      (await registerOf(m)).map((c) => [c.check_number, c.amount_cents, c.status]),
      [[5001, 10_000, "issued"], [5002, 20_000, "issued"], [5003, 30_000, "issued"], [
        5004,
        40_000,
        "issued",
      ]],
    );
    for (const id of ids) assert.equal(await payoutStatus(m, id), "funds_sent");
    // 5003 is voided and its void sent: the bank may have paid it before the void reached it, so
    // its payout still holds the money until the bank's paid items say.
    const voided = await m.database.writer.write((tx) =>
      voidCheckAudited(tx, "live", admin, {
        companyId: m.companyId,
        checkNumber: 5003,
        reason: "lost in the mail",
        voidedBy: "admin@ops.test",
      }, m.now())
    );
    assert.ok(voided.ok);
    await m.advance(6 * HOUR_SECONDS); // 17:00: past the 16:00 cutoff, which takes the void
    await sendPositivePay(m);
    assert.equal(await payoutStatus(m, ids[2]), "funds_sent");
    const before = await m.balances();

    const file = "Check Number,Amount,Paid Date\n" +
      "5001,100.00,2026-01-08\n" + // matches
      "5002,201.00,2026-01-08\n" + // paid $1.00 more than written
      "5003,300.00,2026-01-08\n" + // voided
      "9999,12.34,2026-01-08\n" + // never written
      "5001,100.00,2026-01-09\n" + // paid twice
      "5004,oops,2026-01-08\n"; // cannot be read
    const first = await importCsv(m, file);
    assert.ok(first.ok, first.ok ? "" : first.message);
    const report = first.value;
    assert.deepEqual(
      [report.duplicate, report.items, report.matched, report.exceptions],
      [false, 5, 1, 4],
    );
    assert.deepEqual(
      report.notMatched.map((item) => [item.line, item.checkNumber, item.reason]),
      [
        [3, 5002, "amount_mismatch"],
        [4, 5003, "voided"],
        [5, 9999, "unknown"],
        [6, 5001, "duplicate"],
        [7, null, "malformed"],
      ],
    );
    assert.deepEqual(
      (await registerOf(m)).map((c) => [c.check_number, c.status]),
      [[5001, "paid"], [5002, "issued"], [5003, "voided"], [5004, "issued"]],
    );
    assert.deepEqual(
      await rows(m, "SELECT paid_date, paid_amount_cents FROM checks WHERE check_number = 5001"),
      [
        { paid_date: "2026-01-08", paid_amount_cents: 10_000 },
      ],
    );
    assert.equal(await payoutStatus(m, ids[0]), "completed");
    assert.equal(await payoutStatus(m, ids[1]), "funds_sent", "a mismatch is never completed");
    const after = await m.balances();
    // Only the match moved money: its 100.00 left in_transit for the bank.
    assert.equal(after.in_transit, before.in_transit - 10_000);
    assert.equal(after.available, before.available);

    // Each exception shows what letting the bank's payment stand would post.
    const open = await listCheckExceptions(
      m.database.readClient,
      { companyIds: [m.companyId], status: "open" },
      100,
    );
    assert.deepEqual(
      open.map((x) => [x.checkNumber, x.kind, x.ledgerEffect]),
      [
        [5002, "amount_mismatch", {
          kind: "check.paid_exception",
          from: "available",
          to: "bank",
          amountCents: 100,
        }],
        // Paid before its void reached the bank: its payout's own payment, nothing more to post.
        [5003, "voided", null],
        [9999, "unknown", {
          kind: "check.paid_exception",
          from: "available",
          to: "bank",
          amountCents: 1_234,
        }],
        [5001, "duplicate", {
          kind: "check.paid_exception",
          from: "available",
          to: "bank",
          amountCents: 10_000,
        }],
      ],
    );

    // The same file again: reported as before, nothing applied twice.
    const again = await importCsv(m, file, "paid-again.csv");
    assert.ok(again.ok);
    assert.deepEqual(
      [again.value.duplicate, again.value.importId, again.value.matched, again.value.exceptions],
      [true, report.importId, 1, 4],
    );
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM check_exceptions"), [{ n: 4 }]);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM check_paid_imports"), [{ n: 1 }]);
    assert.deepEqual(await m.balances(), after);

    // The voided check's payment stands: its payout still held the money, so it completes.
    const voidedException = report.notMatched.find((x) => x.reason === "voided")!.exceptionId!;
    const stands = await resolveCheckException(depsOf(m), admin, {
      exceptionId: voidedException,
      resolution: "payment_stands",
      note: null,
      companyIds: null,
    }, m.now());
    assert.ok(stands.ok);
    assert.equal(stands.value.completedPayoutId, ids[2]);
    assert.deepEqual(
      [(await m.balances()).available, (await m.balances()).in_transit],
      [after.available, after.in_transit - 30_000],
    );
    assert.equal(await payoutStatus(m, ids[2]), "completed");
    assert.deepEqual(
      await rows(m, "SELECT status, paid_amount_cents FROM checks WHERE check_number = 5003"),
      [{ status: "paid", paid_amount_cents: 30_000 }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("paid items: a file without one of its columns is refused naming it, and nothing is written", async () => {
  await withCheckFixture("live", async ({ m }) => {
    await chooseCheck(m, [10_000]);
    await m.advance(HOUR_SECONDS);
    await sendPositivePay(m);
    for (
      const [text, column] of [
        ["check_number,amount\n5001,100.00\n", "paid_date"],
        ["amount,paid_date\n100.00,2026-01-08\n", "check_number"],
        ["check_number,paid_date\n5001,2026-01-08\n", "amount"],
      ]
    ) {
      const refused = await importCsv(m, text);
      assert.ok(!refused.ok);
      assert.deepEqual([refused.code, refused.field], ["missing_column", column]);
      assert.match(refused.message, new RegExp(`no ${column} column`));
    }
    const notText = await importPaidItems(depsOf(m), {
      companyId: m.companyId,
      content: new Uint8Array([0xff, 0xfe, 0x00]),
      fileName: "paid.bin",
      source: "cli",
      importedBy: null,
    }, m.now());
    assert.deepEqual(notText.ok ? null : notText.code, "malformed_file");
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM check_paid_imports"), [{ n: 0 }]);
    assert.deepEqual((await registerOf(m)).map((c) => c.status), ["issued"]);
  });
});

Deno.test("exceptions: the bank's payment stands (ledger posted, a mismatch completes its payout) or was reversed (nothing posted); each resolution audited once", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const ids = await chooseCheck(m, [20_000, 40_000, 50_000]);
    await m.advance(HOUR_SECONDS);
    await sendPositivePay(m);
    const imported = await importCsv(
      m,
      "check_number,amount,paid_date\n" +
        "5001,201.00,2026-01-08\n" + // $1.00 more than written
        "5002,390.00,2026-01-08\n" + // $10.00 less than written
        "8888,75.00,2026-01-08\n" + // unknown
        "7777,99999999.00,2026-01-08\n", // unknown, more than the line holds
    );
    assert.ok(imported.ok);
    const [over, under, unknown, huge] = imported.value.notMatched.map((x) => x.exceptionId!);
    const deps = depsOf(m);
    const resolve = (exceptionId: string, resolution: string, note: string | null = null) =>
      resolveCheckException(deps, admin, {
        exceptionId,
        resolution,
        note,
        companyIds: null,
      }, m.now());
    const before = await m.balances();

    const paidOver = await resolve(over, "payment_stands", "the bank paid the encoded amount");
    assert.ok(paidOver.ok, paidOver.ok ? "" : paidOver.message);
    assert.equal(paidOver.value.completedPayoutId, ids[0]);
    assert.equal(await payoutStatus(m, ids[0]), "completed");
    const paidUnder = await resolve(under, "payment_stands");
    assert.ok(paidUnder.ok);
    assert.equal(await payoutStatus(m, ids[1]), "completed");
    assert.deepEqual(
      (await registerOf(m)).map((c) => [c.check_number, c.status]),
      [[5001, "paid"], [5002, "paid"], [5003, "issued"]],
    );
    assert.deepEqual(
      await rows(
        m,
        "SELECT check_number, paid_amount_cents FROM checks WHERE status = 'paid' ORDER BY check_number",
      ),
      [
        { check_number: 5001, paid_amount_cents: 20_100 },
        { check_number: 5002, paid_amount_cents: 39_000 },
      ],
    );
    const reversed = await resolve(unknown, "bank_reversed", "the bank returned the forged item");
    assert.ok(reversed.ok);
    assert.equal(reversed.value.ledgerTransactionId, null);

    // More than available: refused, nothing written, the exception stays open.
    const short = await resolve(huge, "payment_stands");
    assert.deepEqual(short.ok ? null : [short.code, short.field], [
      "insufficient_funds",
      "exception",
    ]);
    const again = await resolve(over, "bank_reversed");
    assert.deepEqual(again.ok ? null : again.code, "exception_resolved");
    const wrong = await resolve(huge, "write_off");
    assert.deepEqual(wrong.ok ? null : [wrong.code, wrong.field], [
      "invalid_resolution",
      "resolution",
    ]);

    assert.deepEqual(await ledgerKinds(m), [
      { kind: "check.paid_exception", code: "available", amount_cents: -100 },
      { kind: "check.paid_exception", code: "bank", amount_cents: 100 },
      { kind: "check.paid_short", code: "bank", amount_cents: -1_000 },
      { kind: "check.paid_short", code: "available", amount_cents: 1_000 },
    ]);
    const after = await m.balances();
    assert.equal(after.available, before.available - 100 + 1_000);
    assert.equal(after.in_transit, before.in_transit - 60_000);
    assert.deepEqual(
      await rows(
        m,
        `SELECT check_number, status, resolution, resolved_by,
           ledger_transaction_id IS NOT NULL AS posted FROM check_exceptions ORDER BY check_number`,
      ),
      [
        {
          check_number: 5001,
          status: "resolved",
          resolution: "payment_stands",
          resolved_by: "op_admin",
          posted: 1,
        },
        {
          check_number: 5002,
          status: "resolved",
          resolution: "payment_stands",
          resolved_by: "op_admin",
          posted: 1,
        },
        { check_number: 7777, status: "open", resolution: null, resolved_by: null, posted: 0 },
        {
          check_number: 8888,
          status: "resolved",
          resolution: "bank_reversed",
          resolved_by: "op_admin",
          posted: 0,
        },
      ],
    );
    const audit = await rows(
      m,
      "SELECT action, object_type, operator_email, after FROM audit_log WHERE action = 'checks:resolve-exception' ORDER BY seq",
    );
    assert.deepEqual(audit.map((row) => JSON.parse(String(row.after)).resolution), [
      "payment_stands",
      "payment_stands",
      "bank_reversed",
    ]);
    assert.equal(JSON.parse(String(audit[0].after)).note, "the bank paid the encoded amount");
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
    const tieOut = await lineTieOut(
      m.database.readClient,
      m.lineId,
      new Date(m.now()).toISOString().slice(0, 10),
    );
    assert.equal(tieOut!.difference, 0);
  });
});

Deno.test("exceptions: a check paid before its positive-pay file was sent is not_sent; it completes once the file is sent and the exception resolved", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [id] = await chooseCheck(m, [15_000]);
    await m.advance(HOUR_SECONDS);
    assert.equal(await payoutStatus(m, id), "modality_selected");
    const imported = await importCsv(m, "check_number,amount,paid_date\n5001,150.00,2026-01-08\n");
    assert.ok(imported.ok);
    assert.deepEqual(imported.value.notMatched.map((x) => x.reason), ["not_sent"]);
    const exceptionId = imported.value.notMatched[0].exceptionId!;
    const resolve = () =>
      resolveCheckException(depsOf(m), admin, {
        exceptionId,
        resolution: "payment_stands",
        note: null,
        companyIds: null,
      }, m.now());
    const early = await resolve();
    assert.deepEqual(early.ok ? null : early.code, "check_not_sent");
    await sendPositivePay(m);
    assert.equal(await payoutStatus(m, id), "funds_sent");
    const resolved = await resolve();
    assert.ok(resolved.ok);
    assert.deepEqual([resolved.value.completedPayoutId, resolved.value.ledgerTransactionId], [
      id,
      null,
    ]);
    assert.equal(await payoutStatus(m, id), "completed");
    assert.deepEqual(await ledgerKinds(m), []);
    // An operator limited to other companies does not see it.
    const hidden = await resolveCheckException(depsOf(m), admin, {
      exceptionId,
      resolution: "bank_reversed",
      note: null,
      companyIds: ["co_other"],
    }, m.now());
    assert.deepEqual(hidden.ok ? null : hidden.code, "exception_not_found");
  });
});

Deno.test("paid items from the bank's SFTP inbound directory: a .csv is imported as paid items and moved to processed/", async () => {
  const sshd = await startTestSshd();
  try {
    await withCheckFixture("live", async ({ m }) => {
      const [id] = await chooseCheck(m, [12_500]);
      await m.advance(HOUR_SECONDS);
      await sendPositivePay(m);
      await Deno.writeTextFile(
        `${sshd.inboundDir}/PAID_20260108.csv`,
        "check_number,amount,paid_date\n5001,125.00,2026-01-08\n",
      );
      await quietly(() =>
        pollInbound(
          moneyBatchDeps(m.database, "live"),
          sshd.target,
          m.companyId,
          m.now(),
        )
      );
      assert.equal(await payoutStatus(m, id), "completed");
      assert.deepEqual(
        await rows(m, "SELECT source, file_name, matched_count FROM check_paid_imports"),
        [{ source: "sftp", file_name: "PAID_20260108.csv", matched_count: 1 }],
      );
      const processed: string[] = [];
      for await (const entry of Deno.readDir(`${sshd.inboundDir}/processed`)) {
        processed.push(entry.name);
      }
      assert.deepEqual(processed, ["PAID_20260108.csv"]);
    });
  } finally {
    await sshd.close();
  }
});
