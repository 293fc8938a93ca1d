/**
 * The batch shape of the rail seam, on the ACH rail with a scripted bank: payouts queue as
 * entries, a cutoff gathers them into one batch (one NACHA file), a transmit job hands it to the
 * bank outside every write unit, and the outcomes per entry move each payout through the state
 * machine.
 */
import assert from "node:assert/strict";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { settleRailBatchEntry } from "../lib/payouts/jobs.ts";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import { BATCH_TRANSMIT_LEASE_MS } from "../lib/rails/batch.ts";
import { MONEY_SETTINGS } from "./money_core_helpers.ts";
import {
  batches,
  chooseAch,
  crashAfterUpload,
  entries,
  fileNameOf,
  FIRST_CUTOFF,
  quietly,
  rows,
  statuses,
  withScriptedBank,
} from "./ach_helpers.ts";

const HOUR_SECONDS = 3_600;
const TO_FIRST_CUTOFF_SECONDS = 30 * 60;

Deno.test("batch rail: three payouts queue, one cutoff builds one batch, one transmission sends them, and each entry's outcome moves its payout", async () => {
  await withScriptedBank(async ({ m, bank }) => {
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
      [{ kind: "rail.cutoff", subject_id: "ach", due_at: FIRST_CUTOFF }],
    );
    assert.deepEqual((await m.balances()).reserved, 60_000);

    await m.advance(TO_FIRST_CUTOFF_SECONDS - 1);
    assert.deepEqual(await batches(m), [], "one second before the cutoff");
    await m.advance(1);

    const [batch] = await batches(m);
    assert.deepEqual(batch, {
      id: batch.id,
      rail: "ach",
      status: "transmitted",
      entry_count: 3,
      total_cents: 60_000,
      cutoff_at: FIRST_CUTOFF,
      rail_reference: fileNameOf("2026-01-05", "A"),
      transmitted_at: FIRST_CUTOFF,
      error: null,
    });
    assert.deepEqual(
      bank.received.map((upload) => [upload.fileName, upload.accountNumbers, upload.attempt]),
      [[fileNameOf("2026-01-05", "A"), Array(3).fill("000123456789"), 1]],
    );
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

Deno.test("batch rail: a transmission that did not reach the rail is retried later with the same batch", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(100_000);
    const ids = await chooseAch(m, [10_000, 20_000]);
    bank.answers.push({ kind: "not_uploaded", reason: "connection refused" });
    await m.advance(TO_FIRST_CUTOFF_SECONDS);
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
    assert.deepEqual(bank.received.map((upload) => [upload.fileName, upload.attempt]), [
      [fileNameOf("2026-01-05", "A"), 1],
      [fileNameOf("2026-01-05", "A"), 2],
    ]);
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "funds_sent"]);
    assert.deepEqual(await m.events(ids[0]), ["created", "offered", "selected", "processing"]);
  });
});

Deno.test("batch rail: a transmission interrupted before its answer was recorded goes in doubt and is never handed over again", async () => {
  await withScriptedBank(async ({ m, bank, clock }) => {
    await m.fund(100_000);
    const ids = await chooseAch(m, [10_000, 20_000]);
    const crash = crashAfterUpload(m, bank);
    await quietly(() => assert.rejects(m.advance(TO_FIRST_CUTOFF_SECONDS), /the process stopped/));
    crash.restart();
    assert.deepEqual((await batches(m)).map((batch) => batch.status), ["transmitting"]);

    clock.advance(BATCH_TRANSMIT_LEASE_MS);
    await quietly(() => m.advance(0));
    const [batch] = await batches(m);
    assert.deepEqual([batch.status, batch.error], [
      "in_doubt",
      "the transmission was interrupted before its answer was recorded",
    ]);
    assert.equal(bank.received.length, 1, "handed over once");
    assert.deepEqual(await statuses(m, ids), ["modality_selected", "modality_selected"]);
    assert.deepEqual(
      (await entries(m)).map((entry) => entry.status),
      ["batched", "batched"],
      "an operator decides, with the bank",
    );
    assert.deepEqual((await m.balances()).in_transit, 0);
  });
});

Deno.test("batch rail: a retry queued for the next cutoff and canceled before it is voided, not transmitted", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(100_000);
    const [id] = await chooseAch(m, [10_000]);
    await m.advance(TO_FIRST_CUTOFF_SECONDS);
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
    assert.equal(bank.received.length, 1);
    assert.equal((await m.payout(id)).status, "canceled");
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [100_000, 0, 0]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});
