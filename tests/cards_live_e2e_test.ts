/**
 * End to end in live (issue 34): a company whose Lithic settings a second admin approved, pointed
 * at the Lithic contract server. Before them a create allowing only virtual cards is refused. It
 * funds its line by wire, pays one payee by virtual card (issued and completed at once) and fails
 * another (Lithic refuses the card: card_not_issued, offered again); a forged webhook is refused
 * and changes nothing; Lithic's signed webhook for the first card, closed after a partial purchase,
 * brings its unspent balance back as a late return, once. Checked: what Lithic was asked, the
 * payouts, the ledger, the tie-out, the events and the audit log.
 */
import assert from "node:assert/strict";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { api, payee } from "./api_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { approvedSettings, fundByWire, withLiveRun } from "./live_provider_helpers.ts";
import { LithicContractServer } from "./lithic_contract_server.ts";

const MONDAY_15_00 = Date.UTC(2026, 0, 5, 15, 0);

Deno.test("end to end in live: Lithic settings approved by a second admin, a card issued and completed, a refused card re-offered, a forged webhook refused, the unspent balance back once", async () => {
  const server = await LithicContractServer.start();
  try {
    await withHttpFixture((f) => endToEnd(f, server));
  } finally {
    await server.close();
  }
});

async function endToEnd(f: HttpFixture, server: LithicContractServer): Promise<void> {
  server.now = () => f.clock.now();
  await withLiveRun(f, async (r) => {
    const { app, acme, asLive, asAlice, rows } = r;
    const live = f.deps.databases.live;
    const runUntil = (at: number) => {
      f.clock.set(at);
      return r.run();
    };

    // 0. Without Lithic settings, live does not offer virtual cards.
    const refused = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-CARD-0",
      large_disbursement: false,
      line: "auto",
      payees: [payee("P-CARD-0", 10, { allowed_payment_method_ids: [3] })],
    }, asLive);
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /no rail is configured in live for the allowed methods vcc/);

    // 1. Lithic settings: requested by one admin, saved once another approves.
    const requested = await approvedSettings(r, "lithic:set", server.settingsJson());
    assert.deepEqual([requested.kind, requested.status], [
      "lithic_settings.change",
      "pending_approval",
    ]);
    const shown = await asAlice("lithic:show", { tin: acme.tin });
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    assert.deepEqual(shown.body.result.settings, {
      api_key: `…${server.apiKey.slice(-4)}`,
      base_url: server.baseUrl,
      webhook_secret: "(sealed)",
      card_valid_days: 30,
      allowed_mccs: [],
    });
    assert.ok(!JSON.stringify(shown.body).includes(server.apiKey));
    assert.ok(!JSON.stringify(shown.body).includes(server.webhookSecret));

    // 2. A $1,000.00 wire, recorded by Alice and approved by Bruno.
    await fundByWire(r, 1000);

    // 3. Two payees choose a virtual card: $250.00 is issued, $100.00 Lithic refuses.
    f.clock.set(MONDAY_15_00 + 60_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-CARD-1",
      large_disbursement: false,
      line: "auto",
      payees: [
        payee("P-CARD-1", 250, { allowed_payment_method_ids: [3] }),
        payee("P-CARD-2", 100, { allowed_payment_method_ids: [3, 1] }),
      ],
    }, asLive);
    assert.equal(created.status, 201, await created.clone().text());
    await runUntil(f.clock.now());
    const idOf = async (uuid: string) =>
      String((await rows("SELECT id FROM payouts WHERE payee_uuid = ?", uuid))[0].id);
    const [paid, declined] = [await idOf("P-CARD-1"), await idOf("P-CARD-2")];
    const choose = (payoutId: string) =>
      live.writer.write((tx) =>
        selectMethod(tx, payoutId, {
          paymentMethodId: 3,
          details: {},
          kept: { email: `${payoutId}@payee.test` },
        }, f.clock.now())
      );
    assert.ok((await choose(paid)).ok);
    await runUntil(f.clock.now());
    server.disruptNext("POST", /^\/v1\/cards$/, {
      status: 400,
      message: "Insufficient funds in program funding account",
    });
    assert.ok((await choose(declined)).ok);
    await runUntil(f.clock.now());
    const status = async (payoutId: string) =>
      (await rows("SELECT status, failure_reason FROM payouts WHERE id = ?", payoutId))[0];
    assert.deepEqual(await status(paid), { status: "completed", failure_reason: null });
    assert.deepEqual(await status(declined), {
      status: "modality_offered",
      failure_reason: "card_not_issued",
    });
    const [card] = server.cardsOf(`${paid}-1`);
    assert.deepEqual([card.type, card.spend_limit, card.state], ["SINGLE_USE", 25_000, "OPEN"]);
    assert.equal(server.cardsOf(`${declined}-1`).length, 0);

    // 4. A forged webhook is refused; nothing is written.
    await server.spend(card.token, 6_000, "SETTLED");
    const post = (signed: { body: string; headers: Record<string, string> }) =>
      app.request(`/rails/lithic/${acme.id}/live/webhook`, {
        method: "POST",
        headers: signed.headers,
        body: signed.body,
      });
    const event = { event_type: "card_transaction.updated", card_token: card.token };
    const forged = await post(
      server.signedWebhook(event, { secret: `whsec_${btoa("a secret Lithic never gave us")}` }),
    );
    assert.equal(forged.status, 400);
    assert.equal((await forged.json()).error.code, "webhook_not_verified");
    assert.deepEqual(await rows("SELECT count(*) AS n FROM lithic_notices"), [{ n: 0 }]);
    assert.deepEqual(
      await rows(
        "SELECT count(*) AS n FROM scheduled_jobs WHERE kind = 'card.check' AND done_at IS NULL AND due_at <= ?",
        f.clock.now(),
      ),
      [{ n: 0 }],
    );

    // 5. Lithic's webhook: verified, recorded once; the check reads the closed card from Lithic.
    const signed = server.signedWebhook(event);
    const verified = await post(signed);
    assert.equal(verified.status, 200, await verified.clone().text());
    assert.equal((await post(signed)).status, 200, "Lithic's retry of the same message");
    assert.deepEqual(await rows("SELECT id, card_token FROM lithic_notices"), [
      { id: signed.headers["webhook-id"], card_token: card.token },
    ]);
    await runUntil(f.clock.now());
    assert.deepEqual(await status(paid), { status: "completed", failure_reason: null });
    assert.deepEqual(
      await rows(
        "SELECT state, spent_cents, reclaimed_cents FROM virtual_cards WHERE payout_id = ?",
        paid,
      ),
      [{ state: "CLOSED", spent_cents: 6_000, reclaimed_cents: 19_000 }],
    );

    // The ledger: $1,000.00 funded, $250.00 paid by card, $190.00 of it back, $100.00 held.
    assert.deepEqual(await readLineBalances(live.readClient, acme.autoLineId), {
      available: 84_000,
      pending_funding: 0,
      reserved: 10_000,
      in_transit: 0,
      fees_payor: 0,
      fees_payee: 0,
      fees_service: 0,
      bank: -94_000,
      funding_shortfall: 0,
      unclaimed_remitted: 0,
    });
    assert.deepEqual(await verifyLedger(live.readClient), []);
    const tieOut = (await lineTieOut(live.readClient, acme.autoLineId, "2026-01-05"))!;
    assert.deepEqual(
      [tieOut.funded, tieOut.disbursed, tieOut.returned, tieOut.closing, tieOut.difference],
      [100_000, 25_000, 19_000, 94_000, 0],
    );

    // The events: the card payout completed and came back; the refused one failed and was offered again.
    const events = async (payoutId: string) =>
      (await rows(
        "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY created_at, rowid",
        payoutId,
      ))
        .map((row) => Number(row.event_type_id));
    assert.deepEqual((await events(paid)).slice(-2), [7, 12]);
    assert.ok((await events(declined)).includes(8));

    // The audit log: who asked for the Lithic settings and who approved them.
    assert.deepEqual(
      (await rows("SELECT action, operator_email, object_type FROM audit_log ORDER BY seq"))
        .filter((row) => row.action !== "login" && row.action !== "operator:create")
        .slice(0, 4),
      [
        { action: "ofac:load", operator_email: "alice@ops.test", object_type: "sanctions_list" },
        { action: "approval:request", operator_email: "alice@ops.test", object_type: "approval" },
        { action: "lithic:set", operator_email: "bruno@ops.test", object_type: "lithic_settings" },
        { action: "approval:approve", operator_email: "bruno@ops.test", object_type: "approval" },
      ],
    );
    assert.ok(
      !JSON.stringify(await rows("SELECT before, after FROM audit_log")).includes(server.apiKey),
    );
  });
}
