/**
 * The cutoff claims its entries a page per write unit (CLAIM_ENTRIES_PER_UNIT_MAX) so that a
 * catastrophe day's queue never holds the service's thread: entries whose payout no longer waits
 * for them are voided as their page comes up, a batch left without entries goes, and a run that
 * stopped between pages is taken up where it stopped, with the same reserved traces.
 */
import assert from "node:assert/strict";
import type { InStatement } from "@libsql/client";
import type { Database } from "../db/client.ts";
import { TransientJobError } from "../db/scheduler.ts";
import { CLAIM_ENTRIES_PER_UNIT_MAX, CUTOFF_LEASE_MS, measureQueue } from "../lib/rails/cutoff.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { applyMove } from "../lib/payouts/store.ts";
import {
  batches,
  BUILT_BY_QUERY_BUILDER,
  chooseAch,
  countingTurns,
  notingUnits,
  quietly,
  rows,
  seeingStatements,
  statuses,
  withScriptedBank,
} from "./ach_helpers.ts";
import type { MoneyFixture } from "./money_core_helpers.ts";

const MINUTE_SECONDS = 60;
const ODFI = "02100002";

const entries = (m: MoneyFixture) =>
  rows(
    m,
    "SELECT payout_id, status, batch_id, trace_number FROM rail_batch_entries ORDER BY rowid",
  );

/** A payout whose queued entry no longer waits: refused by its rail (failed), then canceled. */
async function cancelQueued(m: MoneyFixture, payoutId: string): Promise<void> {
  await m.database.writer.write(async (tx) => {
    for (const move of [{ kind: "rail_refused", reason: "x" }, { kind: "cancel" }] as const) {
      assert.ok((await applyMove(tx, payoutId, move, m.now())).ok);
    }
  });
}

Deno.test("a canceled payout's queued entry is voided when its page comes up: the file holds the others, with consecutive traces and the batch's count and total", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(1_000_000);
    const ids = await chooseAch(m, [10_000, 20_000, 30_000]);
    await cancelQueued(m, ids[1]);
    await m.advance(30 * MINUTE_SECONDS);
    const [batch] = await batches(m);
    assert.deepEqual(await entries(m), [
      { payout_id: ids[0], status: "sent", batch_id: batch.id, trace_number: `${ODFI}0000001` },
      { payout_id: ids[1], status: "voided", batch_id: null, trace_number: null },
      { payout_id: ids[2], status: "sent", batch_id: batch.id, trace_number: `${ODFI}0000002` },
    ]);
    assert.deepEqual(
      await rows(m, "SELECT entry_count, total_cents, status FROM rail_batches"),
      [{ entry_count: 2, total_cents: 40_000, status: "transmitted" }],
    );
    assert.deepEqual(
      await rows(m, "SELECT entry_count, credit_total_cents FROM ach_files"),
      [{ entry_count: 2, credit_total_cents: 40_000 }],
    );
    assert.equal(bank.received.length, 1);
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "canceled", "funds_sent"]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a cutoff whose every queued entry proved stale leaves no batch and no file", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(1_000_000);
    const ids = await chooseAch(m, [10_000, 20_000]);
    for (const id of ids) await cancelQueued(m, id);
    await m.advance(30 * MINUTE_SECONDS);
    assert.deepEqual(await batches(m), []);
    assert.deepEqual(await rows(m, "SELECT batch_id FROM ach_files"), []);
    assert.deepEqual((await entries(m)).map((e) => e.status), ["voided", "voided"]);
    assert.equal(bank.received.length, 0);
    assert.deepEqual(await statuses(m, ids), ["canceled", "canceled"]);
  });
});

/** Stops the process (a TransientJobError in the unit) at the cutoff's second claim page, once. */
const stoppingAtSecondPage = (database: Database, state: { pages: number }): Database =>
  seeingStatements(database, (sql) => {
    if (sql.includes("AS stale") && ++state.pages === 2) {
      throw new TransientJobError("the process stopped between claim pages");
    }
  });

