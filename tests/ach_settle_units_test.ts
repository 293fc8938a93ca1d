/**
 * A catastrophe day's file settles in bounded units, as it is sent: at the end of the return
 * window its payouts complete a page per unit, set-based, with requests answered between units;
 * a return imported while the settlement runs still fails its payout.
 */
import assert from "node:assert/strict";
import { scheduleJob } from "../db/scheduler_store.ts";
import { SANDBOX_RETURNS_JOB } from "../lib/ach/sandbox_bank.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { releaseHeldSettlements } from "../lib/rails/outcome_fence.ts";
import { SEND_ENTRIES_PER_UNIT_MAX } from "../lib/rails/batch.ts";
import {
  batches,
  chooseAch,
  importReturnR03,
  notingUnits,
  rows,
  statuses,
  withScriptedBank,
} from "./ach_helpers.ts";
import { DAY_SECONDS, type MoneyFixture, START } from "./money_core_helpers.ts";

const MINUTE_SECONDS = 60;
/** Four full units and a half one. */
const COUNT = 4 * SEND_ENTRIES_PER_UNIT_MAX + Math.ceil(SEND_ENTRIES_PER_UNIT_MAX / 2);

/** A file of COUNT payouts transmitted and sent; their ids. */
async function fileSent(m: MoneyFixture): Promise<string[]> {
  await m.fund(100_000_000);
  const ids = await chooseAch(m, Array.from({ length: COUNT }, () => 1_000));
  await m.advance(30 * MINUTE_SECONDS);
  assert.deepEqual((await batches(m)).map((b) => [b.status, b.entry_count]), [
    ["transmitted", COUNT],
  ]);
  assert.deepEqual(new Set(await statuses(m, ids)), new Set(["funds_sent"]));
  return ids;
}

/**
 * Advances to the end of the return window while a timer reads the committed count of completed
 * entries whenever the event loop turns (a unit holds the thread from its first statement to its
 * commit, so only counts between units show); `between` runs once, at the first count between
 * none and all.
 */
