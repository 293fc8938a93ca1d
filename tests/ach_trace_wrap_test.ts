/**
 * Trace numbers after 9,999,999 (issue 28, case 6): a wrap starts again at 1 but skips every trace
 * a return could still name, so the cutoff never parks on a collision; an old trace (past the
 * reuse horizon, settled) may name a new entry, and a return still finds its entry by original
 * trace, receiving DFI and amount.
 */
import assert from "node:assert/strict";
import { TRACE_REUSE_AFTER_DAYS } from "../lib/ach/files_store.ts";
import { importAchFile } from "../lib/ach/imports.ts";
import { chooseAch, rows, statuses, withScriptedBank } from "./ach_helpers.ts";
import { returnFile, returnOf } from "./ach_import_helpers.ts";
import { moneyBatchDeps } from "./money_core_helpers.ts";

const ODFI = "02100002";
const DAY_MS = 86_400_000;
const trace = (sequence: number) => `${ODFI}${String(sequence).padStart(7, "0")}`;

Deno.test("case 6: after 9,999,999 the traces start again at 1, past the traces still in use; nothing parks", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.fund(1_000_000);
    const [first] = await chooseAch(m, [10_000]);
    await m.advance(30 * 60); // 10:30: the first file takes traces 1 to 4 (1 entry, 3 offsets)
    assert.deepEqual(
      await rows(m, "SELECT trace_number FROM rail_batch_entries WHERE payout_id = ?", first),
      [{ trace_number: trace(1) }],
    );
    await m.database.writer.write((tx) =>
      tx.execute("UPDATE ach_trace_sequences SET next_sequence = 9999998")
    );
    const later = await chooseAch(m, [20_000, 30_000]);
    await m.advance(4 * 3600 + 15 * 60); // 14:45: 2 entries and 3 offsets do not fit 9,999,998-9
    assert.deepEqual(await statuses(m, later), ["funds_sent", "funds_sent"]);
    assert.deepEqual(
      await rows(
        m,
        `SELECT trace_number FROM rail_batch_entries WHERE payout_id IN (?, ?) ORDER BY trace_number`,
        ...later,
      ),
      [{ trace_number: trace(2) }, { trace_number: trace(3) }],
      "trace 1 still names the first entry (sent, in its return window): the range starts after it",
    );
    assert.deepEqual(
      await rows(m, "SELECT count(*) AS n FROM scheduled_jobs WHERE error IS NOT NULL"),
      [{ n: 0 }],
    );
  });
});

Deno.test("case 6: a trace past its reuse horizon names a new entry, and a return matches the new one by trace, DFI and amount", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.fund(1_000_000);
    const [old] = await chooseAch(m, [10_000]);
    await m.advance(30 * 60);
    // The first entry settled long ago: its trace may name another entry now.
    await m.database.writer.write((tx) =>
      tx.execute({
        sql:
          `UPDATE rail_batch_entries SET status = 'completed', created_at = ? WHERE payout_id = ?`,
        args: [m.now() - (TRACE_REUSE_AFTER_DAYS + 1) * DAY_MS, old],
      })
    );
    await m.database.writer.write((tx) =>
      tx.execute("UPDATE ach_trace_sequences SET next_sequence = 9999998")
    );
    const [fresh] = await chooseAch(m, [25_000], "000444555666");
    await m.advance(4 * 3600 + 15 * 60);
    const named = await rows(
      m,
      "SELECT payout_id, amount_cents FROM rail_batch_entries WHERE trace_number = ? ORDER BY created_at",
      trace(1),
    );
    assert.deepEqual(named.map((r) => r.payout_id), [old, fresh]);

    const imported = await importAchFile(
      moneyBatchDeps(m.database, "test"),
      {
        content: new TextEncoder().encode(returnFile([returnOf({
          payoutId: fresh,
          entryId: "",
          trace: trace(1),
          account: "000444555666",
          routing: "021000021",
          sentCents: 25_000,
        }, "R03")])),
        fileName: "RETURNS.txt",
        source: "cli",
        importedBy: null,
      },
      m.now(),
    );
    assert.ok(imported.ok);
    assert.deepEqual([imported.value.applied, imported.value.notApplied], [1, []]);
    assert.deepEqual(await statuses(m, [old, fresh]), ["funds_sent", "modality_offered"]);
  });
});
