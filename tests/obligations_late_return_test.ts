/**
 * Unclaimed property of money that came back after its payout completed (a PayPal refund, a late
 * ACH return), not only a card's unspent balance: listed once under its kind from the return,
 * noticed, reported, remitted from available to unclaimed_remitted with a timeline row and event
 * 17, the payout staying completed; the console names the kind and shows the settings; the portal
 * tells the payee which state holds the money.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { listUnclaimed } from "../lib/obligations/unclaimed.ts";
import { recordLateReturn } from "../lib/payouts/store.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { lastMessage, pathOf, PortalBrowser, verify } from "./portal_helpers.ts";
import { consoleAs, lineBalances, textOf } from "./console_helpers.ts";
import { DAY_SECONDS, openMoneyFixture } from "./money_core_helpers.ts";
import { configure, owe, reportAndRemit } from "./obligations_helpers.ts";

const ADDRESS = { address_one: "12 Elm Street", city: "Austin", state: "TX", zip_code: "73301" };

Deno.test("test: a PayPal refund after completion is owed from the return, listed as a late return, reported, remitted from available with its timeline row; the portal names the state", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, f.clock.now());
    const call = adminCall(app, ana.token);
    const set = await call("obligations:set", {
      tin: f.cast.acme.tin,
      "holder-state": "DE",
      "sandbox-dormancy-days": "1",
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-BACK",
      large_disbursement: false,
      payees: [payee("success+paypal", 250, { allowed_payment_method_ids: [7], ...ADDRESS })],
    });
    assert.equal(created.status, 201);
    // The sandbox's PayPal: the batch goes at the cutoff, its first poll a minute on completes it.
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 60 });
    const database = f.deps.databases.test;
    const [payout] = (await database.readClient.execute("SELECT id, status FROM payouts")).rows;
    const payoutId = String(payout.id);
    assert.equal(payout.status, "completed");
    const list = () => call("unclaimed:list", { tin: f.cast.acme.tin, environment: "test" });
    assert.deepEqual((await list()).body.result.items, [], "a completed payout owes nothing");

    const returned = await call("payout:late-return", {
      payout: payoutId,
      reason: "refunded",
      environment: "test",
    });
    assert.equal(returned.status, 200, JSON.stringify(returned.body));
    const returnedAt = f.clock.now();
    // A day later the sandbox's one-day dormancy is over; the sweep the return asked for ran.
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: DAY_SECONDS + 60 });
    const listed = await list();
    assert.equal(listed.body.result.items.length, 1, JSON.stringify(listed.body));
    const [item] = listed.body.result.items;
    assert.deepEqual(
      [
        item.payout_id,
        item.kind,
        item.kind_name,
        item.status,
        item.amount,
        item.state,
        item.last_owner_activity,
      ],
      [
        payoutId,
        "late_return",
        "late return",
        "completed",
        250,
        "TX",
        new Date(returnedAt).toISOString().slice(0, 10),
      ],
    );
    assert.deepEqual(
      item.notices.map((n: { channel: string; outcome: string }) => [n.channel, n.outcome]),
      [["email", "sent"], ["letter", "sent"]],
    );

    // The console names the kind, and shows the settings read only.
    const viewer = (await consoleAs(f, { email: "vic@ops.test", role: "viewer" })).browser;
    const page = textOf((await viewer.get("/console/unclaimed?env=test")).html);
    assert.match(page, new RegExp(`TX .*${payoutId}.*Pat Doe.*\\$250\\.00.*late return.*IN01`));
    assert.match(
      page,
      /Acme.*cancel: the hold goes back to available.*none: an offer expires after 90 days.*a postal check printed in house.*DE.*none: the built-in table.*1 days/,
    );

    const notice = await lastMessage(f, "success+paypal@example.test", /go to the state/);
    const before = await lineBalances(f, f.cast.acme.autoLineId);
    const { read, remitted } = await reportAndRemit(call, f.cast.acme.tin, "TX");
    assert.deepEqual(read.properties.map((p) => [p.accountNumber, p.amountCents]), [[
      payoutId,
      25_000,
    ]]);
    assert.deepEqual([remitted.escheated, remitted.amount], [1, 250]);
    const after = await lineBalances(f, f.cast.acme.autoLineId);
    assert.deepEqual(
      [after.available, after.unclaimed_remitted],
      [before.available - 25_000, before.unclaimed_remitted + 25_000],
    );
    assert.deepEqual((await list()).body.result.items, []);

    // Still completed; the timeline has the remittance, the events 17.
    const transaction = await (await api(
      f,
      "GET",
      "/api/disbursements/CLM-BACK/payees/success+paypal/transaction",
    )).json() as { status: string; history: { status: string; detail: string }[] };
    assert.equal(transaction.status, "Completed");
    assert.deepEqual(transaction.history.slice(-2).map((h) => [h.status, h.detail]), [
      ["Completed", "refunded"],
      [
        "Completed",
        `the late return that came back remitted to TX as unclaimed property (report ${
          (await database.readClient.execute("SELECT id FROM unclaimed_reports")).rows[0].id
        })`,
      ],
    ]);
    const events = await database.readClient.execute({
      sql: "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY rowid",
      args: [payoutId],
    });
    assert.equal(Number(events.rows.at(-1)!.event_type_id), 17);
    const [escheat] = (await database.readClient.execute({
      sql: "SELECT kind FROM ledger_transactions WHERE payout_id = ? ORDER BY rowid DESC LIMIT 1",
      args: [payoutId],
    })).rows;
    assert.equal(escheat.kind, "payout.escheat");
    assert.deepEqual(await verifyLedger(database.readClient), []);
    const today = new Date(f.clock.now()).toISOString().slice(0, 10);
    assert.equal(
      (await lineTieOut(database.readClient, f.cast.acme.autoLineId, today))!.difference,
      0,
    );

    // The payee comes back through the notice's link: the page names the state holding the money.
    const browser = new PortalBrowser(f);
    const link = pathOf(notice.links[0]);
    await verify(browser, link, "success+paypal@example.test");
    await browser.get(link);
    assert.match(browser.lastHtml, /sent it to the state of TX as unclaimed property/);
  }, { SANDBOX_INBOX: "1" });
});

Deno.test("a late ACH return is owed what came back (less the payee fee), once: a second return is refused and the list keeps one item", async () => {
  const m = await openMoneyFixture();
  try {
    await configure(m, { holder_state: "DE", sandbox_dormancy_days: 1 });
    await m.database.writer.write((tx) =>
      tx.execute({ sql: "INSERT INTO fee_schedules VALUES (?, 1, 0, 50, 0)", args: [m.companyId] })
    );
    await m.fund(100_000);
    const id = await owe(m, "acher", { amountCents: 10_000 });
    assert.ok((await m.select(id, 1, { accountNumber: "000123456789" })).ok);
    await m.advance(5 * DAY_SECONDS);
    assert.equal((await m.payout(id)).status, "completed");
    const returnedAt = m.now();
    const returned = await m.database.writer.write((tx) =>
      recordLateReturn(tx, id, "R10", returnedAt)
    );
    assert.ok(returned.ok);
    const again = await m.database.writer.write((tx) => recordLateReturn(tx, id, "R10", m.now()));
    assert.equal(again.ok ? null : again.code, "already_returned");
    const owed = await listUnclaimed(m.database, m.companyId);
    assert.deepEqual(
      owed.map((i) => [i.payoutId, i.kind, i.amountCents, i.owedSince, i.state]),
      [[id, "late_return", 9_950, returnedAt, "IL"]],
    );
  } finally {
    await m.close();
  }
});
