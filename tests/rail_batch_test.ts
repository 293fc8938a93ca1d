/**
 * The batch shape of the rail seam with a small test batch rail for ACH: payouts queue as
 * entries, a cutoff gathers them into one batch, a transmit job hands it to the rail outside
 * every write unit, and the rail's outcomes per entry move each payout through the state machine.
 */
import assert from "node:assert/strict";
import type { Database } from "../db/client.ts";
import type { WriteUnit } from "../db/writer.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { payoutJobHandlers, settleRailBatchEntry } from "../lib/payouts/jobs.ts";
import { payoutRuntime } from "../lib/payouts/runtime.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import {
  BATCH_TRANSMIT_LEASE_MS,
  type BatchRail,
  type RailBatch,
  type TransmitAnswer,
} from "../lib/rails/batch.ts";
import { sandboxRail } from "../lib/rails/sandbox.ts";
import { railDirectory } from "../lib/rails/seam.ts";
import {
  MONEY_SETTINGS,
  type MoneyFixture,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";

const HOUR_SECONDS = 3_600;
const DAY_MS = 86_400_000;
/** The test rail's daily cutoff: 17:00 UTC, two hours after the fixture's start. */
const FIRST_CUTOFF = START + 2 * HOUR_SECONDS * 1000;

/** A batch rail that cuts off at 17:00 UTC and keeps what it was handed. */
class TestBatchRail implements BatchRail {
  readonly shape = "batch";
  readonly name = "test_batch";
  readonly transmissions: { batchId: string; lines: string[] }[] = [];
  /** Answers to give before the default "transmitted". */
  readonly answers: TransmitAnswer[] = [];
  /** Runs after the rail took a transmission (a test's crash). */
  afterTransmit: (() => void) | null = null;

  constructor(readonly retransmitsSafely: boolean) {}

  nextCutoff(after: number): number {
    const day = new Date(after);
    const cutoff = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 17);
    return cutoff > after ? cutoff : cutoff + DAY_MS;
  }

  build(batch: RailBatch): Uint8Array {
    const lines = batch.entries.map((entry) => `${entry.reference},${entry.amountCents}`);
    return new TextEncoder().encode([`batch,${batch.id},${batch.totalCents}`, ...lines].join("\n"));
  }

  transmit(batch: RailBatch, content: Uint8Array): Promise<TransmitAnswer> {
    const answer = this.answers.shift() ?? { kind: "transmitted", railReference: `tb_${batch.id}` };
    if (answer.kind === "transmitted") {
      this.transmissions.push({
        batchId: batch.id,
        lines: new TextDecoder().decode(content).split("\n"),
      });
    }
    this.afterTransmit?.();
    return Promise.resolve(answer);
  }
}

async function withBatchRail(
  fn: (m: MoneyFixture, rail: TestBatchRail, clock: FakeClock) => Promise<void>,
  options: { retransmitsSafely: boolean } = { retransmitsSafely: false },
) {
  const clock = new FakeClock(START);
  const rail = new TestBatchRail(options.retransmitsSafely);
  const m = await openMoneyFixture({
    clock,
    handlers: (database: Database) =>
      payoutJobHandlers(
        payoutRuntime("test", MONEY_SETTINGS),
        railDirectory(sandboxRail(database), { ach: rail }),
      ),
  });
  try {
    await fn(m, rail, clock);
  } finally {
    await m.close();
  }
}

/** Payouts of `amounts` whose payees chose ACH; returns their ids. */
async function chooseAch(m: MoneyFixture, amounts: number[]): Promise<string[]> {
  const created = await m.create(
    amounts.map((amountCents, i) => ({ payeeUuid: `p${i}`, amountCents })),
  );
  assert.ok(created.ok);
  await m.settle();
  const ids = created.value.payouts.map((payout) => payout.id);
  for (const id of ids) {
    assert.ok((await m.select(id, 1, { accountNumber: "000123456789" })).ok);
  }
  await m.settle();
  return ids;
}

