/** The money core end to end through the domain: sandbox rails, clock, funding, ledger. */
import assert from "node:assert/strict";
import { returnAchFunding } from "../lib/funding/store.ts";
import { addressLinesOf } from "../lib/checks/print.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { applyMove } from "../lib/payouts/store.ts";
import { listUnclaimed } from "../lib/obligations/unclaimed.ts";
import { DAY_SECONDS, type MoneyFixture, openMoneyFixture } from "./money_core_helpers.ts";
import { testSecretBox } from "./helpers.ts";

async function withMoney(fn: (m: MoneyFixture) => Promise<void>) {
  const fixture = await openMoneyFixture();
  try {
    await fn(fixture);
  } finally {
    await fixture.close();
  }
}

Deno.test("success+ach: offered and selected at once, sent in the next cutoff's file; completed when the return window closes", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const created = await m.create({ email: "success+ach@example.test", amountCents: 25_000 });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    assert.equal((await m.balances()).reserved, 25_000);
    await m.settle();
    assert.equal((await m.payout(id)).status, "modality_selected", "queued for the cutoff");
    await m.advance(30 * 60); // 10:30 New York: the sandbox bank's same-day cutoff takes the file
    assert.equal((await m.payout(id)).status, "funds_sent");
    assert.deepEqual(await m.balances().then((b) => [b.available, b.reserved, b.in_transit]), [
      975_000,
      0,
      25_000,
    ]);
    await m.advance(DAY_SECONDS); // Tuesday: the return window is still open
    assert.equal((await m.payout(id)).status, "funds_sent");
    await m.advance(2 * DAY_SECONDS); // Thursday: past Wednesday 17:00, effective date + 2 banking days
    assert.equal((await m.payout(id)).status, "completed");
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit, b.bank], [975_000, 0, 0, -975_000]);
    assert.deepEqual(await m.events(id), [
      "created",
      "offered",
      "selected",
      "processing",
      "completed",
    ]);
  });
});

Deno.test("fail+ach: returned R03 by the sandbox bank's return file two banking days after the effective date, not retried, the payee is offered again", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const created = await m.create({ email: "fail+ach@example.test", amountCents: 10_000 });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle();
    await m.advance(2 * DAY_SECONDS);
    const payout = await m.payout(id);
    assert.equal(payout.status, "modality_offered");
    assert.equal(payout.failure_reason, "R03");
    assert.equal(payout.retry_count, 0);
    assert.equal(payout.payment_method_id, null);
    const b = await m.balances();
    assert.deepEqual(
      [b.available, b.reserved, b.in_transit],
      [990_000, 10_000, 0],
      "the money is back on hold",
    );
    assert.deepEqual(await m.events(id), [
      "created",
      "offered",
      "selected",
      "processing",
      "failed",
      "offered",
    ]);
  });
});

Deno.test("account 000222222227: the sandbox bank refuses its file's first transmission, the retry 5 s later goes, and the payout completes", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const created = await m.create({ email: "noaction@example.test", amountCents: 5_000 });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle();
    assert.equal((await m.payout(id)).status, "modality_offered");
    const selected = await m.select(id, 1, { accountNumber: "000222222227" });
    assert.ok(selected.ok);
    await m.advance(30 * 60); // the 10:30 cutoff: the file is refused once
    assert.equal((await m.payout(id)).status, "modality_selected");
    await m.advance(10); // the file's retry after 5 s is taken
    const sent = await m.payout(id);
    assert.equal(sent.status, "funds_sent");
    assert.equal(sent.retry_count, 0, "the payout itself never failed");
    const { rows } = await m.database.readClient.execute(
      "SELECT status, transmitted_at - cutoff_at AS delay_ms FROM rail_batches",
    );
    assert.deepEqual(rows.map((row) => [row.status, row.delay_ms]), [["transmitted", 5_000]]);
    await m.advance(3 * DAY_SECONDS);
    assert.equal((await m.payout(id)).status, "completed");
    assert.deepEqual(await m.events(id), [
      "created",
      "offered",
      "selected",
      "processing",
      "completed",
    ]);
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit, b.bank], [995_000, 0, 0, -995_000]);
  });
});

