/**
 * Funding debits (issue 28, case 5): an ACH funding's debit the bank takes back after it cleared
 * posts to the ledger, from available as far as it goes and the rest owed in funding_shortfall;
 * the line's new payouts wait until a credit covers it; ledger:verify and the tie-out hold. A
 * manual funding:return of a debit already in a file is refused, saying why.
 */
import assert from "node:assert/strict";
import { routingCheckDigit } from "../lib/ach/sandbox_bank.ts";
import { importAchFile } from "../lib/ach/imports.ts";
import { recordManualFundingMove } from "../lib/funding/service.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { chooseAch, rows, withScriptedBank } from "./ach_helpers.ts";
import { returnFile, returnOf } from "./ach_import_helpers.ts";
import { DAY_SECONDS, moneyBatchDeps } from "./money_core_helpers.ts";

Deno.test("case 5: a funding debit returned after it cleared goes back from available, the rest is owed, new payouts wait until a credit covers it; the ledger and the tie-out hold", async () => {
  await withScriptedBank(async ({ m }) => {
    const fundingId = await m.fund(500_000, "ACH");
    await m.advance(30 * 60); // 10:30: the debit goes in the day's file
    await m.advance(3 * DAY_SECONDS); // its return window closes: the funding clears
    assert.deepEqual(await rows(m, "SELECT status FROM fundings WHERE id = ?", fundingId), [{
      status: "Completed",
    }]);
    await chooseAch(m, [400_000]);
    const before = await m.balances();
    assert.equal(before.available, 500_000 - 400_000);

    const [debit] = await rows(
      m,
      "SELECT id, trace_number, receiving_dfi FROM rail_batch_entries WHERE funding_id = ?",
      fundingId,
    );
    const dfi = String(debit.receiving_dfi);
    const imported = await importAchFile(
      moneyBatchDeps(m.database, "test"),
      {
        content: new TextEncoder().encode(returnFile([
          returnOf(
            {
              fundingId,
              entryId: String(debit.id),
              trace: String(debit.trace_number),
              amountCents: 500_000,
            },
            "R10",
            { routing: dfi + routingCheckDigit(dfi) },
          ),
        ])),
        fileName: "RETURNS-R10.txt",
        source: "cli",
        importedBy: null,
      },
      m.now(),
    );
    assert.ok(imported.ok);
    assert.deepEqual([imported.value.applied, imported.value.notApplied], [1, []]);
    assert.deepEqual(await m.balances(), {
      ...before,
      available: 0,
      funding_shortfall: -400_000,
      bank: before.bank + 500_000,
    });
    assert.deepEqual(await rows(m, "SELECT status FROM fundings WHERE id = ?", fundingId), [{
      status: "Returned",
    }]);

    const held = await m.create({ amountCents: 100 });
    assert.deepEqual(held.ok ? null : [held.code, held.message], [
      "insufficient_funds",
      "the line owes $4,000.00 of an ACH funding the bank returned after it cleared; new payouts wait until a credit of the line covers it",
    ]);

    await m.fund(450_000); // a wire: its credit covers what is owed first
    assert.deepEqual(
      [(await m.balances()).available, (await m.balances()).funding_shortfall],
      [50_000, 0],
    );
    assert.ok((await m.create({ amountCents: 10_000 })).ok);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
    const day = new Date(m.now()).toISOString().slice(0, 10);
    assert.equal((await lineTieOut(m.database.readClient, m.lineId, day))!.difference, 0);
  });
});

Deno.test("case 5: a manual funding:return of a debit already in a file is refused, saying why, in a built file and a sent one", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    const fundingId = await m.fund(50_000, "ACH");
    bank.answers.push({ kind: "not_uploaded", reason: "the bank's server is down" });
    await m.advance(30 * 60); // 10:30: the file is built, its first upload refused
    const [file] = await rows(m, "SELECT id, status FROM rail_batches");
    assert.equal(file.status, "built");
    const returnByHand = () =>
      m.database.writer.write(
        async (tx): ReturnType<typeof recordManualFundingMove> => {
          const moved = await recordManualFundingMove(tx, "funding:return", fundingId, m.now());
          return moved.ok ? moved : tx.abort(moved);
        },
      );
    const inBuilt = await returnByHand();
    assert.deepEqual(inBuilt.ok ? null : [inBuilt.code, inBuilt.message], [
      "funding_in_file",
      `funding ${fundingId}'s debit is in ACH file ${file.id} (built): a return of it comes in the bank's return file and is applied when imported; void the file first if the bank must not collect it`,
    ]);
    await m.advance(5 * 60); // the upload is retried and taken
    const inSent = await returnByHand();
    assert.deepEqual(inSent.ok ? null : inSent.code, "funding_in_file");
    assert.match(inSent.ok ? "" : inSent.message, /\(transmitted\).*the file was sent/);
    assert.deepEqual(await rows(m, "SELECT status FROM fundings WHERE id = ?", fundingId), [{
      status: "Pending",
    }]);
  });
});

Deno.test("case 5: the tie-out counts an ACH funding as funded on the day its debit goes to the bank, not the day it was requested", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.advance(8 * 3600); // Monday 18:00 New York: after the day's last cutoff
    await m.fund(70_000, "ACH");
    const tieOut = (date: string) => lineTieOut(m.database.readClient, m.lineId, date);
    const monday = (await tieOut("2026-01-05"))!;
    assert.deepEqual([monday.funded, monday.closing, monday.difference], [0, 0, 0]);
    await m.advance(16 * 3600 + 30 * 60); // Tuesday 10:30 New York: the debit's file goes
    const tuesday = (await tieOut("2026-01-06"))!;
    assert.deepEqual([tuesday.funded, tuesday.closing, tuesday.difference], [70_000, 70_000, 0]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});
