/**
 * The ACH pipeline in the test environment (the sandbox bank's settings: cutoffs 10:30 and 14:45
 * same-day, 17:00 next-day New York), with a scripted bank: files and what they hold, effective
 * dates, modifiers, traces, the file's check, void and re-queue, the window, in-doubt files and
 * the crash window of the cutoff's build.
 */
import assert from "node:assert/strict";
import type { InStatement } from "@libsql/client";
import type { Database } from "../db/client.ts";
import { runDueJobs, TransientJobError } from "../db/scheduler.ts";
import { checkNachaFile } from "../lib/ach/nacha.ts";
import { SEND_ENTRIES_PER_UNIT_MAX } from "../lib/rails/batch.ts";
import {
  markAchFileSent,
  readAchFileContent,
  requestAchFileRelease,
  resolveAchFile,
  voidAchFile,
} from "../lib/ach/files_service.ts";
import { sandboxBankSettings } from "../lib/ach/bank_settings.ts";
import { saveBankSettings } from "../lib/ach/bank_store.ts";
import { addFunds, receiveWire } from "../lib/funding/store.ts";
import { approveApproval } from "../lib/operators/approvals.ts";
import { approvedActions } from "../lib/admin/approved_actions.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { createDisbursement } from "../lib/payouts/store.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { CUTOFF_LEASE_MS } from "../lib/rails/cutoff.ts";
import { loadAchFile, openFileContent } from "../lib/ach/files_store.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import { BATCH_TRANSMIT_LEASE_MS } from "../lib/rails/batch.ts";
import { openTempDatabase, testSecretBox } from "./helpers.ts";
import {
  DAY_SECONDS,
  MONEY_SETTINGS,
  moneyBatchDeps,
  type MoneyFixture,
  START,
} from "./money_core_helpers.ts";
import {
  batches,
  chooseAch,
  fileNameOf,
  FIRST_CUTOFF,
  importReturnR03,
  logLines,
  quietly,
  rows,
  ScriptedBank,
  SECOND_CUTOFF,
  statuses,
  withScriptedBank,
} from "./ach_helpers.ts";

const MINUTE_SECONDS = 60;
const ODFI = "02100002";

const fileDeps = (
  m: MoneyFixture,
) => (moneyBatchDeps(m.database, "test"));

const OPERATOR = { operator: { id: "op_1", email: "ops@example.test" }, origin: "cli" };

const files = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT f.batch_id, f.file_name, f.file_id_modifier, f.bank_date, f.effective_date, f.cutoff_kind,
            f.window_ends_at, f.entry_count, f.credit_total_cents, f.debit_total_cents, f.sha256,
            f.byte_size, b.status
     FROM ach_files f JOIN rail_batches b ON b.id = f.batch_id ORDER BY b.rowid`,
  );

const entryFacts = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT reference, direction, status, trace_number, receiving_dfi, account_last_four,
            transaction_code, entry_class, effective_date FROM rail_batch_entries ORDER BY rowid`,
  );

async function contentOf(m: MoneyFixture, batchId: string): Promise<string> {
  const file = await loadAchFile(m.database.readClient, batchId);
  assert.ok(file);
  return await openFileContent(testSecretBox, file.contentSealed);
}

const auditRows = (m: MoneyFixture) =>
  rows(m, "SELECT action, operator_email, origin, object_id, after FROM audit_log ORDER BY seq");