Deno.test("a declined card fails before sending and is re-offered; a cancel returns exactly the hold", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const created = await m.create({ amountCents: 7_500 });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle();
    const declined = await m.select(id, 4, { cardNumber: "4000000000000002" });
    assert.ok(declined.ok);
    assert.equal((await m.payout(id)).status, "modality_selected", "until its submit job runs");
    await m.settle();
    assert.equal((await m.payout(id)).status, "modality_offered");
    assert.equal((await m.payout(id)).failure_reason, "card_declined");
    const canceled = await m.cancel(id);
    assert.ok(canceled.ok);
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [1_000_000, 0, 0]);
    assert.deepEqual(await m.events(id), [
      "created",
      "offered",
      "selected",
      "failed",
      "offered",
      "canceled",
    ]);
    const again = await m.cancel(id);
    assert.ok(!again.ok && again.code === "not_cancelable");
  });
});

Deno.test("insufficient funds: a normal create is refused naming the shortfall, nothing is written", async () => {
  await withMoney(async (m) => {
    await m.fund(10_000);
    const refused = await m.create([{ amountCents: 6_000 }, {
      payeeUuid: "p1",
      amountCents: 6_000,
    }]);
    assert.deepEqual(refused, {
      ok: false,
      code: "insufficient_funds",
      message: "available is $100.00; this disbursement needs $120.00 (short by $20.00)",
      details: { available_cents: 10_000, needed_cents: 12_000, shortfall_cents: 2_000 },
    });
    const { rows } = await m.database.readClient.execute(
      "SELECT (SELECT count(*) FROM payouts) p, (SELECT count(*) FROM disbursements) d",
    );
    assert.deepEqual({ ...rows[0] }, { p: 0, d: 0 });
    assert.equal((await m.balances()).available, 10_000);
  });
});

Deno.test("large disbursements wait in pending_funds and are released oldest first as funds arrive", async () => {
  await withMoney(async (m) => {
    await m.fund(10_000);
    const first = await m.create({ amountCents: 50_000 }, { large: true });
    const second = await m.create({ amountCents: 20_000 }, { large: true });
    assert.ok(first.ok && second.ok);
    assert.equal(first.value.payouts[0].status, "pending_funds");
    assert.equal((await m.balances()).reserved, 0, "nothing is held while waiting");
    // 30,000 more: 40,000 available covers the second but not the first, which is older: both wait.
    await m.fund(30_000, "WireTransfer", true);
    assert.equal((await m.payout(second.value.payouts[0].id)).status, "pending_funds");
    // The ACH funding's debit goes in Monday's 10:30 file and clears at Wednesday 17:00 New York
    // (effective date + 2 banking days), then releases both, oldest first.
    await m.fund(40_000, "ACH");
    // Requested, the ledger counts it once its debit goes to the bank (the 10:30 file).
    assert.equal((await m.balances()).pending_funding, 0);
    await m.advance(2 * DAY_SECONDS);
    assert.equal((await m.balances()).pending_funding, 40_000);
    assert.equal((await m.payout(first.value.payouts[0].id)).status, "pending_funds");
    await m.advance(DAY_SECONDS);
    assert.equal((await m.payout(first.value.payouts[0].id)).status, "modality_offered");
    assert.equal((await m.payout(second.value.payouts[0].id)).status, "modality_offered");
    const b = await m.balances();
    assert.deepEqual([b.available, b.pending_funding, b.reserved], [10_000, 0, 70_000]);
  });
});

Deno.test("an ACH funding returned before it clears goes back to the bank; its clearing does nothing", async () => {
  await withMoney(async (m) => {
    const fundingId = await m.fund(40_000, "ACH");
    const returned = await m.database.writer.write((tx) =>
      returnAchFunding(tx, fundingId, m.now())
    );
    assert.ok(returned.ok && returned.value.status === "Returned");
    await m.advance(5 * DAY_SECONDS);
    const b = await m.balances();
    assert.deepEqual([b.available, b.pending_funding, b.bank], [0, 0, 0]);
  });
});

