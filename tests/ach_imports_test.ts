/**
 * Imports of return and notice-of-change files (issue 18): entries this service sent are set up
 * directly in a temporary database (tests/ach_import_helpers.ts), then real NACHA return files
 * are imported. Each test checks the report, the payout, the entry, the ledger (verifyLedger) and
 * that refused or unmatched entries changed nothing.
 */
import assert from "node:assert/strict";
import { correctedAccount } from "../lib/ach/corrections.ts";
import { importAchFile } from "../lib/ach/imports.ts";
import {
  ACH_IMPORT_BYTES_MAX,
  decideImportedEntry,
  type ImportedEntryFacts,
  type SentEntryFacts,
} from "../lib/ach/import_rules.ts";
import {
  SANDBOX_RETURNS_JOB,
  sandboxBankUpload,
  sandboxReturnsJob,
} from "../lib/ach/sandbox_bank.ts";
import { runDueJobs } from "../db/scheduler.ts";
import type { Correction } from "../lib/ach/nacha.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { clearAchFunding } from "../lib/funding/store.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { applyMove } from "../lib/payouts/store.ts";
import { testSecretBox } from "./helpers.ts";
import {
  COMPANY,
  LINE,
  noticeOf,
  NOW,
  ODFI,
  returnFile,
  returnOf,
  ROUTING,
  scheduleFileJob,
  type SentCredit,
  withImports,
} from "./ach_import_helpers.ts";

/** Runs `fn` with console.error captured, and returns the JSON lines it wrote. */
async function capturingErrors<T>(fn: () => Promise<T>): Promise<[T, Record<string, unknown>[]]> {
  const lines: Record<string, unknown>[] = [];
  const original = console.error;
  console.error = (line: string) => lines.push(JSON.parse(line));
  try {
    return [await fn(), lines];
  } finally {
    console.error = original;
  }
}