async function rows(m: MoneyFixture, sql: string, ...args: (string | number)[]) {
  return (await m.database.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
}

const entries = (m: MoneyFixture) =>
  rows(
    m,
    "SELECT payout_id, reference, amount_cents, status, batch_id FROM rail_batch_entries ORDER BY rowid",
  );

const batches = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT id, rail, status, entry_count, total_cents, cutoff_at, rail_reference, transmitted_at, error
     FROM rail_batches ORDER BY rowid`,
  );

const statuses = async (m: MoneyFixture, ids: string[]) =>
  await Promise.all(ids.map(async (id) => (await m.payout(id)).status));

/** Silences the scheduler's log lines of a test's deliberate failures. */
async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const original = console.error;
  console.error = () => {};
  try {
    return await fn();
  } finally {
    console.error = original;
  }
}

/** Every write fails from the moment the rail took the batch until `restart`, as after a crash. */
function crashAfterTransmit(m: MoneyFixture, rail: TestBatchRail): { restart(): void } {
  const writer = m.database.writer;
  const write = writer.write.bind(writer);
  let stopped = false;
  writer.write = <T>(unit: WriteUnit<T>): Promise<T> =>
    stopped ? Promise.reject(new Error("the process stopped")) : write(unit);
  rail.afterTransmit = () => stopped = true;
  return {
    restart() {
      writer.write = write;
      rail.afterTransmit = null;
    },
  };
}

Deno.test("batch rail: three payouts queue, one cutoff builds one batch, one transmission sends them, and each entry's outcome moves its payout", async () => {
  await withBatchRail(async (m, rail) => {
    await m.fund(100_000);
    const ids = await chooseAch(m, [10_000, 20_000, 30_000]);

    // Submitted: queued for the cutoff, nothing handed to the rail, the money still held.
    assert.deepEqual(await statuses(m, ids), Array(3).fill("modality_selected"));
    assert.deepEqual(
      await entries(m),
      ids.map((id, i) => ({
        payout_id: id,
        reference: `${id}-1`,
        amount_cents: [10_000, 20_000, 30_000][i],
        status: "queued",
        batch_id: null,
      })),
    );
    assert.deepEqual(
      await rows(
        m,
        "SELECT kind, subject_id, due_at FROM scheduled_jobs WHERE done_at IS NULL AND kind LIKE 'rail.%'",
      ),
      [{ kind: "rail.cutoff", subject_id: "test_batch", due_at: FIRST_CUTOFF }],
    );
    assert.deepEqual(await sandboxSubmissionCount(m), 0, "the per-payout rail was not used");
    assert.deepEqual((await m.balances()).reserved, 60_000);

    await m.advance(2 * HOUR_SECONDS - 1);
    assert.deepEqual(await batches(m), [], "one second before the cutoff");
    await m.advance(1);

    const [batch] = await batches(m);
    assert.deepEqual(batch, {
      id: batch.id,
      rail: "test_batch",
      status: "transmitted",
      entry_count: 3,
      total_cents: 60_000,
      cutoff_at: FIRST_CUTOFF,
      rail_reference: `tb_${batch.id}`,
      transmitted_at: FIRST_CUTOFF,
      error: null,
    });
    assert.deepEqual(rail.transmissions, [{
      batchId: batch.id,
      lines: [
        `batch,${batch.id},60000`,
        `${ids[0]}-1,10000`,
        `${ids[1]}-1,20000`,
        `${ids[2]}-1,30000`,
      ],
    }]);
    assert.deepEqual(
      (await entries(m)).map((entry) => [entry.status, entry.batch_id]),
      Array(3).fill(["sent", batch.id]),
    );
    assert.deepEqual(await statuses(m, ids), Array(3).fill("funds_sent"));
    assert.deepEqual(
      await Promise.all(ids.map(async (id) => (await m.payout(id)).rail_reference)),
      ids.map((id) => `${id}-1`),
    );
    let b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [40_000, 0, 60_000]);

    // The rail reports its entries: two paid, one returned R03 (not retried: offered again).
    const settle = (reference: string, outcome: Parameters<typeof settleRailBatchEntry>[3]) =>
      m.database.writer.write((tx) =>
        settleRailBatchEntry(tx, payoutRuntime("test", MONEY_SETTINGS), reference, outcome, m.now())
      );
    assert.ok((await settle(`${ids[0]}-1`, { kind: "completed" })).ok);
    assert.ok((await settle(`${ids[1]}-1`, { kind: "failed", reason: "R03" })).ok);
    assert.ok((await settle(`${ids[2]}-1`, { kind: "completed" })).ok);
    assert.deepEqual(await statuses(m, ids), ["completed", "modality_offered", "completed"]);
    assert.equal((await m.payout(ids[1])).failure_reason, "R03");
    assert.deepEqual(await m.events(ids[1]), [
      "created",
      "offered",
      "selected",
      "processing",
      "failed",
      "offered",
    ]);
    assert.deepEqual(
      (await entries(m)).map((entry) => entry.status),
      ["completed", "failed", "completed"],
    );
    b = await m.balances();
    assert.deepEqual(
      [b.available, b.reserved, b.in_transit, b.bank],
      [40_000, 20_000, 0, -100_000 + 40_000],
    );

    const again = await settle(`${ids[0]}-1`, { kind: "failed", reason: "R03" });
    assert.deepEqual(again, {
      ok: false,
      code: "entry_not_sent",
      message: `batch entry ${ids[0]}-1 is completed; only a sent entry can settle`,
      details: { status: "completed" },
    });
    const unknown = await settle("po_unknown-1", { kind: "completed" });
    assert.ok(!unknown.ok && unknown.code === "entry_not_found");
    assert.equal((await m.payout(ids[0])).status, "completed");
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

const sandboxSubmissionCount = async (m: MoneyFixture) =>
  Number((await rows(m, "SELECT count(*) AS n FROM sandbox_rail_submissions"))[0].n);

Deno.test("batch rail: a transmission that did not reach the rail is retried later with the same batch", async () => {
  await withBatchRail(async (m, rail) => {
    await m.fund(100_000);
    const ids = await chooseAch(m, [10_000, 20_000]);
    rail.answers.push({ kind: "not_transmitted", reason: "connection refused" });
    await m.advance(2 * HOUR_SECONDS);
    const [built] = await batches(m);
    assert.deepEqual([built.status, built.error], ["built", "connection refused"]);
    assert.deepEqual(await statuses(m, ids), ["modality_selected", "modality_selected"]);
    assert.deepEqual(
      await rows(
        m,
        "SELECT subject_id, due_at, payload FROM scheduled_jobs WHERE done_at IS NULL AND kind = 'rail.transmit'",
      ),
      [{ subject_id: built.id, due_at: FIRST_CUTOFF + 5_000, payload: '{"attempt":2}' }],
    );
    await m.advance(5);
    const [batch] = await batches(m);
    assert.deepEqual([batch.status, batch.error, batch.transmitted_at], [
      "transmitted",
      null,
      FIRST_CUTOFF + 5_000,
    ]);
    assert.deepEqual(rail.transmissions.map((t) => t.batchId), [built.id]);
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "funds_sent"]);
    assert.deepEqual(await m.events(ids[0]), ["created", "offered", "selected", "processing"]);
  });
});

Deno.test("batch rail: a transmission interrupted before its answer was recorded goes in doubt and is never handed over again", async () => {
  await withBatchRail(async (m, rail, clock) => {
    await m.fund(100_000);
    const ids = await chooseAch(m, [10_000, 20_000]);
    const crash = crashAfterTransmit(m, rail);
    await quietly(() => assert.rejects(m.advance(2 * HOUR_SECONDS), /the process stopped/));
    crash.restart();
    assert.deepEqual((await batches(m)).map((batch) => batch.status), ["transmitting"]);

    clock.advance(BATCH_TRANSMIT_LEASE_MS);
    await m.advance(0);
    const [batch] = await batches(m);
    assert.deepEqual([batch.status, batch.error], [
      "in_doubt",
      "the transmission was interrupted before its answer was recorded",
    ]);
    assert.equal(rail.transmissions.length, 1, "handed over once");
    assert.deepEqual(await statuses(m, ids), ["modality_selected", "modality_selected"]);
    assert.deepEqual(
      (await entries(m)).map((entry) => entry.status),
      ["batched", "batched"],
      "an operator decides, with the bank",
    );
    assert.deepEqual((await m.balances()).in_transit, 0);
  });
});

Deno.test("batch rail: a rail that takes the same batch id safely gets it again after a crash, and the payouts are sent once", async () => {
  await withBatchRail(async (m, rail, clock) => {
    await m.fund(100_000);
    const ids = await chooseAch(m, [10_000, 20_000]);
    const crash = crashAfterTransmit(m, rail);
    await quietly(() => assert.rejects(m.advance(2 * HOUR_SECONDS), /the process stopped/));
    crash.restart();
    clock.advance(BATCH_TRANSMIT_LEASE_MS);
    await m.advance(0);
    const [batch] = await batches(m);
    assert.equal(batch.status, "transmitted");
    assert.deepEqual(rail.transmissions.map((t) => t.batchId), [batch.id, batch.id]);
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "funds_sent"]);
    assert.deepEqual(await m.events(ids[1]), ["created", "offered", "selected", "processing"]);
    assert.deepEqual((await m.balances()).in_transit, 30_000);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  }, { retransmitsSafely: true });
});

Deno.test("batch rail: a retry queued for the next cutoff and canceled before it is voided, not transmitted", async () => {
  await withBatchRail(async (m, rail) => {
    await m.fund(100_000);
    const [id] = await chooseAch(m, [10_000]);
    await m.advance(2 * HOUR_SECONDS);
    const failed = await m.database.writer.write((tx) =>
      settleRailBatchEntry(
        tx,
        payoutRuntime("test", MONEY_SETTINGS),
        `${id}-1`,
        { kind: "failed", reason: "rail_unavailable" },
        m.now(),
      )
    );
    assert.ok(failed.ok);
    await m.settle(); // the policy retries rail_unavailable once: submission 2 queues
    assert.equal((await m.payout(id)).status, "failed");
    assert.deepEqual(
      (await entries(m)).map((entry) => [entry.reference, entry.status]),
      [[`${id}-1`, "failed"], [`${id}-2`, "queued"]],
    );
    assert.ok((await m.cancel(id)).ok);
    await m.advance(24 * HOUR_SECONDS);
    assert.deepEqual(
      (await entries(m)).map((entry) => [entry.reference, entry.status]),
      [[`${id}-1`, "failed"], [`${id}-2`, "voided"]],
    );
    assert.equal((await batches(m)).length, 1, "no batch for the voided entry");
    assert.equal(rail.transmissions.length, 1);
    assert.equal((await m.payout(id)).status, "canceled");
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [100_000, 0, 0]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});