Deno.test("a payout's credit and a funding's debit go in one file: PPD 22 to the payee, CCD 27 of the funding account, checked and kept sealed", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(1_000_000);
    const fundingId = await m.fund(50_000, "ACH");
    const [id] = await chooseAch(m, [25_000]);
    await m.advance(30 * MINUTE_SECONDS);

    const [file] = await files(m);
    const content = await contentOf(m, String(file.batch_id));
    assert.deepEqual(file, {
      batch_id: file.batch_id,
      file_name: fileNameOf("2026-01-05", "A"),
      file_id_modifier: "A",
      bank_date: "2026-01-05",
      effective_date: "2026-01-05",
      cutoff_kind: "same_day",
      window_ends_at: FIRST_CUTOFF + 30 * 60_000,
      entry_count: 2,
      credit_total_cents: 25_000,
      debit_total_cents: 50_000,
      sha256: await sha256Hex(content),
      byte_size: new TextEncoder().encode(content).length,
      status: "transmitted",
    });
    assert.equal(bank.received[0].content, content);
    const checked = checkNachaFile(content, { odfi: ODFI });
    assert.ok(checked.ok);
    assert.deepEqual(
      checked.value.batches.map((batch) => [
        batch.entryClass,
        batch.effectiveDate,
        batch.entries.map((
          e,
        ) => [e.transactionCode, e.routingNumber, e.accountNumber, e.amountCents]),
      ]),
      [
        ["PPD", "2026-01-05", [[22, "021000021", "000123456789", 25_000]]],
        ["CCD", "2026-01-05", [[27, "021000021", "000900000001", 50_000]]],
      ],
    );
    assert.deepEqual([checked.value.creditTotalCents, checked.value.debitTotalCents], [
      25_000,
      50_000,
    ]);
    assert.deepEqual(await entryFacts(m), [
      {
        reference: `${fundingId}-1`,
        direction: "debit",
        status: "sent",
        trace_number: `${ODFI}0000001`,
        receiving_dfi: ODFI,
        account_last_four: "0001",
        transaction_code: 27,
        entry_class: "CCD",
        effective_date: "2026-01-05",
      },
      {
        reference: `${id}-1`,
        direction: "credit",
        status: "sent",
        trace_number: `${ODFI}0000002`,
        receiving_dfi: ODFI,
        account_last_four: "6789",
        transaction_code: 22,
        entry_class: "PPD",
        effective_date: "2026-01-05",
      },
    ]);
    assert.equal((await m.payout(id)).status, "funds_sent");
    assert.equal((await m.balances()).pending_funding, 50_000);

    // Wednesday 17:00 New York (22:00 UTC): the return window closed on both.
    await m.advance(2 * DAY_SECONDS + 6 * 60 * MINUTE_SECONDS + 29 * MINUTE_SECONDS);
    assert.equal((await m.payout(id)).status, "funds_sent", "one minute before the window closes");
    await m.advance(MINUTE_SECONDS);
    assert.equal((await m.payout(id)).status, "completed");
    const b = await m.balances();
    assert.deepEqual([b.available, b.pending_funding, b.in_transit], [
      1_000_000 + 50_000 - 25_000,
      0,
      0,
    ]);
    assert.deepEqual(
      (await rows(m, "SELECT status, expected_available_at FROM fundings WHERE id = ?", fundingId))[
        0
      ],
      { status: "Completed", expected_available_at: Date.UTC(2026, 0, 7, 22) },
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("effective dates: a same-day cutoff's file is effective that day, the 17:00 next-day one the next banking day, Thanksgiving skipped", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.fund(1_000_000);
    await m.advance(6 * 60 * MINUTE_SECONDS); // 16:00 New York, past the same-day cutoffs
    const [monday] = await chooseAch(m, [10_000]);
    await m.advance(60 * MINUTE_SECONDS);
    // Wednesday 2026-11-25, 16:30 New York: the next cutoff is 17:00, next-day, and Thursday is Thanksgiving.
    await m.advance((Date.UTC(2026, 10, 25, 21, 30) - m.now()) / 1000);
    const created = await m.create({ payeeUuid: "thanksgiving", amountCents: 20_000 });
    assert.ok(created.ok);
    await m.settle();
    const thanksgiving = created.value.payouts[0].id;
    assert.ok((await m.select(thanksgiving, 1, { accountNumber: "000123456789" })).ok);
    await m.advance(30 * MINUTE_SECONDS);
    assert.deepEqual(
      (await files(m)).map((
        f,
      ) => [f.bank_date, f.cutoff_kind, f.effective_date, f.file_id_modifier]),
      [["2026-01-05", "next_day", "2026-01-06", "A"], [
        "2026-11-25",
        "next_day",
        "2026-11-27",
        "A",
      ]],
    );
    assert.deepEqual(await statuses(m, [monday, thanksgiving]), ["completed", "funds_sent"]);
    // Effective Friday 11-27: two banking days later is Tuesday 12-01, at 17:00 New York.
    await m.advance((Date.UTC(2026, 11, 1, 22) - m.now()) / 1000 - 1);
    assert.equal((await m.payout(thanksgiving)).status, "funds_sent");
    await m.advance(1);
    assert.equal((await m.payout(thanksgiving)).status, "completed");
  });
});

