/**
 * Unclaimed property of a virtual card: a completed card payout whose card expires unspent gets
 * its balance back as a late return, and that balance, still owed to the payee, is listed from
 * the return, noticed, reported and remitted from available to unclaimed_remitted; the payout
 * stays completed.
 */
import assert from "node:assert/strict";
import {
  listUnclaimed,
  remitUnclaimedReport,
  writeUnclaimedReport,
} from "../lib/obligations/unclaimed.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { chooseCard, rows, statusOf, withLithic } from "./cards_helpers.ts";
import { DAY_SECONDS } from "./money_core_helpers.ts";
import { configure } from "./obligations_helpers.ts";
import { readNaupaStrictly } from "./naupa_reader.ts";

const AMOUNT = 12_345;

Deno.test("sandbox: a card that expires unspent is owed to its payee from the return, reported and remitted from available; the payout stays completed", async () => {
  await withLithic(async ({ m }) => {
    await configure(m, { holder_state: "DE", sandbox_dormancy_days: 2 });
    await m.fund(1_000_000);
    const payoutId = await chooseCard(m, AMOUNT);
    assert.deepEqual(await listUnclaimed(m.database, m.companyId), []);
    await m.advance(30 * DAY_SECONDS + 60);
    const [card] = await rows(m, "SELECT reclaimed_cents, closed_at FROM virtual_cards");
    assert.equal(card.reclaimed_cents, AMOUNT);
    assert.equal((await m.balances()).available, 1_000_000);

    // Found once: a card balance is the card rail's late return, listed under its own kind.
    const listed = await listUnclaimed(m.database, m.companyId);
    assert.equal(listed.length, 1);
    const [item] = listed;
    assert.deepEqual(
      [item.payoutId, item.kind, item.status, item.amountCents, item.owedSince, item.state],
      [payoutId, "card_balance", "completed", AMOUNT, Number(card.closed_at), "DE"],
    );
    assert.equal(item.dormantAt, Number(card.closed_at) + 2 * DAY_SECONDS * 1000);
    // Due diligence at the return: an e-mail, and a letter with nowhere to go (no address on file).
    assert.deepEqual(item.notices.map((n) => [n.channel, n.outcome]), [
      ["email", "sent"],
      ["letter", "no_address"],
    ]);

    await m.advance(3 * DAY_SECONDS);
    const year = new Date(m.now()).getUTCFullYear();
    const written = await m.database.writer.write((tx) =>
      writeUnclaimedReport(
        tx,
        "test",
        { companyId: m.companyId, state: "DE", reportYear: year },
        m.now(),
      )
    );
    assert.ok(written.ok, written.ok ? "" : written.message);
    const read = readNaupaStrictly(written.value.text);
    assert.deepEqual(read.properties.map((p) => [p.accountNumber, p.amountCents]), [[
      payoutId,
      AMOUNT,
    ]]);

    const remitted = await m.database.writer.write((tx) =>
      remitUnclaimedReport(tx, "test", written.value.report.id, m.now())
    );
    assert.ok(remitted.ok, remitted.ok ? "" : remitted.message);
    assert.deepEqual([remitted.value.escheated, remitted.value.totalCents], [1, AMOUNT]);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    const [payout] = await rows(m, "SELECT escheated_state FROM payouts WHERE id = ?", payoutId);
    assert.equal(payout.escheated_state, "DE");
    const [row] = await rows(
      m,
      "SELECT from_status, to_status, detail FROM payout_transitions WHERE payout_id = ? ORDER BY id DESC LIMIT 1",
      payoutId,
    );
    assert.deepEqual({ ...row }, {
      from_status: "completed",
      to_status: "completed",
      detail:
        `the card balance that came back remitted to DE as unclaimed property (report ${written.value.report.id})`,
    });
    const after = await m.balances();
    assert.deepEqual([after.available, after.unclaimed_remitted], [1_000_000 - AMOUNT, AMOUNT]);
    const events = await rows(
      m,
      "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY rowid DESC LIMIT 1",
      payoutId,
    );
    assert.equal(Number(events[0].event_type_id), 17);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
    const today = new Date(m.now()).toISOString().slice(0, 10);
    const tieOut = await lineTieOut(m.database.readClient, m.lineId, today);
    assert.equal(tieOut!.difference, 0);
    assert.deepEqual(await listUnclaimed(m.database, m.companyId), []);
    // The notices stay as sent: a remittance is no answer from the owner.
    const notices = await rows(m, "SELECT outcome FROM unclaimed_notices ORDER BY channel");
    assert.deepEqual(notices.map((n) => n.outcome), ["sent", "no_address"]);
  });
});
