/**
 * Claim payment deadlines end to end on the sandbox clock: a payout's pay_by, its escalating
 * reminders, the fallback to a mailed check at the deadline (through the check rail), a payee who
 * chooses before the check leaves, no address on file, and the company's cancel and hold.
 */
import assert from "node:assert/strict";
import { readObligationSettings } from "../lib/obligations/store.ts";
import { readNeedsAction } from "../lib/console/needs_action.ts";
import type { OfferExpiryAction } from "../lib/obligations/deadline.ts";
import { DAY_SECONDS, type MoneyFixture, START } from "./money_core_helpers.ts";
import { rows, withCheckFixture } from "./checks_helpers.ts";
import { configure, owe } from "./obligations_helpers.ts";

/** START is 2026-01-05 15:00 UTC; 30 days on, pay_by is 2026-02-04, due at its 00:00 UTC. */
const PAY_BY = "2026-02-04";
const DEADLINE = Date.UTC(2026, 1, 4);
const TO_DEADLINE_SECONDS = (DEADLINE - START) / 1000;

async function setDeadlines(m: MoneyFixture, action: OfferExpiryAction, days: number | null) {
  await configure(m, { offer_expiry_action: action, pay_by_days: days });
}

const eventIds = async (m: MoneyFixture, payoutId: string) =>
  (await rows(m, "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY rowid", payoutId))
    .map((row) => Number(row.event_type_id));

const timeline = async (m: MoneyFixture, payoutId: string) =>
  (await rows(
    m,
    "SELECT from_status, to_status, detail FROM payout_transitions WHERE payout_id = ? ORDER BY id",
    payoutId,
  )).map((row) => [row.from_status, row.to_status, row.detail]);

// In live the check waits for the bank's next cutoff (the sandbox check bank takes files at once).
Deno.test("deadline: reminders escalate, the unchosen payout falls back to a mailed check; a payee who chooses first wins; once the check is in a file it goes", async () => {
  await withCheckFixture("live", async ({ m }) => {
    await setDeadlines(m, "fallback", 30);
    const mailed = await owe(m, "mailed");
    const chooser = await owe(m, "chooser");
    assert.equal((await m.payout(mailed)).pay_by, PAY_BY, "the company's default: 30 days");
    const reminders = async () =>
      (await rows(
        m,
        `SELECT channel, subject FROM notifications WHERE payout_id = ? AND subject IS NOT
           'x' ORDER BY created_at, channel`,
        mailed,
      )).slice(1).map((row) => [row.channel, row.subject]);
    await m.advance(TO_DEADLINE_SECONDS - 1);
    const subject = `Acme: choose how to be paid by ${PAY_BY}, or we mail a check`;
    assert.deepEqual(await reminders(), [
      ["email", subject],
      ["email", subject],
      // Three days before and one day before: every channel the payee has.
      ["email", subject],
      ["sms", null],
      ["email", subject],
      ["sms", null],
    ]);
    assert.equal((await m.payout(mailed)).status, "modality_offered");
    const before = await m.balances();

    await m.advance(1);
    const fellBack = await m.payout(mailed);
    assert.equal(fellBack.status, "modality_selected");
    assert.equal(fellBack.payment_method_id, 2);
    assert.equal(fellBack.fell_back_at, DEADLINE);
    assert.equal(fellBack.offer_expired_at, DEADLINE);
    assert.deepEqual((await timeline(m, mailed)).slice(-1), [[
      "modality_offered",
      "modality_selected",
      "fallback at deadline: a check mailed to the address on file",
    ]]);
    // created, offered, selected and 16 DISBURSEMENT.FALLBACK_AT_DEADLINE.
    assert.deepEqual(await eventIds(m, mailed), [1, 4, 5, 16]);
    const [event] = await rows(
      m,
      "SELECT data FROM events WHERE payout_id = ? AND event_type_id = 16",
      mailed,
    );
    assert.equal(
      JSON.parse(String(event.data)).reason,
      "fallback at deadline: a check mailed to the address on file",
    );
    // The check is issued to the address on file and waits, queued, for the next cutoff.
    const [check] = await rows(
      m,
      "SELECT c.status, c.amount_cents, e.status AS entry FROM checks c JOIN rail_batch_entries e ON e.reference = c.reference WHERE c.payout_id = ?",
      mailed,
    );
    assert.deepEqual({ ...check }, { status: "issued", amount_cents: 50_000, entry: "queued" });
    // No fees in the fixture: the hold stays the amount, so the ledger moved nothing.
    assert.deepEqual(await m.balances(), before);

    // The second payee chooses ACH before the check leaves: the choice replaces the fallback.
    const chose = await m.select(chooser, 1, { accountNumber: "000123456789" });
    assert.ok(chose.ok, chose.ok ? "" : chose.message);
    assert.equal(chose.value.paymentMethodId, 1);
    const [voided] = await rows(
      m,
      "SELECT c.status, e.status AS entry FROM checks c JOIN rail_batch_entries e ON e.reference = c.reference WHERE c.payout_id = ?",
      chooser,
    );
    assert.deepEqual({ ...voided }, { status: "voided", entry: "voided" });
    assert.deepEqual((await timeline(m, chooser)).slice(-1), [[
      "modality_selected",
      "modality_selected",
      "ach",
    ]]);

    // The next cutoff (10:30 New York) puts the mailed check in a file: it has left.
    await m.advance(DAY_SECONDS);
    const late = await m.select(mailed, 1, { accountNumber: "000123456789" });
    assert.equal(late.ok ? null : late.code, "payout_in_flight");
    assert.notEqual((await m.payout(chooser)).status, "modality_offered");
    assert.equal((await m.payout(chooser)).payment_method_id, 1);
  });
});