Deno.test("several files in one day take modifiers A and B, and no trace repeats across them", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(1_000_000);
    const first = await chooseAch(m, [10_000, 20_000]);
    await m.advance(31 * MINUTE_SECONDS);
    const created = await m.create([{ payeeUuid: "later", amountCents: 30_000 }]);
    assert.ok(created.ok);
    await m.settle();
    const later = created.value.payouts[0].id;
    assert.ok((await m.select(later, 1, { accountNumber: "000123456789" })).ok);
    await m.advance((SECOND_CUTOFF - m.now()) / 1000);
    assert.deepEqual(
      (await batches(m)).map((b) => [b.rail_reference, b.cutoff_at, b.status]),
      [
        [fileNameOf("2026-01-05", "A"), FIRST_CUTOFF, "transmitted"],
        [fileNameOf("2026-01-05", "B"), SECOND_CUTOFF, "transmitted"],
      ],
    );
    assert.deepEqual(bank.received.map((u) => u.fileName), [
      fileNameOf("2026-01-05", "A"),
      fileNameOf("2026-01-05", "B"),
    ]);
    const traces = (await entryFacts(m)).map((e) => e.trace_number);
    assert.deepEqual(traces, [`${ODFI}0000001`, `${ODFI}0000002`, `${ODFI}0000006`]);
    assert.equal(new Set(traces).size, 3);
    assert.deepEqual(await statuses(m, [...first, later]), Array(3).fill("funds_sent"));
  });
});

Deno.test("the file's check refuses a file whose entry differs from its payout: it stays built with the reason, nothing goes to the bank", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(1_000_000);
    const [good, corrupted] = await chooseAch(m, [10_000, 25_000]);
    await m.database.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE rail_batch_entries SET amount_cents = amount_cents + 1 WHERE payout_id = ?",
        args: [corrupted],
      })
    );
    const logged = await logLines(() => m.advance(30 * MINUTE_SECONDS));
    const [batch] = await batches(m);
    assert.deepEqual([batch.status, batch.error], [
      "built",
      "the file does not match its entries: credits: the database says 35000, the file has 35001",
    ]);
    assert.deepEqual(await files(m), [], "no file is kept");
    assert.equal(bank.received.length, 0);
    assert.deepEqual(
      await rows(
        m,
        "SELECT kind FROM scheduled_jobs WHERE kind = 'rail.transmit'",
      ),
      [],
    );
    assert.deepEqual(await statuses(m, [good, corrupted]), [
      "modality_selected",
      "modality_selected",
    ]);
    assert.ok(
      logged.some((line) => JSON.parse(line).msg.startsWith("an ACH file was not released")),
    );
    assert.equal((await m.balances()).in_transit, 0);
  });
});