Deno.test("a payout needing two endorsements waits in awaiting_endorsement; canceling returns its hold", async () => {
  await withMoney(async (m) => {
    await m.fund(100_000);
    const created = await m.create({
      amountCents: 30_000,
      permissionRequiredFrom: ["party-a", "party-b"],
    });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    assert.equal(created.value.payouts[0].status, "awaiting_endorsement");
    await m.settle();
    assert.equal(
      (await m.payout(id)).status,
      "awaiting_endorsement",
      "no offer before the endorsements",
    );
    const moved = await m.database.writer.write((tx) =>
      applyMove(tx, id, { kind: "endorsements_complete" }, m.now())
    );
    assert.ok(moved.ok && moved.value.status === "modality_offered");
    assert.ok((await m.cancel(id)).ok);
    assert.equal((await m.balances()).available, 100_000);
  });
});

Deno.test("an unanswered offer expires after 90 days and cancels; a renewed offer gets its own expiry", async () => {
  await withMoney(async (m) => {
    await m.fund(100_000);
    const quiet = await m.create({ amountCents: 10_000 });
    const renewed = await m.create({ amountCents: 20_000 });
    assert.ok(quiet.ok && renewed.ok);
    const quietId = quiet.value.payouts[0].id;
    const renewedId = renewed.value.payouts[0].id;
    await m.settle();
    await m.advance(30 * DAY_SECONDS);
    // Day 30: the second payee picks a card that is declined, and is offered the methods again.
    assert.ok((await m.select(renewedId, 4, { cardNumber: "4000000000000002" })).ok);
    await m.settle();
    assert.equal((await m.payout(renewedId)).status, "modality_offered");
    const reminders = async (payoutId: string) =>
      Number(
        (await m.database.readClient.execute({
          sql:
            "SELECT count(*) AS n FROM notifications WHERE payout_id = ? AND subject LIKE 'Reminder:%'",
          args: [payoutId],
        })).rows[0].n,
      );
    await m.advance(53 * DAY_SECONDS - 1);
    assert.equal(await reminders(quietId), 0, "day 83, one second before the first reminder");
    await m.advance(1);
    assert.equal(await reminders(quietId), 1, "a week before the offer expires");
    assert.equal(await reminders(renewedId), 0, "the reminders of its first offer are moot");
    await m.advance(6 * DAY_SECONDS);
    assert.equal(await reminders(quietId), 2, "a day before the offer expires");
    await m.advance(DAY_SECONDS - 1);
    assert.equal((await m.payout(quietId)).status, "modality_offered", "one second before 90 days");
    await m.advance(1);
    assert.equal((await m.payout(quietId)).status, "canceled");
    assert.equal(
      (await m.payout(renewedId)).status,
      "modality_offered",
      "its offer was renewed on day 30",
    );
    await m.advance(30 * DAY_SECONDS);
    assert.equal(await reminders(renewedId), 2, "its renewed offer had its own reminders");
    assert.equal((await m.payout(renewedId)).status, "canceled");
    assert.deepEqual(await m.balances().then((b) => [b.available, b.reserved]), [100_000, 0]);
    assert.deepEqual((await m.events(quietId)).slice(-1), ["canceled"]);
  });
});