Deno.test("deadline: without an address on file the offer stays open and owed (needs action); the payee may still choose", async () => {
  await withCheckFixture("test", async ({ m }) => {
    await setDeadlines(m, "fallback", 30);
    const id = await owe(m, "nowhere", { payee: {} });
    await m.advance(TO_DEADLINE_SECONDS);
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.fell_back_at, payout.offer_expired_at], [
      "modality_offered",
      null,
      DEADLINE,
    ]);
    assert.deepEqual((await timeline(m, id)).slice(-1), [[
      "modality_offered",
      "modality_offered",
      "fallback at deadline: no mailing address on file; the offer stays open and owed (needs action)",
    ]]);
    assert.equal((await m.balances()).reserved, 50_000, "still held for the payee");
    const queue = async () =>
      (await readNeedsAction(m.database, null, { realNow: START, live: m.database.readClient }))
        .groups.find((g) => g.kind === "deadlines_not_fallen_back")!;
    const listed = await queue();
    assert.equal(listed.count, 1);
    assert.deepEqual(
      [listed.items[0].path, listed.items[0].detail, listed.items[0].since],
      [
        `/console/payouts/${id}`,
        "pay_by 2026-02-04 passed unchosen and no fallback check went out (no mailing address on file, or its hold did not fit): add the address or funds, or cancel",
        DEADLINE,
      ],
    );
    assert.ok((await m.select(id, 1, { accountNumber: "000123456789" })).ok);
    assert.equal((await queue()).count, 0, "the payee chose: nothing left to do");
  });
});

Deno.test("deadline: hold keeps the expired offer owed with its money held; cancel gives it back; a given pay_by wins over the default", async () => {
  await withCheckFixture("test", async ({ m }) => {
    await setDeadlines(m, "hold", 30);
    const held = await owe(m, "held");
    const early = await owe(m, "early", { payBy: "2026-01-20" });
    assert.equal((await m.payout(early)).pay_by, "2026-01-20");
    await m.advance((Date.UTC(2026, 0, 20) - START) / 1000);
    assert.equal((await m.payout(early)).offer_expired_at, Date.UTC(2026, 0, 20));
    assert.equal((await m.payout(held)).offer_expired_at, null);
    await m.advance(TO_DEADLINE_SECONDS);
    for (const id of [held, early]) {
      const payout = await m.payout(id);
      assert.equal(payout.status, "modality_offered");
      assert.deepEqual(
        (await timeline(m, id)).slice(-1)[0][2],
        "the payee did not choose in time: kept as still owed (unclaimed property)",
      );
    }
    assert.equal((await m.balances()).reserved, 100_000);

    await setDeadlines(m, "cancel", 30);
    const canceled = await owe(m, "canceled");
    await m.advance(30 * DAY_SECONDS);
    const payout = await m.payout(canceled);
    assert.equal(payout.status, "canceled");
    assert.notEqual(payout.offer_expired_at, null);
    assert.equal(
      (await m.balances()).reserved,
      100_000,
      "only the canceled payout's hold went back",
    );
    const settings = await readObligationSettings(m.database.readClient, m.companyId);
    assert.deepEqual([settings.offerExpiryAction, settings.payByDays], ["cancel", 30]);
  });
});

Deno.test("deadline: a company without a default keeps the offer's 90 days, then cancels (the sandbox's behaviour)", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const id = await owe(m, "legacy");
    assert.equal((await m.payout(id)).pay_by, null);
    await m.advance(90 * DAY_SECONDS - 1);
    assert.equal((await m.payout(id)).status, "modality_offered");
    await m.advance(1);
    assert.equal((await m.payout(id)).status, "canceled");
  });
});