async function settleWatching(
  m: MoneyFixture,
  between?: () => Promise<void>,
): Promise<number[]> {
  const seen = new Set<number>();
  let watching = true;
  let ran: Promise<void> | null = null;
  const watch = (async () => {
    while (watching) {
      const [{ n }] = await rows(
        m,
        "SELECT count(*) AS n FROM rail_batch_entries WHERE status = 'completed'",
      );
      seen.add(Number(n));
      if (between && ran === null && Number(n) > 0 && Number(n) < COUNT) ran = between();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  })();
  try {
    await m.advance(3 * DAY_SECONDS);
  } finally {
    watching = false;
    await watch;
    await ran;
  }
  return [...seen].sort((a, b) => a - b);
}

Deno.test("a settlement of several units completes every entry once, SEND_ENTRIES_PER_UNIT_MAX per unit, with the event loop's turns between units", async () => {
  await withScriptedBank(async ({ m }) => {
    const ids = await fileSent(m);
    const before = await m.balances();
    const seen = await settleWatching(m);
    // Every unit's count was seen, and none larger than a unit apart.
    const expected = [];
    for (let done = 0; done < COUNT; done += SEND_ENTRIES_PER_UNIT_MAX) expected.push(done);
    expected.push(COUNT);
    assert.deepEqual(seen, expected);
    assert.deepEqual(
      await rows(m, "SELECT status, count(*) AS n FROM rail_batch_entries GROUP BY status"),
      [{ status: "completed", n: COUNT }],
    );
    assert.deepEqual(new Set(await statuses(m, ids)), new Set(["completed"]));
    // Each payout completed once: one transition, one posting, one event.
    for (
      const completions of [
        "payout_transitions WHERE to_status = 'completed'",
        "ledger_transactions WHERE kind = 'payout.complete'",
        "events WHERE type = 'disbursement.completed'",
      ]
    ) {
      assert.deepEqual(
        await rows(
          m,
          `SELECT count(*) AS n, count(DISTINCT payout_id) AS payouts FROM ${completions}`,
        ),
        [{ n: COUNT, payouts: COUNT }],
        completions,
      );
    }
    assert.deepEqual(
      await rows(m, "SELECT count(*) AS n FROM scheduled_jobs WHERE kind = 'ach.settle'"),
      [{ n: 1 }],
    );
    const after = await m.balances();
    // What was in transit was paid out.
    assert.ok(before.in_transit > 0);
    assert.equal(after.in_transit, 0);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a return imported between two settle units fails its payout; the rest complete", async () => {
  await withScriptedBank(async ({ m }) => {
    const ids = await fileSent(m);
    // The file's last entry: the settlement reaches it only in its last unit.
    const [entry] = await rows(
      m,
      `SELECT id, payout_id, trace_number, amount_cents FROM rail_batch_entries
        ORDER BY trace_number DESC LIMIT 1`,
    );
    const returnedId = String(entry.payout_id);
    let applied: unknown = null;
    const seen = await settleWatching(m, async () => {
      const imported = await importReturnR03(m, returnedId, entry);
      applied = imported.ok ? [imported.value.applied, imported.value.notApplied] : imported;
    });
    assert.deepEqual(applied, [1, []]);
    assert.equal(seen[0], 0);
    assert.equal(seen.at(-1), COUNT - 1);
    assert.deepEqual(
      await rows(
        m,
        "SELECT status, return_code FROM rail_batch_entries WHERE id = ?",
        String(entry.id),
      ),
      [{ status: "failed", return_code: "R03" }],
    );
    const returned = await m.payout(returnedId);
    assert.deepEqual([returned.status, returned.failure_reason], ["modality_offered", "R03"]);
    const others = ids.filter((id) => id !== returnedId);
    assert.deepEqual(new Set(await statuses(m, others)), new Set(["completed"]));
    assert.deepEqual(
      await rows(
        m,
        "SELECT count(*) AS n FROM payout_transitions WHERE payout_id = ? AND to_status = 'completed'",
        returnedId,
      ),
      [{ n: 0 }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a reader of returns that starts calling out between two settle units stops the settlement; it completes the rest once the reader is done", async () => {
  await withScriptedBank(async ({ m }) => {
    const ids = await fileSent(m);
    const held = async () =>
      await rows(
        m,
        `SELECT payload ->> '$.held_behind' AS held_behind FROM scheduled_jobs
          WHERE kind = 'ach.settle' AND done_at IS NULL AND payload ->> '$.held_behind' IS NOT NULL`,
      );
    let readerId = "";
    let whileHeld: Record<string, unknown>[] = [];
    const seen = await settleWatching(m, async () => {
      // The sandbox bank's return file is being read (its claim held past the test's real time).
      await m.database.writer.write(async (tx) => {
        readerId = await scheduleJob(tx, {
          companyId: m.companyId,
          kind: SANDBOX_RETURNS_JOB,
          subjectId: "returns",
          dueAt: m.now(),
        }, m.now());
        tx.defer({
          sql: "UPDATE scheduled_jobs SET lease_until = ? WHERE id = ?",
          args: [START + 3_600_000, readerId],
        });
      });
      // The settlement stops and waits behind the reader.
      for (let look = 0; look < 2_000 && (await held()).length === 0; look++) {
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      assert.deepEqual(await held(), [{ held_behind: readerId }]);
      whileHeld = await rows(
        m,
        "SELECT status, count(*) AS n FROM rail_batch_entries GROUP BY status ORDER BY status",
      );
      // The reader records its answer: the settlement is released.
      await m.database.writer.write(async (tx) => {
        await tx.execute({
          sql: "UPDATE scheduled_jobs SET done_at = ?, lease_until = NULL WHERE id = ?",
          args: [m.now(), readerId],
        });
        await releaseHeldSettlements(tx, m.companyId, readerId);
      });
    });
    // The units after the reader started applied nothing until it was done.
    assert.equal(whileHeld.length, 2, JSON.stringify(whileHeld));
    const stopped = Number(whileHeld[0].n);
    assert.ok(stopped > 0 && stopped < COUNT && stopped % SEND_ENTRIES_PER_UNIT_MAX === 0);
    assert.deepEqual(whileHeld, [
      { status: "completed", n: stopped },
      { status: "sent", n: COUNT - stopped },
    ]);
    assert.ok(seen.includes(stopped));
    assert.deepEqual(new Set(await statuses(m, ids)), new Set(["completed"]));
    assert.deepEqual(
      await rows(
        m,
        `SELECT count(*) AS n, count(DISTINCT payout_id) AS payouts FROM payout_transitions
          WHERE to_status = 'completed'`,
      ),
      [{ n: COUNT, payouts: COUNT }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a send unit and a settle unit each read and move their entries in one statement on the batch's tables", async () => {
  const units: string[][] = [];
  await withScriptedBank(async ({ m }) => {
    const ids = await fileSent(m);
    await settleWatching(m);
    assert.deepEqual(new Set(await statuses(m, ids)), new Set(["completed"]));
  }, { wrapDatabase: (database) => notingUnits(database, units) });
  const onBatches = (unit: string[]) =>
    unit.filter((sql) => /rail_batch(es|_entries)/.test(sql)).length;
  for (const move of ["SET status = 'sent'", "SET status = 'completed'"]) {
    const moving = units.filter((unit) => unit.some((sql) => sql.includes(move)));
    assert.equal(moving.length, 5, move);
    assert.deepEqual(moving.map(onBatches), [1, 1, 1, 1, 1], move);
  }
});