Deno.test("an operator voids a built file: its entries are queued again under new references and go in the next cutoff's file with new traces and effective date", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(1_000_000);
    await m.advance(4 * 60 * MINUTE_SECONDS); // 14:00 New York
    const [id] = await chooseAch(m, [10_000]);
    bank.answers.push({ kind: "not_uploaded", reason: "connection refused" });
    await m.advance(45 * MINUTE_SECONDS); // the 14:45 file is refused once and waits for its retry
    const [built] = await batches(m);
    assert.equal(built.status, "built");
    const voided = await voidAchFile(fileDeps(m), OPERATOR, String(built.id), m.now());
    assert.deepEqual(voided, {
      ok: true,
      value: { fileId: built.id, status: "voided", approvalId: null },
    });
    assert.deepEqual(
      (await entryFacts(m)).map((e) => [e.reference, e.status, e.trace_number]),
      [[`${id}-1`, "voided", `${ODFI}0000001`], [`${id}-2`, "queued", null]],
    );
    const [audit] = await auditRows(m);
    assert.deepEqual([audit.action, audit.operator_email, audit.origin, audit.object_id], [
      "ach:void",
      "ops@example.test",
      "cli",
      built.id,
    ]);
    assert.equal(JSON.parse(String(audit.after)).entries_queued_again, 1);
    await m.advance((Date.UTC(2026, 0, 5, 22) - m.now()) / 1000); // 17:00 New York: next-day
    assert.deepEqual(
      (await files(m)).map((f) => [f.file_id_modifier, f.cutoff_kind, f.effective_date, f.status]),
      [["A", "same_day", "2026-01-05", "voided"], ["B", "next_day", "2026-01-06", "transmitted"]],
    );
    assert.deepEqual(
      (await entryFacts(m)).map((e) => [e.reference, e.status, e.trace_number]),
      [[`${id}-1`, "voided", `${ODFI}0000001`], [`${id}-2`, "sent", `${ODFI}0000005`]],
    );
    assert.deepEqual(bank.received.map((u) => [u.fileName, u.attempt]), [
      [fileNameOf("2026-01-05", "A"), 1],
      [fileNameOf("2026-01-05", "B"), 1],
    ]);
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.rail_reference], ["funds_sent", `${id}-2`]);
    assert.deepEqual(await m.events(id), ["created", "offered", "selected", "processing"]);
    const again = await voidAchFile(fileDeps(m), OPERATOR, String(built.id), m.now());
    assert.ok(!again.ok && again.code === "ach_file_not_built");
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a file the bank does not take before its window closes is voided by the system and its entries go in the next cutoff's file", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(1_000_000);
    const [id] = await chooseAch(m, [10_000]);
    for (let i = 0; i < 5; i++) {
      bank.answers.push({ kind: "not_uploaded", reason: "connection refused" });
    }
    // Tries at 10:30:00, :05, :35, 10:32:35 and 10:42:35; the next would be after 11:00.
    await m.advance(30 * MINUTE_SECONDS + 13 * MINUTE_SECONDS);
    assert.deepEqual(bank.received.map((u) => u.attempt), [1, 2, 3, 4, 5]);
    const [voided] = await batches(m);
    assert.equal(voided.status, "voided");
    assert.match(
      String(voided.error),
      /^the transmission window closed before the bank took the file/,
    );
    const [audit] = await auditRows(m);
    assert.deepEqual([audit.action, audit.operator_email, audit.origin, audit.object_id], [
      "ach:void",
      null,
      "system",
      voided.id,
    ]);
    assert.equal((await m.payout(id)).status, "modality_selected");
    await m.advance((SECOND_CUTOFF - m.now()) / 1000); // the 14:45 cutoff
    assert.deepEqual(
      (await batches(m)).map((b) => [b.rail_reference, b.status]),
      [[fileNameOf("2026-01-05", "A"), "voided"], [fileNameOf("2026-01-05", "B"), "transmitted"]],
    );
    assert.equal((await m.payout(id)).status, "funds_sent");
  });
});