Deno.test("a cutoff stopped between claim pages is taken up where it stopped: one file of every entry, traces consecutive and never given twice", async () => {
  const count = CLAIM_ENTRIES_PER_UNIT_MAX * 2 + 50;
  const state = { pages: 0 };
  await withScriptedBank(async ({ m, bank, clock }) => {
    await m.fund(100_000_000);
    const ids = await chooseAch(m, Array.from({ length: count }, () => 1_000));
    await quietly(() => m.advance(30 * MINUTE_SECONDS));
    const [stopped] = await batches(m);
    assert.deepEqual([stopped.status, stopped.error], ["built", null]);
    assert.deepEqual(
      await rows(m, "SELECT status, count(*) AS n FROM rail_batch_entries GROUP BY status"),
      [
        { status: "batched", n: CLAIM_ENTRIES_PER_UNIT_MAX },
        { status: "queued", n: count - CLAIM_ENTRIES_PER_UNIT_MAX },
      ],
    );
    assert.deepEqual(await rows(m, "SELECT batch_id FROM ach_files"), []);

    clock.advance(CUTOFF_LEASE_MS);
    await m.advance(MINUTE_SECONDS);
    assert.deepEqual((await batches(m)).map((b) => [b.id, b.status]), [[
      stopped.id,
      "transmitted",
    ]]);
    assert.deepEqual(
      await rows(m, "SELECT entry_count, credit_total_cents FROM ach_files"),
      [{ entry_count: count, credit_total_cents: count * 1_000 }],
    );
    assert.deepEqual(
      await rows(
        m,
        `SELECT count(DISTINCT trace_number) AS n, min(trace_number) AS lo, max(trace_number) AS hi
         FROM rail_batch_entries WHERE batch_id = ?`,
        String(stopped.id),
      ),
      [{ n: count, lo: `${ODFI}0000001`, hi: `${ODFI}${String(count).padStart(7, "0")}` }],
    );
    assert.equal(bank.received.length, 1);
    assert.ok((await statuses(m, ids)).every((status) => status === "funds_sent"));
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  }, { wrapDatabase: (database) => stoppingAtSecondPage(database, state) });
});

Deno.test("a claim counts its entries and their total as its pages commit: no page counts the batch's entries, nor does its close sum them; the batch's count and total are its entries'", async () => {
  const count = CLAIM_ENTRIES_PER_UNIT_MAX * 2 + 50;
  const sqls: string[] = [];
  await withScriptedBank(async ({ m }) => {
    await m.fund(100_000_000);
    const ids = await chooseAch(m, Array.from({ length: count }, (_, i) => 1_000 + i));
    const canceled = CLAIM_ENTRIES_PER_UNIT_MAX + 7;
    await cancelQueued(m, ids[canceled]);
    sqls.length = 0;
    await m.advance(30 * MINUTE_SECONDS);
    const total = Array.from({ length: count }, (_, i) => 1_000 + i)
      .reduce((sum, cents, i) => i === canceled ? sum : sum + cents, 0);
    assert.deepEqual(
      await rows(m, "SELECT entry_count, total_cents, status FROM rail_batches"),
      [{ entry_count: count - 1, total_cents: total, status: "transmitted" }],
    );
    assert.deepEqual(
      await rows(m, "SELECT entry_count, credit_total_cents FROM ach_files"),
      [{ entry_count: count - 1, credit_total_cents: total }],
    );
    assert.ok(sqls.some((sql) => sql.includes("AS stale")), "the claim's pages were recorded");
    assert.deepEqual(
      sqls.filter((sql) =>
        /count\(\*\)[\s\S]*FROM rail_batch_entries\s+WHERE batch_id = \?/.test(sql)
      ),
      [],
    );
  }, { wrapDatabase: (database) => seeingStatements(database, (sql) => sqls.push(sql)) });
});

Deno.test("a claim's batch holds its claimed entries' total at every committed page, not the queue's measured at its opening", async () => {
  const count = CLAIM_ENTRIES_PER_UNIT_MAX * 2 + 50;
  const state = { pages: 0 };
  await withScriptedBank(async ({ m, clock }) => {
    await m.fund(100_000_000);
    const cents = Array.from({ length: count }, (_, i) => 1_000 + i);
    await chooseAch(m, cents);
    await quietly(() => m.advance(30 * MINUTE_SECONDS));
    const firstPage = cents.slice(0, CLAIM_ENTRIES_PER_UNIT_MAX).reduce((a, b) => a + b, 0);
    assert.deepEqual(
      await rows(m, "SELECT entry_count, total_cents, status FROM rail_batches"),
      [{ entry_count: count, total_cents: firstPage, status: "built" }],
    );

    clock.advance(CUTOFF_LEASE_MS);
    await m.advance(MINUTE_SECONDS);
    const total = cents.reduce((a, b) => a + b, 0);
    assert.deepEqual(
      await rows(m, "SELECT entry_count, total_cents, status FROM rail_batches"),
      [{ entry_count: count, total_cents: total, status: "transmitted" }],
    );
    assert.deepEqual(
      await rows(m, "SELECT entry_count, credit_total_cents FROM ach_files"),
      [{ entry_count: count, credit_total_cents: total }],
    );
  }, { wrapDatabase: (database) => stoppingAtSecondPage(database, state) });
});