Deno.test("an offer keeps one pending step: each reminder schedules the next, reminders from before the chain do not", async () => {
  await withMoney(async (m) => {
    await m.fund(100_000);
    const created = await m.create({ amountCents: 10_000 });
    const legacy = await m.create({ amountCents: 20_000 });
    assert.ok(created.ok && legacy.ok);
    const id = created.value.payouts[0].id;
    const legacyId = legacy.value.payouts[0].id;
    await m.settle();
    const pending = async (payoutId: string) =>
      (await m.database.readClient.execute({
        sql: `SELECT kind, due_at FROM scheduled_jobs WHERE subject_id = ? AND done_at IS NULL
              ORDER BY due_at`,
        args: [payoutId],
      })).rows.map((row) => [String(row.kind), (Number(row.due_at) - m.now()) / 86_400_000]);
    assert.deepEqual(await pending(id), [["payout.remind_offer", 83]]);
    // An offer scheduled the earlier way: both reminders and the expiry pending, without expires_at.
    await m.database.writer.write(async (tx) => {
      await tx.execute({
        sql: "UPDATE scheduled_jobs SET done_at = ? WHERE subject_id = ? AND done_at IS NULL",
        args: [m.now(), legacyId],
      });
      for (
        const [kind, days] of [["remind_offer", 83], ["remind_offer", 89], ["expire_offer", 90]]
      ) {
        await tx.execute({
          sql:
            `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, payload, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)`,
          args: [
            `job_legacy_${days}`,
            m.companyId,
            `payout.${kind}`,
            legacyId,
            m.now() + Number(days) * 86_400_000,
            JSON.stringify({ offered_at: m.now() }),
            m.now(),
          ],
        });
      }
    });
    await m.advance(83 * DAY_SECONDS);
    assert.deepEqual(await pending(id), [["payout.remind_offer", 6]]);
    assert.deepEqual(await pending(legacyId), [["payout.remind_offer", 6], [
      "payout.expire_offer",
      7,
    ]]);
    await m.advance(6 * DAY_SECONDS);
    assert.deepEqual(await pending(id), [["payout.expire_offer", 1]]);
    assert.deepEqual(await pending(legacyId), [["payout.expire_offer", 1]]);
    await m.advance(DAY_SECONDS);
    assert.deepEqual(await pending(id), []);
    assert.deepEqual(await pending(legacyId), []);
    assert.equal((await m.payout(id)).status, "canceled");
    assert.equal((await m.payout(legacyId)).status, "canceled");
    const reminders = await m.database.readClient.execute({
      sql: `SELECT payout_id, count(*) AS n FROM notifications WHERE subject LIKE 'Reminder:%'
            GROUP BY payout_id ORDER BY n`,
      args: [],
    });
    assert.deepEqual(reminders.rows.map((row) => Number(row.n)), [2, 2]);
  });
});

Deno.test("a failed payout whose re-offer found available short is offered again when funds arrive", async () => {
  await withMoney(async (m) => {
    // Method 5 costs the payor 3.00; ACH nothing: the hold is the amount plus 3.00 until ACH is chosen.
    await m.database.writer.write((tx) =>
      tx.execute({
        sql:
          "INSERT INTO fee_schedules (company_id, payment_method_id, payor_fee_cents) VALUES (?, 5, 300)",
        args: [m.companyId],
      })
    );
    await m.fund(10_300);
    const created = await m.create({
      email: "fail+ach@example.test",
      amountCents: 10_000,
      allowedPaymentMethodIds: [1, 5],
    });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle(); // offered; the test payee picks ACH at once, which frees the 3.00
    await m.advance(30 * 60); // the 10:30 cutoff's file goes
    assert.equal((await m.payout(id)).status, "funds_sent");
    assert.equal((await m.balances()).available, 300);
    const other = await m.create({ amountCents: 300, allowedPaymentMethodIds: [1] });
    assert.ok(other.ok);
    assert.equal((await m.balances()).available, 0);

    await m.advance(2 * DAY_SECONDS); // R03: failed; offering both methods again needs 3.00 more
    let payout = await m.payout(id);
    assert.equal(payout.status, "failed");
    assert.equal(payout.failure_reason, "R03");
    let b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [0, 10_000 + 300, 0]);

    await m.fund(200); // still 1.00 short: it stays failed
    await m.settle();
    assert.equal((await m.payout(id)).status, "failed");
    assert.equal((await m.balances()).available, 200);

    await m.fund(100);
    await m.settle();
    payout = await m.payout(id);
    assert.equal(payout.status, "modality_offered");
    assert.equal(payout.held_cents, 10_300);
    b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [0, 10_300 + 300, 0]);
    assert.deepEqual((await m.events(id)).slice(-2), ["failed", "offered"]);
    const { rows } = await m.database.readClient.execute({
      sql: "SELECT count(*) AS n FROM notifications WHERE payout_id = ?",
      args: [id],
    });
    assert.equal(rows[0].n, 2, "the first offer's message and the new one");
  });
});