Deno.test("an upload that ends without an answer leaves the file in doubt: never uploaded again, resolved by an operator", async () => {
  await withScriptedBank(async ({ m, bank, clock }) => {
    await m.fund(1_000_000);
    const ids = await chooseAch(m, [10_000, 20_000]);
    bank.answers.push(new Error("the connection dropped during the put"));
    await quietly(() => m.advance(30 * MINUTE_SECONDS));
    assert.deepEqual((await batches(m)).map((b) => b.status), ["transmitting"]);
    clock.advance(BATCH_TRANSMIT_LEASE_MS);
    await quietly(() => m.advance(MINUTE_SECONDS));
    const [batch] = await batches(m);
    assert.equal(batch.status, "in_doubt");
    assert.equal(bank.received.length, 1, "uploaded once");
    await m.advance(DAY_SECONDS);
    assert.equal(bank.received.length, 1, "still once a day later");
    assert.deepEqual(await statuses(m, ids), ["modality_selected", "modality_selected"]);

    const notInDoubt = await voidAchFile(fileDeps(m), OPERATOR, String(batch.id), m.now());
    assert.ok(!notInDoubt.ok && notInDoubt.code === "ach_file_not_built");
    const resolved = await resolveAchFile(
      fileDeps(m),
      OPERATOR,
      String(batch.id),
      "transmitted",
      m.now(),
    );
    assert.deepEqual(resolved, {
      ok: true,
      value: { fileId: batch.id, status: "transmitted", approvalId: null },
    });
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "funds_sent"]);
    assert.deepEqual((await auditRows(m)).map((a) => a.action), ["ach:resolve"]);
    await m.advance(3 * DAY_SECONDS);
    assert.deepEqual(await statuses(m, ids), ["completed", "completed"]);
    assert.equal(bank.received.length, 1);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a return naming an entry of an in-doubt file proves the bank has it: the file is resolved as transmitted and the return fails that payout; the other completes", async () => {
  await withScriptedBank(async ({ m, bank, clock }) => {
    await m.fund(1_000_000);
    const [returnedId, paidId] = await chooseAch(m, [10_000, 20_000]);
    bank.answers.push(new Error("the connection dropped during the put"));
    await quietly(() => m.advance(30 * MINUTE_SECONDS));
    clock.advance(BATCH_TRANSMIT_LEASE_MS);
    await quietly(() => m.advance(MINUTE_SECONDS));
    const [batch] = await batches(m);
    assert.equal(batch.status, "in_doubt");
    const [entry] = await rows(
      m,
      "SELECT id, trace_number, amount_cents FROM rail_batch_entries WHERE payout_id = ?",
      returnedId,
    );
    const imported = await importReturnR03(m, returnedId, entry);
    assert.ok(imported.ok);
    assert.deepEqual([imported.value.applied, imported.value.notApplied], [1, []]);
    assert.equal((await batches(m))[0].status, "transmitted");
    assert.deepEqual(
      (await auditRows(m)).map((a) => [a.action, a.origin]),
      [["ach:resolve", "bank file naming the entry"]],
    );
    assert.equal((await m.payout(paidId)).status, "funds_sent");
    assert.notEqual((await m.payout(returnedId)).status, "funds_sent");
    await m.advance(3 * DAY_SECONDS);
    assert.equal((await m.payout(paidId)).status, "completed");
    assert.notEqual((await m.payout(returnedId)).status, "completed");
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a return naming an entry of an in-doubt file beyond the first unit of its send applies: that entry is sent with the resolution, the rest by the send", async () => {
  await withScriptedBank(async ({ m, bank, clock }) => {
    await m.fund(100_000_000);
    const count = SEND_ENTRIES_PER_UNIT_MAX + 5;
    const ids = await chooseAch(m, Array.from({ length: count }, () => 1_000));
    bank.answers.push(new Error("the connection dropped during the put"));
    await quietly(() => m.advance(30 * MINUTE_SECONDS));
    clock.advance(BATCH_TRANSMIT_LEASE_MS);
    await quietly(() => m.advance(MINUTE_SECONDS));
    assert.equal((await batches(m))[0].status, "in_doubt");
    // The file's last entry: the resolution's own unit sends only the first unit's worth.
    const [entry] = await rows(
      m,
      `SELECT id, payout_id, trace_number, amount_cents FROM rail_batch_entries
        ORDER BY trace_number DESC LIMIT 1`,
    );
    const returnedId = String(entry.payout_id);
    const imported = await importReturnR03(m, returnedId, entry);
    assert.ok(imported.ok);
    assert.deepEqual([imported.value.applied, imported.value.notApplied], [1, []]);
    assert.equal((await batches(m))[0].status, "transmitted");
    assert.notEqual((await m.payout(returnedId)).status, "funds_sent");
    await m.advance(MINUTE_SECONDS);
    const others = ids.filter((id) => id !== returnedId);
    assert.deepEqual(new Set(await statuses(m, others)), new Set(["funds_sent"]));
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

/** The database with a read of a file's entries that fails once, as a process stopping mid-build. */
function failingBuildRead(database: Database, state: { failed: boolean }): Database {
  const readClient = new Proxy(database.readClient, {
    get(target, property, receiver) {
      if (property !== "execute") return Reflect.get(target, property, receiver);
      return (statement: InStatement) => {
        const sql = typeof statement === "string" ? statement : statement.sql;
        if (!state.failed && sql.includes("FROM rail_batch_entries e")) {
          state.failed = true;
          return Promise.reject(new TransientJobError("the process stopped during the build"));
        }
        return target.execute(statement);
      };
    },
  });
  return { ...database, readClient, writer: database.writer, read: database.read };
}

Deno.test("crash window of the cutoff: entries claimed, the file not yet recorded; the next run builds the same batch once with the same traces", async () => {
  const state = { failed: false };
  await withScriptedBank(async ({ m, bank, clock }) => {
    await m.fund(1_000_000);
    const ids = await chooseAch(m, [10_000, 20_000]);
    await quietly(() => m.advance(30 * MINUTE_SECONDS));
    assert.ok(state.failed);
    const [claimed] = await batches(m);
    assert.deepEqual([claimed.status, claimed.error], ["built", null]);
    assert.deepEqual(await files(m), []);
    const tracesBefore = (await entryFacts(m)).map((e) => [e.status, e.trace_number]);
    assert.deepEqual(tracesBefore, [["batched", `${ODFI}0000001`], ["batched", `${ODFI}0000002`]]);

    // More entries queued meanwhile do not join the claimed file.
    const created = await m.create({ payeeUuid: "meanwhile", amountCents: 5_000 });
    assert.ok(created.ok);
    await m.settle();
    const meanwhile = created.value.payouts[0].id;
    assert.ok((await m.select(meanwhile, 1, { accountNumber: "000123456789" })).ok);

    clock.advance(CUTOFF_LEASE_MS);
    await m.advance(MINUTE_SECONDS);
    const all = await batches(m);
    assert.deepEqual(all.map((b) => [b.id, b.status]), [[claimed.id, "transmitted"]]);
    assert.equal((await files(m)).length, 1);
    assert.deepEqual(
      (await entryFacts(m)).slice(0, 2).map((e) => [e.status, e.trace_number]),
      [["sent", `${ODFI}0000001`], ["sent", `${ODFI}0000002`]],
    );
    assert.equal(bank.received.length, 1);
    assert.deepEqual(await statuses(m, [...ids, meanwhile]), [
      "funds_sent",
      "funds_sent",
      "modality_selected",
    ]);
    await m.advance((SECOND_CUTOFF - m.now()) / 1000); // the 14:45 cutoff takes the later one
    assert.equal((await m.payout(meanwhile)).status, "funds_sent");
  }, { wrapDatabase: (database) => failingBuildRead(database, state) });
});

Deno.test("the cutoff's claim is set-based: 300 entries get consecutive traces and one file", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(100_000_000);
    const count = 300;
    await chooseAch(m, Array.from({ length: count }, () => 1_000));
    await m.advance(30 * MINUTE_SECONDS);
    const [file] = await files(m);
    assert.deepEqual([file.entry_count, file.credit_total_cents, file.status], [
      count,
      count * 1_000,
      "transmitted",
    ]);
    assert.equal(bank.received.length, 1);
    const traces = await rows(
      m,
      "SELECT count(DISTINCT trace_number) AS n, min(trace_number) AS lo, max(trace_number) AS hi FROM rail_batch_entries",
    );
    assert.deepEqual(traces, [{ n: count, lo: `${ODFI}0000001`, hi: `${ODFI}0000300` }]);
  });
});

Deno.test("file actions refuse what does not apply: a missing file, mark-sent of a file the sandbox bank takes", async () => {
  await withScriptedBank(async ({ m }) => {
    const missing = await voidAchFile(fileDeps(m), OPERATOR, "rbt_missing", m.now());
    assert.deepEqual(missing, {
      ok: false,
      code: "ach_file_not_found",
      message: "no ACH file rbt_missing",
      field: "file",
    });
    await m.fund(1_000_000);
    await chooseAch(m, [10_000]);
    await m.advance(30 * MINUTE_SECONDS);
    const [batch] = await batches(m);
    const sent = await markAchFileSent(fileDeps(m), OPERATOR, String(batch.id), m.now());
    assert.ok(!sent.ok && sent.code === "ach_file_not_built");
    const content = await readAchFileContent(fileDeps(m), String(batch.id), m.now());
    assert.ok(content.ok);
    assert.equal(content.value.sha256, await sha256Hex(content.value.content));
  });
});

Deno.test("live: a file over the approval limit waits built until a second admin approves its release, then goes to the bank", async () => {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-ach-release-" });
  const database = await openTempDatabase(dir, "live");
  const clock = new FakeClock(START);
  const bank = new ScriptedBank();
  const handlers = jobHandlersOf(
    "live",
    { ...MONEY_SETTINGS, rails: { achTransport: bank } },
    database,
    testSecretBox,
  );
  const run = (until: number) => runDueJobs(database, "co_live", until, handlers, { clock });
  try {
    const payoutId = await database.writer.write(async (tx) => {
      const statements = [
        "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_live', 'Acme', '123456789', ?)",
        "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_live', 'co_live', 'auto', ?)",
        `INSERT INTO operators (id, email, role, password_hash, created_at)
           VALUES ('op_a', 'a@example.test', 'admin', 'x', ?), ('op_b', 'b@example.test', 'admin', 'x', ?)`,
        `INSERT INTO sanctions_lists (id, sha256, entry_count, file_name, loaded_at)
           VALUES ('sdn_empty', 'none', 0, 'sdn.csv', ?)`,
      ];
      for (const sql of statements) {
        await tx.execute({ sql, args: sql.includes("op_b") ? [START, START] : [START] });
      }
      await saveBankSettings(
        tx,
        testSecretBox,
        "co_live",
        sandboxBankSettings("ACME"),
        null,
        START,
      );
      const wire = await addFunds(
        tx,
        {
          companyId: "co_live",
          lineId: "line_live",
          paymentMethod: "WireTransfer",
          amountCents: 50_000_000,
          description: "wire",
          largeDisbursement: false,
          requestFingerprint: "w",
        },
        "live",
        START,
      );
      assert.ok(wire.ok);
      assert.ok((await receiveWire(tx, wire.value.funding.id, START)).ok);
      const created = await createDisbursement(tx, {
        companyId: "co_live",
        lineId: "line_live",
        kind: "disbursement",
        externalUuid: "D-LARGE",
        requestFingerprint: "x",
        largeDisbursement: false,
        payouts: [{
          payeeUuid: "p0",
          amountCents: 20_000_000,
          allowedPaymentMethodIds: [1],
          payee: { email: "noaction@example.test" },
        }],
      }, START);
      assert.ok(created.ok);
      return created.value.payouts[0].id;
    });
    await run(START);
    const selected = await database.writer.write(async (tx) =>
      selectMethod(tx, payoutId, {
        paymentMethodId: 1,
        details: { accountNumber: "000123456789" },
        kept: {
          routing_number: "021000021",
          account_type: "checking",
          account_sealed: await testSecretBox.sealText("000123456789"),
        },
      }, START)
    );
    assert.ok(selected.ok);
    await run(FIRST_CUTOFF);
    const [built] =
      (await database.readClient.execute("SELECT id, status, rail_reference FROM rail_batches"))
        .rows;
    assert.equal(built.status, "built");
    assert.equal(bank.received.length, 0, "it waits for its release");

    const deps = moneyBatchDeps(database, "live");
    const requester = { operator: { id: "op_a", email: "a@example.test" }, origin: "cli" };
    const requested = await requestAchFileRelease(deps, requester, String(built.id), FIRST_CUTOFF);
    assert.ok(requested.ok && requested.value.approvalId !== null);
    await run(FIRST_CUTOFF);
    assert.equal(bank.received.length, 0, "requested is not approved");
    const approved = await approveApproval(
      { databases: { test: database, live: database }, secretBox: testSecretBox, dev: false },
      { operator: { id: "op_b", email: "b@example.test" }, origin: "cli" },
      requested.value.approvalId!,
      FIRST_CUTOFF + 60_000,
      approvedActions,
    );
    assert.ok(approved.ok, JSON.stringify(approved));
    await run(FIRST_CUTOFF + 60_000);
    assert.deepEqual(bank.received.map((u) => [u.fileName, u.attempt]), [[
      String(built.rail_reference),
      1,
    ]]);
    const payout = await database.readClient.execute({
      sql: "SELECT status FROM payouts WHERE id = ?",
      args: [payoutId],
    });
    assert.equal(payout.rows[0].status, "funds_sent");
    const audit = await database.readClient.execute("SELECT action FROM audit_log ORDER BY seq");
    assert.deepEqual(audit.rows.map((row) => row.action), [
      "approval:request",
      "ach:release",
      "approval:approve",
    ]);
  } finally {
    await database.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a balanced file gives each batch an offset entry to the settlement account; the file's totals of record leave the offsets out", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.database.writer.write((tx) =>
      saveBankSettings(
        tx,
        testSecretBox,
        m.companyId,
        { ...sandboxBankSettings("ACME"), balancedFile: true },
        null,
        START,
      )
    );
    await m.fund(1_000_000);
    await m.fund(50_000, "ACH");
    await chooseAch(m, [25_000]);
    await m.advance(30 * MINUTE_SECONDS);
    const [file] = await files(m);
    assert.deepEqual([file.entry_count, file.credit_total_cents, file.debit_total_cents], [
      2,
      25_000,
      50_000,
    ]);
    const checked = checkNachaFile(await contentOf(m, String(file.batch_id)), { odfi: ODFI });
    assert.ok(checked.ok);
    assert.deepEqual(
      checked.value.batches.map((batch) =>
        batch.entries.map((e) => [e.transactionCode, e.accountNumber, e.amountCents])
      ),
      [
        [[22, "000123456789", 25_000], [27, "000900000002", 25_000]],
        [[27, "000900000001", 50_000], [22, "000900000002", 50_000]],
      ],
    );
    assert.deepEqual([checked.value.creditTotalCents, checked.value.debitTotalCents], [
      75_000,
      75_000,
    ]);
    assert.equal(file.status, "transmitted");
  });
});