Deno.test("the claiming unit counts the queue from its index, reading no entry's row, unless the cutoff has an entry limit", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.fund(100_000_000);
    await chooseAch(m, [1_000, 2_000, 3_000, 4_000]);
    const [{ company_id: companyId }] = await rows(
      m,
      "SELECT DISTINCT company_id FROM rail_batch_entries",
    );
    const measure = async (maxCents: number | null, limit: number) => {
      const statements: InStatement[] = [];
      const measured = await seeingStatements(m.database, (_, statement) => {
        statements.push(statement);
      }).writer.write((tx) =>
        measureQueue(tx, { companyId: String(companyId), entryRail: "ach", maxCents, limit })
      );
      const plans: string[][] = [];
      for (const statement of statements) {
        const { sql, args } = typeof statement === "string"
          ? { sql: statement, args: [] }
          : statement;
        const plan = await m.database.readClient.execute({
          sql: `EXPLAIN QUERY PLAN ${sql}`,
          args,
        });
        plans.push(plan.rows.map((row) => String(row.detail)));
      }
      return { measured, plans };
    };
    const covered = (plan: string[]) => plan.some((d) => d.includes("COVERING INDEX"));

    const anySize = await measure(null, 3);
    assert.deepEqual(anySize.measured, { count: 3, queued: 4 });
    assert.equal(anySize.plans.length, 1);
    assert.ok(covered(anySize.plans[0]), anySize.plans[0].join("; "));

    const limited = await measure(2_500, 10);
    assert.deepEqual(limited.measured, { count: 2, queued: 4 });
    assert.equal(limited.plans.length, 2);
    assert.ok(covered(limited.plans[0]), limited.plans[0].join("; "));
  });
});

Deno.test("a cutoff claims its entries and keeps their facts at most 200 a unit, with the event loop's turns between units", async () => {
  const count = 250;
  // A timer counts the event loop's turns; each page's unit notes the count it ran at.
  const claimed: { size: number; turn: number }[] = [];
  const facts: { size: number; turn: number }[] = [];
  const sizeOf = (statement: InStatement, index: number) =>
    typeof statement === "string"
      ? 0
      : (JSON.parse(String((statement.args as unknown[])[index])) as unknown[]).length;
  await countingTurns((turns) =>
    withScriptedBank(async ({ m }) => {
      await m.fund(100_000_000);
      await chooseAch(m, Array.from({ length: count }, () => 1_000));
      await m.advance(30 * MINUTE_SECONDS);
      assert.deepEqual(
        await rows(m, "SELECT status, count(*) AS n FROM rail_batch_entries GROUP BY status"),
        [{ status: "sent", n: count }],
      );
      assert.deepEqual(
        await rows(
          m,
          "SELECT count(*) AS n FROM rail_batch_entries WHERE receiving_dfi IS NOT NULL",
        ),
        [{ n: count }],
      );
    }, {
      wrapDatabase: (database) =>
        seeingStatements(database, (sql, statement) => {
          if (sql.includes("SET batch_id = ?, status = 'batched'")) {
            claimed.push({ size: sizeOf(statement, 1), turn: turns() });
          }
          if (sql.includes("SET receiving_dfi")) {
            facts.push({ size: sizeOf(statement, 0), turn: turns() });
          }
        }),
    })
  );
  for (const pages of [claimed, facts]) {
    assert.deepEqual(pages.map((page) => page.size), [200, 50]);
    // Requests are answered between pages: the event loop turned between every two units.
    for (let i = 1; i < pages.length; i++) assert.ok(pages[i].turn > pages[i - 1].turn);
  }
});

Deno.test("under API traffic the claim's, the facts' and the file pieces' units rest like the send's: the cutoff asks after each unit that leaves more", async () => {
  let asked = 0;
  await withScriptedBank(async ({ m }) => {
    await m.fund(100_000_000);
    const ids = await chooseAch(m, Array.from({ length: 250 }, () => 1_000));
    await m.advance(30 * MINUTE_SECONDS);
    assert.deepEqual(new Set(await statuses(m, ids)), new Set(["funds_sent"]));
  }, {
    apiBusy: () => {
      asked += 1;
      return true;
    },
  });
  // Claim units of 200 and 50: after the first; facts units of the same then the file's one
  // piece: after both facts units; then the send's 25 full units of 10, after each.
  assert.equal(asked, 1 + 2 + 25);
});

Deno.test("a cutoff's claiming unit and its claim pages' units run only statements written once, none built by the query builder at each call", async () => {
  const units: string[][] = [];
  await withScriptedBank(async ({ m }) => {
    await m.fund(100_000_000);
    await chooseAch(m, Array.from({ length: 250 }, () => 1_000));
    await m.advance(30 * MINUTE_SECONDS);
    assert.deepEqual((await batches(m)).map((b) => b.status), ["transmitted"]);
  }, { wrapDatabase: (database) => notingUnits(database, units) });
  const pages = units.filter((unit) => unit.some((sql) => sql.includes("AS stale")));
  assert.equal(pages.length, 2);
  const claiming = units.filter((unit) =>
    unit.some((sql) =>
      /insert into "?rail_batches"?\s/i.test(sql.replace(BUILT_BY_QUERY_BUILDER, ""))
    )
  );
  assert.equal(claiming.length, 1);
  assert.deepEqual(
    [...claiming, ...pages].flat().filter((sql) => sql.startsWith(BUILT_BY_QUERY_BUILDER)),
    [],
  );
});
