/**
 * Outcomes in any order, each applied once (issue 28, cases 2 and 8): the same notice of change
 * in a second file is not applied again and the payee is told once; a notice after a return
 * changes nothing; a return twice is applied once; a settlement after a return moves nothing;
 * an early return that a second runner's settlement overtakes still fails the payout.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import type { WriteUnit } from "../db/writer.ts";
import { SANDBOX_RETURNED_ACCOUNT } from "../lib/ach/sandbox_bank.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { noticeOf, returnOf, withImports } from "./ach_import_helpers.ts";
import { chooseAch, rows, statuses, withScriptedBank } from "./ach_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { DAY_SECONDS, MONEY_SETTINGS } from "./money_core_helpers.ts";

const detailsChanged =
  "SELECT count(*) AS n FROM notifications WHERE payout_id = ? AND subject = 'Acme: your bank details were updated'";

Deno.test("case 8: the same notice of change in a second file is not applied again and the payee is told once", async () => {
  await withImports(async (f) => {
    const sent = await f.credit({ account: "000111000001" });
    const notice = noticeOf(sent, "C01", { accountNumber: "000222000001" });
    const first = await f.import([notice], "NOC-1.txt");
    assert.ok(first.ok);
    assert.equal(first.value.applied, 1);
    // Another file (its own header, so another hash) carrying the same notice.
    const second = await f.import([notice, returnOf(await f.credit(), "R03")], "NOC-2.txt");
    assert.ok(second.ok);
    assert.equal(second.value.duplicate, false);
    assert.deepEqual(second.value.notApplied, [{ trace: sent.trace, reason: "already_corrected" }]);
    assert.deepEqual(await f.rows(detailsChanged, sent.payoutId), [{ n: 1 }]);
    assert.deepEqual(await f.rows("SELECT count(*) AS n FROM ach_corrections"), [{ n: 1 }]);
  });
});

Deno.test("a notice of change after a return, and a return twice, change nothing", async () => {
  await withImports(async (f) => {
    const sent = await f.credit({ account: "000111000009" });
    const returned = await f.import([returnOf(sent, "R03")], "RET-1.txt");
    assert.ok(returned.ok);
    assert.equal(returned.value.applied, 1);
    const before = await f.snapshot();
    const again = await f.import([
      returnOf(sent, "R03"),
      noticeOf(sent, "C01", { accountNumber: "000222000009" }),
    ], "RET-2.txt");
    assert.ok(again.ok);
    assert.deepEqual(again.value.notApplied, [
      { trace: sent.trace, reason: "already_returned" },
      { trace: sent.trace, reason: "already_returned" },
    ]);
    assert.deepEqual(await f.snapshot(), { ...before as object, imports: [{ n: 2 }] });
    assert.deepEqual(await f.rows(detailsChanged, sent.payoutId), [{ n: 0 }]);
    assert.deepEqual(await verifyLedger(f.database.readClient), []);
  });
});

Deno.test("case 2: an R03 at 09:00 fails its payout even when a second runner runs the 17:00 settlement while the return file is imported", async () => {
  let secondRunner: (() => Promise<void>) | null = null;
  await withScriptedBank(async ({ m, clock }) => {
    await m.fund(1_000_000);
    const [returned] = await chooseAch(m, [10_000], SANDBOX_RETURNED_ACCOUNT);
    const [settled] = await chooseAch(m, [20_000]);
    await m.advance(30 * 60); // the 10:30 cutoff: one file carries both
    assert.deepEqual(await statuses(m, [returned, settled]), ["funds_sent", "funds_sent"]);
    const handlers = jobHandlersOf("test", MONEY_SETTINGS, m.database, testSecretBox);
    // Wednesday 17:30: the sandbox bank's 09:00 return file and the 17:00 settlement are both
    // due. While the first runner imports the return file, a second one (another advance, the
    // background sweep) runs what it finds due.
    const until = m.now() + 2 * DAY_SECONDS * 1000 + 7 * 3_600_000;
    secondRunner = async () => {
      await runDueJobs(m.database, m.companyId, until, handlers, { perBatch: 32, clock });
    };
    await m.advance(until / 1000 - m.now() / 1000);
    assert.deepEqual(await statuses(m, [returned, settled]), ["modality_offered", "completed"]);
    assert.deepEqual(
      await rows(
        m,
        "SELECT from_status, to_status, detail FROM payout_transitions WHERE payout_id = ? ORDER BY id DESC LIMIT 2",
        returned,
      ),
      [
        { from_status: "failed", to_status: "modality_offered", detail: "re-offered after R03" },
        { from_status: "funds_sent", to_status: "failed", detail: "R03" },
      ],
    );
    assert.deepEqual(
      await rows(m, "SELECT count(*) AS n FROM scheduled_jobs WHERE error IS NOT NULL"),
      [{ n: 0 }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  }, {
    wrapDatabase: (database) => {
      const write = database.writer.write.bind(database.writer);
      const writer = Object.create(database.writer);
      // The import's unit goes through the handlers' database: the second runner goes first.
      writer.write = async <T>(unit: WriteUnit<T>): Promise<T> => {
        const runner = secondRunner;
        secondRunner = null;
        if (runner) await runner();
        return await write(unit);
      };
      return { ...database, writer };
    },
  });
});

Deno.test("a return for a canceled payout's sent entry, and one naming an entry of a voided file, go to the rail exceptions queue; nothing else moves", async () => {
  await withImports(async (f) => {
    const canceled = await f.credit();
    // A cancel the previous rules let through while the entry was in the bank's hands.
    await f.database.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE payouts SET status = 'canceled' WHERE id = ?",
        args: [canceled.payoutId],
      })
    );
    const voided = await f.credit({ stage: "selected", entryStatus: "voided" });
    const imported = await f.import([returnOf(canceled, "R02"), returnOf(voided, "R03")]);
    assert.ok(imported.ok);
    assert.deepEqual([imported.value.applied, imported.value.notApplied], [1, [
      { trace: voided.trace, reason: "entry_voided" },
    ]]);
    assert.deepEqual(
      await f.rows(
        "SELECT payout_id, outcome, return_code, status FROM rail_exceptions ORDER BY rowid",
      ),
      [
        { payout_id: canceled.payoutId, outcome: "failed", return_code: "R02", status: "open" },
        { payout_id: voided.payoutId, outcome: "failed", return_code: "R03", status: "open" },
      ],
    );
    assert.deepEqual(
      await f.rows(
        "SELECT status, return_code FROM rail_batch_entries WHERE id = ?",
        canceled.entryId,
      ),
      [{ status: "failed", return_code: "R02" }],
      "returned: the settlement will not complete it",
    );
    assert.deepEqual(await f.rows("SELECT status FROM payouts WHERE id = ?", canceled.payoutId), [
      { status: "canceled" },
    ]);
  });
});