Deno.test("a postal check needs a mailing address: refused without one; success+check without one is mailed to the documented test address", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const plain = await m.create({ email: "pat@example.test", allowedPaymentMethodIds: [2] });
    assert.ok(plain.ok);
    const plainId = plain.value.payouts[0].id;
    await m.settle();
    const refused = await m.database.writer.write((tx) =>
      selectMethod(tx, plainId, { paymentMethodId: 2, details: {} }, m.now())
    );
    assert.deepEqual(refused, {
      ok: false,
      code: "mailing_address_missing",
      message:
        `a postal check needs the payee's mailing address (address_one, city, state, zip_code); payout ${plainId} has none`,
      field: "address_one",
    });
    assert.equal((await m.payout(plainId)).status, "modality_offered");

    const magic = await m.create({
      email: "success+check@example.test",
      allowedPaymentMethodIds: [2],
      amountCents: 25_000,
    }, { uuid: "magic" });
    assert.ok(magic.ok);
    const magicId = magic.value.payouts[0].id;
    await m.settle();
    const payout = await m.payout(magicId);
    assert.equal(payout.payment_method_id, 2);
    assert.deepEqual(addressLinesOf(payout), ["1 Sandbox Way", "Austin, TX 73301"]);
  });
});

Deno.test("account 000333333338: the payout completes, then the sandbox bank returns it R02 three banking days later: a late return, owed as unclaimed property, on the bank's statement", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const created = await m.create({ email: "noaction@example.test", amountCents: 5_000 });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle();
    // As the portal keeps what the payee typed: the routing number, the account sealed.
    const selected = await m.database.writer.write(async (tx) =>
      selectMethod(tx, id, {
        paymentMethodId: 1,
        details: { accountNumber: "000333333338" },
        kept: {
          routing_number: "021000021",
          account_sealed: await testSecretBox.sealText("000333333338"),
        },
      }, m.now())
    );
    assert.ok(selected.ok);
    // The 10:30 same-day file (effective Monday); completed Wednesday 17:00 New York.
    await m.advance((Date.UTC(2026, 0, 7, 23) - m.now()) / 1000);
    assert.equal((await m.payout(id)).status, "completed");
    // Monday 2026-01-12, 08:00 New York: not yet; 09:00 the late return file is imported.
    await m.advance((Date.UTC(2026, 0, 12, 13) - m.now()) / 1000);
    assert.equal((await m.balances()).available, 995_000);
    await m.advance(2 * 3600);
    const payout = await m.payout(id);
    assert.equal(payout.status, "completed", "completed stays terminal");
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit, b.bank], [
      1_000_000,
      0,
      0,
      -1_000_000,
    ]);
    const { rows: events } = await m.database.readClient.execute({
      sql: "SELECT event_type_id, created_at FROM events WHERE payout_id = ? ORDER BY rowid",
      args: [id],
    });
    assert.deepEqual(events.slice(-1).map((e) => [e.event_type_id, e.created_at]), [
      [12, Date.UTC(2026, 0, 12, 14)],
    ]);
    const { rows: entries } = await m.database.readClient.execute(
      "SELECT status, return_code, trace_number FROM rail_batch_entries",
    );
    assert.deepEqual(entries.map((e) => [e.status, e.return_code]), [["completed", "R02"]]);
    const owed = await listUnclaimed(m.database, m.companyId);
    assert.deepEqual(owed.map((item) => [item.payoutId, item.kind, item.amountCents]), [
      [id, "late_return", 5_000],
    ]);
    // Tuesday: the sandbox bank's statement of Monday shows the money back, matched by its trace.
    await m.advance(DAY_SECONDS);
    const { rows: lines } = await m.database.readClient.execute({
      sql: `SELECT l.type_code, l.direction, l.amount_cents, l.match_reason
              FROM statement_lines l JOIN statement_days d ON d.id = l.day_id
             WHERE d.statement_date = '2026-01-12'`,
      args: [],
    });
    assert.deepEqual(lines.map((l) => ({ ...l })), [{
      type_code: "168",
      direction: "credit",
      amount_cents: 5_000,
      match_reason: `ACH return of trace ${entries[0].trace_number} for $50.00`,
    }]);
    const { rows: open } = await m.database.readClient.execute(
      "SELECT count(*) AS n FROM recon_exceptions",
    );
    assert.equal(open[0].n, 0);
  });
});