Deno.test("a return before settlement fails the payout with its R-code and offers it again; the ledger stays balanced", async () => {
  await withImports(async (f) => {
    const sent = await f.credit();
    const before = await readLineBalances(f.database.readClient, LINE);
    assert.deepEqual([before.available, before.in_transit], [10_000_000 - 10_175, 10_175]);

    const imported = await f.import([returnOf(sent, "R03")]);
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    const { importId, sha256, ...report } = imported.value;
    assert.match(importId, /^aci_/);
    assert.match(sha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(report, {
      duplicate: false,
      returns: 1,
      corrections: 0,
      applied: 1,
      notApplied: [],
    });

    const [payout] = await f.rows(
      "SELECT status, failure_reason, held_cents FROM payouts WHERE id = ?",
      sent.payoutId,
    );
    // Re-offered: the hold is back to the highest fees of the allowed methods (ACH's here).
    assert.deepEqual(payout, {
      status: "modality_offered",
      failure_reason: "R03",
      held_cents: 10_175,
    });
    assert.deepEqual(
      (await f.rows(
        "SELECT from_status, to_status FROM payout_transitions WHERE payout_id = ? ORDER BY rowid",
        sent.payoutId,
      )).slice(-2),
      [
        { from_status: "funds_sent", to_status: "failed" },
        { from_status: "failed", to_status: "modality_offered" },
      ],
    );
    assert.deepEqual(
      await f.rows("SELECT status, return_code FROM rail_batch_entries WHERE id = ?", sent.entryId),
      [{ status: "failed", return_code: "R03" }],
    );
    const after = await readLineBalances(f.database.readClient, LINE);
    assert.deepEqual([after.available, after.in_transit, after.reserved], [
      10_000_000 - 10_175,
      0,
      10_175,
    ]);
    assert.deepEqual(await verifyLedger(f.database.readClient), []);
    // The payee was told to choose again.
    assert.deepEqual(
      await f.rows(
        "SELECT recipient, subject FROM notifications WHERE payout_id = ?",
        sent.payoutId,
      ),
      [{ recipient: `payee1@example.test`, subject: "Acme: please choose another way to be paid" }],
    );
    assert.deepEqual(
      await f.rows(
        `SELECT company_id, source, file_name, return_count, correction_count, applied_count, report,
                imported_by FROM ach_imports`,
      ),
      [{
        company_id: COMPANY,
        source: "cli",
        file_name: "RETURNS.txt",
        return_count: 1,
        correction_count: 0,
        applied_count: 1,
        report: "[]",
        imported_by: "op_admin",
      }],
    );
  });
});

Deno.test("the same file imported twice: the second is a duplicate and changes nothing", async () => {
  await withImports(async (f) => {
    const sent = await f.credit();
    const first = await f.import([returnOf(sent, "R03")]);
    assert.ok(first.ok);
    const before = await f.snapshot();
    const second = await f.import([returnOf(sent, "R03")], "RETURNS-again.txt");
    assert.ok(second.ok);
    assert.deepEqual(second.value, { ...first.value, duplicate: true });
    assert.deepEqual(await f.snapshot(), before);
  });
});

Deno.test("unmatched traces, a different amount and another DFI are reported, logged and not applied", async () => {
  await withImports(async (f) => {
    const good = await f.credit();
    const other = await f.credit();
    const before = await f.snapshot();
    const unknownTrace = `${ODFI}9999999`;
    const [imported, logged] = await capturingErrors(() =>
      f.import([
        {
          ...returnOf(good, "R03"),
          original: { ...returnOf(good, "R03").original, traceNumber: unknownTrace },
        },
        returnOf(good, "R03", { amountCents: good.sentCents + 1 }),
        returnOf(other, "R03", { routing: "011000015" }),
      ])
    );
    assert.ok(imported.ok);
    assert.deepEqual(
      { ...imported.value, importId: "", sha256: "" },
      {
        importId: "",
        sha256: "",
        duplicate: false,
        returns: 3,
        corrections: 0,
        applied: 0,
        notApplied: [
          { trace: unknownTrace, reason: "unmatched_trace" },
          { trace: good.trace, reason: "amount_mismatch" },
          { trace: other.trace, reason: "dfi_mismatch" },
        ],
      },
    );
    assert.deepEqual(
      logged.map((line) => [line.level, line.trace, line.code, line.reason, line.file]),
      [
        ["warn", unknownTrace, "R03", "unmatched_trace", "RETURNS.txt"],
        ["warn", good.trace, "R03", "amount_mismatch", "RETURNS.txt"],
        ["warn", other.trace, "R03", "dfi_mismatch", "RETURNS.txt"],
      ],
    );
    const { imports, ...unchanged } = (await f.snapshot()) as Record<string, unknown>;
    const { imports: importsBefore, ...unchangedBefore } = before as Record<string, unknown>;
    assert.deepEqual(unchanged, unchangedBefore);
    assert.deepEqual([importsBefore, imports], [[{ n: 0 }], [{ n: 1 }]]);
    assert.deepEqual(await verifyLedger(f.database.readClient), []);
  });
});

Deno.test("another company's import does not reach this company's entries", async () => {
  await withImports(async (f) => {
    const sent = await f.credit();
    await f.database.writer.write((tx) =>
      tx.execute({
        sql:
          "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_other', 'Other', '987654321', ?)",
        args: [NOW],
      })
    );
    const before = await f.snapshot();
    const imported = await importAchFile(f.deps, {
      content: new TextEncoder().encode(returnFile([returnOf(sent, "R03")])),
      fileName: "OTHER.txt",
      source: "sftp",
      importedBy: null,
      companyId: "co_other",
    }, NOW);
    assert.ok(imported.ok);
    assert.deepEqual(imported.value.notApplied, [{ trace: sent.trace, reason: "unmatched_trace" }]);
    assert.deepEqual(
      (await f.snapshot() as { payouts: unknown }).payouts,
      (before as { payouts: unknown }).payouts,
    );
  });
});

Deno.test("a file that is not NACHA, and one over 10 MiB, are refused whole and write nothing", async () => {
  await withImports(async (f) => {
    await f.credit();
    const before = await f.snapshot();
    const notNacha = await importAchFile(f.deps, {
      content: new TextEncoder().encode("trace,code\n021000020000001,R03\n"),
      fileName: "returns.csv",
      source: "cli",
      importedBy: "op_admin",
    }, NOW);
    assert.equal(notNacha.ok, false);
    assert.equal(!notNacha.ok && notNacha.code, "malformed_file");
    assert.equal(!notNacha.ok && notNacha.field, "file");
    assert.match(!notNacha.ok ? notNacha.message : "", /^returns\.csv is not a NACHA file: /);

    const tooLarge = await importAchFile(f.deps, {
      content: new Uint8Array(ACH_IMPORT_BYTES_MAX + 1),
      fileName: "big.ach",
      source: "cli",
      importedBy: "op_admin",
    }, NOW);
    assert.deepEqual(tooLarge, {
      ok: false,
      code: "file_too_large",
      message: `big.ach is ${
        ACH_IMPORT_BYTES_MAX + 1
      } bytes; an imported ACH file is at most ${ACH_IMPORT_BYTES_MAX} bytes`,
      field: "file",
      details: { bytes: ACH_IMPORT_BYTES_MAX + 1, limit_bytes: ACH_IMPORT_BYTES_MAX },
    });
    // Exactly at the limit it is read (and refused only because it is not NACHA).
    const atLimit = await importAchFile(f.deps, {
      content: new Uint8Array(ACH_IMPORT_BYTES_MAX).fill(0x20),
      fileName: "limit.ach",
      source: "cli",
      importedBy: "op_admin",
    }, NOW);
    assert.equal(!atLimit.ok && atLimit.code, "malformed_file");
    assert.deepEqual(await f.snapshot(), before);
  });
});

Deno.test("a return for a voided entry, a canceled payout or an entry not sent yet is reported, not applied", async () => {
  await withImports(async (f) => {
    // A payout whose file was voided waits in the queue again, and may be canceled there.
    const voided = await f.credit({ stage: "selected", entryStatus: "voided" });
    const canceled = await f.credit({ stage: "selected", entryStatus: "voided" });
    const queued = await f.credit({ stage: "selected", entryStatus: "batched" });
    await f.database.writer.write(async (tx) => {
      for (const move of [{ kind: "rail_refused", reason: "x" }, { kind: "cancel" }] as const) {
        assert.ok((await applyMove(tx, canceled.payoutId, move, NOW)).ok);
      }
    });
    const before = await f.snapshot();
    const imported = await f.import([
      returnOf(voided, "R03"),
      returnOf(canceled, "R02"),
      returnOf(queued, "R03"),
    ]);
    assert.ok(imported.ok);
    assert.deepEqual(imported.value.notApplied, [
      { trace: voided.trace, reason: "entry_voided" },
      { trace: canceled.trace, reason: "payout_canceled" },
      { trace: queued.trace, reason: "entry_not_sent" },
    ]);
    assert.equal(imported.value.applied, 0);
    const { imports: _after, ...after } = await f.snapshot() as Record<string, unknown>;
    const { imports: _before, ...unchanged } = before as Record<string, unknown>;
    assert.deepEqual(after, unchanged);
  });
});

Deno.test("a late return after completion: the payout stays completed and its money is back in available", async () => {
  await withImports(async (f) => {
    const sent = await f.credit({ stage: "completed" });
    const before = await readLineBalances(f.database.readClient, LINE);
    assert.deepEqual(
      [before.available, before.bank, before.fees_payee],
      [10_000_000 - 10_175, -10_000_000 + 9_950, 50],
    );
    const imported = await f.import([returnOf(sent, "R10")]);
    assert.ok(imported.ok);
    assert.deepEqual([imported.value.applied, imported.value.notApplied], [1, []]);
    const after = await readLineBalances(f.database.readClient, LINE);
    assert.deepEqual(after, {
      ...before,
      available: before.available + 9_950,
      bank: before.bank - 9_950,
    });
    assert.deepEqual(
      await f.rows("SELECT status FROM payouts WHERE id = ?", sent.payoutId),
      [{ status: "completed" }],
    );
    assert.deepEqual(
      await f.rows("SELECT status, return_code FROM rail_batch_entries WHERE id = ?", sent.entryId),
      [{ status: "completed", return_code: "R10" }],
    );
    assert.deepEqual(
      await f.rows(
        "SELECT kind FROM ledger_transactions WHERE payout_id = ? ORDER BY rowid DESC LIMIT 1",
        sent.payoutId,
      ),
      [{ kind: "payout.late_return" }],
    );
    assert.deepEqual(await verifyLedger(f.database.readClient), []);

    // Another file returning it again: already returned, nothing moves.
    const again = await f.import([returnOf(sent, "R07")], "RETURNS-2.txt");
    assert.ok(again.ok);
    assert.deepEqual(again.value.notApplied, [{ trace: sent.trace, reason: "already_returned" }]);
    assert.deepEqual(await readLineBalances(f.database.readClient, LINE), after);
  });
});

Deno.test("a returned funding debit returns the funding; one returned after it settled goes back from available", async () => {
  await withImports(async (f) => {
    const debit = await f.debit(500_000);
    const before = await readLineBalances(f.database.readClient, LINE);
    assert.equal(before.pending_funding, 500_000);
    const imported = await f.import([returnOf(debit, "R01")]);
    assert.ok(imported.ok);
    assert.deepEqual([imported.value.applied, imported.value.notApplied], [1, []]);
    assert.deepEqual(
      await f.rows("SELECT status FROM fundings WHERE id = ?", debit.fundingId),
      [{ status: "Returned" }],
    );
    assert.deepEqual(
      await f.rows(
        "SELECT status, return_code FROM rail_batch_entries WHERE id = ?",
        debit.entryId,
      ),
      [{ status: "failed", return_code: "R01" }],
    );
    const after = await readLineBalances(f.database.readClient, LINE);
    assert.deepEqual(after, { ...before, pending_funding: 0, bank: before.bank + 500_000 });
    assert.deepEqual(await verifyLedger(f.database.readClient), []);

    // Returned after it cleared (issue 28, case 5): the money goes back to the bank from available.
    const settled = await f.debit(200_000, "completed");
    await f.database.writer.write((tx) => clearAchFunding(tx, settled.fundingId, NOW));
    const cleared = await readLineBalances(f.database.readClient, LINE);
    const late = await f.import([returnOf(settled, "R10")], "RETURNS-late.txt");
    assert.ok(late.ok);
    assert.deepEqual([late.value.applied, late.value.notApplied], [1, []]);
    assert.deepEqual(await readLineBalances(f.database.readClient, LINE), {
      ...cleared,
      available: cleared.available - 200_000,
      bank: cleared.bank + 200_000,
    });
    assert.deepEqual(
      await f.rows("SELECT status FROM fundings WHERE id = ?", settled.fundingId),
      [{ status: "Returned" }],
    );
  });
});

Deno.test("R01 on a credit is reported and not applied", async () => {
  await withImports(async (f) => {
    const sent = await f.credit();
    const imported = await f.import([returnOf(sent, "R01")]);
    assert.ok(imported.ok);
    assert.deepEqual(imported.value.notApplied, [{ trace: sent.trace, reason: "r01_on_credit" }]);
    assert.deepEqual(
      await f.rows("SELECT status FROM payouts WHERE id = ?", sent.payoutId),
      [{ status: "funds_sent" }],
    );
  });
});

Deno.test("notices of change C01, C02, C03, C05, C06 and C07 are kept sealed, applied to later entries, and the payee is told", async () => {
  await withImports(async (f) => {
    const c01 = await f.credit({ account: "000111000001" });
    const c02 = await f.credit({ account: "000111000002" });
    const c03 = await f.credit({ account: "000111000003" });
    const c05 = await f.credit({ account: "000111000005" });
    const c06 = await f.credit({ account: "000111000006" });
    const c07 = await f.credit({ account: "000111000007" });
    const untouched = await f.credit({ account: "000111000008" });
    const notices: [SentCredit, string, Correction][] = [
      [c01, "C01", { accountNumber: "000222000001" }],
      [c02, "C02", { routingNumber: "011000015" }],
      [c03, "C03", { routingNumber: "011000015", accountNumber: "000222000003" }],
      [c05, "C05", { accountType: "savings" }],
      [c06, "C06", { accountNumber: "000222000006", accountType: "savings" }],
      [c07, "C07", {
        routingNumber: "011000015",
        accountNumber: "000222000007",
        accountType: "savings",
      }],
    ];
    const before = await f.snapshot() as { payouts: unknown; balances: unknown };
    const imported = await f.import(notices.map(([sent, code, fix]) => noticeOf(sent, code, fix)));
    assert.ok(imported.ok);
    assert.deepEqual(
      [imported.value.returns, imported.value.corrections, imported.value.applied],
      [0, 6, 6],
    );
    assert.deepEqual(imported.value.notApplied, []);
    // Nothing moves: a notice of change is about later entries.
    const after = await f.snapshot() as { payouts: unknown; balances: unknown };
    assert.deepEqual([after.payouts, after.balances], [before.payouts, before.balances]);

    const stored = await f.rows(
      "SELECT routing_number, account_key, change_code, corrected_sealed FROM ach_corrections ORDER BY change_code",
    );
    assert.deepEqual(stored.map((row) => [row.routing_number, row.change_code]), [
      [ROUTING, "C01"],
      [ROUTING, "C02"],
      [ROUTING, "C03"],
      [ROUTING, "C05"],
      [ROUTING, "C06"],
      [ROUTING, "C07"],
    ]);
    for (const row of stored) {
      assert.doesNotMatch(`${row.account_key}${row.corrected_sealed}`, /000111|000222/);
    }

    const corrected = (account: string) =>
      f.database.writer.write((tx) =>
        correctedAccount(tx, testSecretBox, COMPANY, {
          routingNumber: ROUTING,
          accountNumber: account,
          accountType: "checking",
        })
      );
    assert.deepEqual(
      await Promise.all(notices.map(([sent]) => corrected(sent.account))),
      [
        { routingNumber: ROUTING, accountNumber: "000222000001", accountType: "checking" },
        { routingNumber: "011000015", accountNumber: "000111000002", accountType: "checking" },
        { routingNumber: "011000015", accountNumber: "000222000003", accountType: "checking" },
        { routingNumber: ROUTING, accountNumber: "000111000005", accountType: "savings" },
        { routingNumber: ROUTING, accountNumber: "000222000006", accountType: "savings" },
        { routingNumber: "011000015", accountNumber: "000222000007", accountType: "savings" },
      ],
    );
    assert.deepEqual(await corrected(untouched.account), {
      routingNumber: ROUTING,
      accountNumber: untouched.account,
      accountType: "checking",
    });
    // Another company's entries to the same account are not corrected.
    assert.deepEqual(
      await f.database.writer.write((tx) =>
        correctedAccount(tx, testSecretBox, "co_other", {
          routingNumber: ROUTING,
          accountNumber: c01.account,
          accountType: "checking",
        })
      ),
      { routingNumber: ROUTING, accountNumber: c01.account, accountType: "checking" },
    );

    const told = await f.rows(
      `SELECT payout_id, recipient, subject, status FROM notifications
        WHERE subject = 'Acme: your bank details were updated' ORDER BY recipient`,
    );
    assert.deepEqual(
      told.map((row) => row.payout_id).sort(),
      notices.map(([sent]) => sent.payoutId).sort(),
    );
    assert.ok(told.every((row) => row.status === "sent"));

    // A later notice for the same account builds on the first correction.
    const later = await f.import([noticeOf(c01, "C05", { accountType: "savings" })], "NOC-2.txt");
    assert.ok(later.ok);
    assert.equal(later.value.applied, 1);
    assert.deepEqual(await corrected(c01.account), {
      routingNumber: ROUTING,
      accountNumber: "000222000001",
      accountType: "savings",
    });
  });
});

Deno.test("an import that fails in a unit leaves nothing of that unit applied; the same file imported again completes it", async () => {
  await withImports(async (f) => {
    const first = await f.credit();
    const second = await f.credit();
    // Storage refuses the second payout's move (a payout that cannot take a return no longer
    // fails the import: that outcome goes to the rail exceptions queue).
    await f.database.writer.write((tx) =>
      tx.execute(
        `CREATE TRIGGER fail_second BEFORE UPDATE ON payouts WHEN OLD.id = '${second.payoutId}'
           BEGIN SELECT RAISE(ABORT, 'the disk failed'); END`,
      )
    );
    const before = await f.snapshot();
    const file = [returnOf(first, "R03"), returnOf(second, "R03")];
    await assert.rejects(() => f.import(file));
    // Only the claim committed: the import is unfinished at its first entry.
    assert.deepEqual(await f.snapshot(), { ...before as object, imports: [{ n: 1 }] });
    assert.deepEqual(
      await f.rows("SELECT applied_count, report, progress FROM ach_imports"),
      [{ applied_count: 0, report: "[]", progress: '{"entries_done":0,"companies":[]}' }],
    );
    assert.deepEqual(
      await f.rows("SELECT status FROM payouts WHERE id = ?", first.payoutId),
      [{ status: "funds_sent" }],
    );
    await f.database.writer.write((tx) => tx.execute("DROP TRIGGER fail_second"));
    const again = await f.import(file);
    assert.ok(again.ok);
    assert.deepEqual([again.value.duplicate, again.value.applied], [false, 2]);
    assert.deepEqual(
      await f.rows("SELECT applied_count, progress FROM ach_imports"),
      [{ applied_count: 2, progress: null }],
    );
  });
});

Deno.test("an unreadable entry is reported as malformed while the rest of the file applies", async () => {
  await withImports(async (f) => {
    const returned = await f.credit();
    const unreadable = await f.credit();
    const text = returnFile([returnOf(returned, "R03"), returnOf(unreadable, "R03")]);
    // The second return's addenda loses its reason code: R03 becomes X03.
    const lines = text.split("\r\n");
    const addenda = lines.findLastIndex((line) => line.startsWith("799R03"));
    lines[addenda] = `799X03${lines[addenda].slice(6)}`;
    const imported = await importAchFile(f.deps, {
      content: new TextEncoder().encode(lines.join("\r\n")),
      fileName: "PARTLY.txt",
      source: "console",
      importedBy: "op_admin",
    }, NOW);
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.deepEqual(
      [imported.value.returns, imported.value.applied, imported.value.notApplied],
      [1, 1, [{ trace: null, reason: "malformed" }]],
    );
    assert.deepEqual(
      await f.rows(
        "SELECT id, status FROM payouts WHERE id IN (?, ?) ORDER BY id = ?",
        returned.payoutId,
        unreadable.payoutId,
        unreadable.payoutId,
      ),
      [
        { id: returned.payoutId, status: "modality_offered" },
        { id: unreadable.payoutId, status: "funds_sent" },
      ],
    );
    const [row] = await f.rows("SELECT report FROM ach_imports");
    const report = JSON.parse(String(row.report));
    assert.deepEqual(report.map((entry: { reason: string; line: number }) => entry.reason), [
      "malformed",
    ]);
  });
});

Deno.test("the sandbox bank refuses the first transmission of a file carrying 000222222227, and only that one", () => {
  const accounts = ["000123456789", "000222222227"];
  assert.deepEqual(sandboxBankUpload("ACH_A.txt", accounts, 1), {
    kind: "not_uploaded",
    reason: "the sandbox bank refuses the first transmission of a file carrying 000222222227",
  });
  assert.deepEqual(sandboxBankUpload("ACH_A.txt", accounts, 2), {
    kind: "uploaded",
    remotePath: "sandbox://ACH_A.txt",
  });
  assert.deepEqual(sandboxBankUpload("ACH_B.txt", ["000123456789", "000111111116"], 1), {
    kind: "uploaded",
    remotePath: "sandbox://ACH_B.txt",
  });
});

Deno.test("the sandbox bank's return file: entries to 000111111116 come back R03 through the same import", async () => {
  await withImports(async (f) => {
    const returned = await f.credit({ account: "000111111116" });
    const settles = await f.credit({ account: "000123456789" });
    const completed = await f.credit({ account: "000111111116", stage: "completed" });
    const handlers = { [SANDBOX_RETURNS_JOB]: sandboxReturnsJob(f.deps) };
    const runReturns = async () => {
      await scheduleFileJob(f, SANDBOX_RETURNS_JOB);
      return await runDueJobs(f.database, COMPANY, NOW, handlers);
    };
    assert.equal(await runReturns(), 1);
    const state = async (payoutId: string) =>
      (await f.rows("SELECT status, failure_reason FROM payouts WHERE id = ?", payoutId))[0];
    assert.deepEqual(
      [
        await state(returned.payoutId),
        await state(settles.payoutId),
        await state(completed.payoutId),
      ],
      [
        { status: "modality_offered", failure_reason: "R03" },
        { status: "funds_sent", failure_reason: null },
        { status: "completed", failure_reason: null },
      ],
    );
    assert.deepEqual(
      await f.rows(
        `SELECT company_id, source, file_name, return_count, applied_count, report, imported_by
           FROM ach_imports`,
      ),
      [{
        company_id: COMPANY,
        source: "sandbox_bank",
        file_name: `RETURNS_${f.batchId}.txt`,
        return_count: 1,
        applied_count: 1,
        report: "[]",
        imported_by: null,
      }],
    );
    assert.deepEqual(
      await f.rows(
        "SELECT status, return_code FROM rail_batch_entries WHERE id = ?",
        returned.entryId,
      ),
      [{ status: "failed", return_code: "R03" }],
    );
    assert.deepEqual(await verifyLedger(f.database.readClient), []);

    // Run again: nothing left to return, so no file is written.
    assert.equal(await runReturns(), 1);
    assert.deepEqual(await f.rows("SELECT count(*) AS n FROM ach_imports"), [{ n: 1 }]);
    assert.deepEqual(
      await f.rows("SELECT error FROM scheduled_jobs WHERE kind = ?", SANDBOX_RETURNS_JOB),
      [{ error: null }, { error: null }],
    );
  });
});

Deno.test("which imported entry applies, and how: every rule in its order", () => {
  const sent: SentEntryFacts = {
    status: "sent",
    direction: "credit",
    receivingDfi: "01100001",
    amountCents: 9_950,
    returnCode: null,
    payoutStatus: "funds_sent",
  };
  const returned: ImportedEntryFacts = {
    kind: "return",
    code: "R03",
    receivingDfi: "01100001",
    amountCents: 9_950,
  };
  const notice: ImportedEntryFacts = {
    ...returned,
    kind: "correction",
    code: "C01",
    amountCents: 0,
  };
  const debit: SentEntryFacts = { ...sent, direction: "debit", payoutStatus: null };
  const cases: [string, ImportedEntryFacts, SentEntryFacts | null, string][] = [
    ["no such trace", returned, null, "unmatched_trace"],
    [
      "another DFI (checked before the amount)",
      { ...returned, receivingDfi: "02100002", amountCents: 1 },
      sent,
      "dfi_mismatch",
    ],
    ["another amount", { ...returned, amountCents: 9_951 }, sent, "amount_mismatch"],
    ["a canceled payout (before its entry's state)", returned, {
      ...sent,
      status: "voided",
      payoutStatus: "canceled",
    }, "payout_canceled"],
    [
      "a voided entry",
      returned,
      { ...sent, status: "voided", payoutStatus: "modality_selected" },
      "entry_voided",
    ],
    // The bank returned what it was sent for a payout canceled meanwhile: the entry is returned,
    // and the outcome goes to the rail exceptions queue (the payout cannot take it).
    ["a sent entry of a canceled payout", returned, {
      ...sent,
      payoutStatus: "canceled",
    }, "return"],
    ["a queued entry", returned, { ...sent, status: "queued" }, "entry_not_sent"],
    ["a batched entry", returned, { ...sent, status: "batched" }, "entry_not_sent"],
    [
      "returned before",
      returned,
      { ...sent, status: "failed", returnCode: "R03" },
      "already_returned",
    ],
    [
      "returned late before",
      returned,
      { ...sent, status: "completed", returnCode: "R10" },
      "already_returned",
    ],
    ["R01 on a credit", { ...returned, code: "R01" }, sent, "r01_on_credit"],
    ["R01 on a debit", { ...returned, code: "R01" }, debit, "debit_return"],
    [
      "a debit after it settled",
      returned,
      { ...debit, status: "completed" },
      "debit_return_after_clear",
    ],
    ["a credit before settlement", returned, sent, "return"],
    ["a credit after settlement", returned, {
      ...sent,
      status: "completed",
      payoutStatus: "completed",
    }, "late_return"],
    [
      "a notice of change, any amount of the entry",
      notice,
      { ...sent, amountCents: 1 },
      "correction",
    ],
    [
      "a notice of change after a return (changes nothing: the payout was offered again)",
      notice,
      { ...sent, status: "failed", returnCode: "R03" },
      "already_returned",
    ],
    ["a notice of change of the funding account", notice, debit, "company_account_correction"],
    [
      "a notice of change to another DFI",
      { ...notice, receivingDfi: "02100002" },
      sent,
      "dfi_mismatch",
    ],
    ["a notice of change of a voided entry", notice, { ...sent, status: "voided" }, "entry_voided"],
  ];
  for (const [name, imported, facts, expected] of cases) {
    const decided = decideImportedEntry(imported, facts);
    assert.equal(decided.ok ? decided.value : decided.code, expected, name);
  }
});
