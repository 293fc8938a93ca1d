/**
 * End to end in live (issue 34): a company whose Increase settings a second admin approved,
 * pointed at the Increase contract server. Before them a create allowing only instant deposit is
 * refused. It funds its line by wire; one payee's card is validated and pushed, a forged webhook
 * is refused and changes nothing, Increase's signed webhook completes the push (its replay records
 * nothing); another payee's card fails its $0 validation, so the payout fails `card_declined` and
 * is offered again, nothing pushed. Checked: what Increase was asked, the payouts, the network in
 * the payout's details, the ledger, the tie-out, the events and the audit log.
 */
import assert from "node:assert/strict";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { api, payee } from "./api_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { approvedSettings, fundByWire, withLiveRun } from "./live_provider_helpers.ts";
import { IncreaseContractServer } from "./increase_contract_server.ts";

Deno.test("end to end in live: Increase settings approved by a second admin, a card validated and pushed, a forged webhook refused, Increase's webhook completing it, a declined validation re-offered", async () => {
  const server = await IncreaseContractServer.start();
  try {
    await withHttpFixture((f) => endToEnd(f, server));
  } finally {
    await server.close();
  }
});

async function endToEnd(f: HttpFixture, server: IncreaseContractServer): Promise<void> {
  await withLiveRun(f, async (r) => {
    const { app, acme, asLive, asAlice, rows, run } = r;
    const live = f.deps.databases.live;

    // 0. Without Increase settings, live does not offer instant deposit.
    const refused = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-INSTANT-0",
      large_disbursement: false,
      line: "auto",
      payees: [payee("P-INSTANT-0", 10, { allowed_payment_method_ids: [4] })],
    }, asLive);
    assert.equal(refused.status, 400);
    assert.match(
      await refused.text(),
      /no rail is configured in live for the allowed methods instant_deposit/,
    );

    // 1. Increase settings: requested by one admin, saved once another approves.
    const requested = await approvedSettings(r, "increase:set", server.settingsJson());
    assert.equal(requested.kind, "increase_settings.change");
    const shown = await asAlice("increase:show", { tin: acme.tin });
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    assert.equal(shown.body.result.settings.api_key, `…${server.apiKey.slice(-4)}`);
    assert.equal(shown.body.result.settings.webhook_secret, "(sealed)");
    assert.ok(!JSON.stringify(shown.body).includes(server.apiKey));

    // 2. A $1,000.00 wire, recorded by Alice and approved by Bruno.
    await fundByWire(r, 1000);

    // 3. Two payees choose instant deposit with cards typed at the hosted page.
    f.clock.set(f.clock.now() + 60_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-INSTANT-1",
      large_disbursement: false,
      line: "auto",
      payees: [
        payee("P-INSTANT-1", 250, { allowed_payment_method_ids: [4] }),
        payee("P-INSTANT-2", 100, { allowed_payment_method_ids: [4, 1] }),
      ],
    }, asLive);
    assert.equal(created.status, 201, await created.clone().text());
    await run();
    const idOf = async (uuid: string) =>
      String((await rows("SELECT id FROM payouts WHERE payee_uuid = ?", uuid))[0].id);
    const [paid, declined] = [await idOf("P-INSTANT-1"), await idOf("P-INSTANT-2")];
    const good = server.tokenize("4000123412341234");
    const bad = server.tokenize("4000999988887777");
    bad.validation = "declined";
    const choose = (payoutId: string, cardTokenId: string) =>
      live.writer.write((tx) =>
        selectMethod(tx, payoutId, {
          paymentMethodId: 4,
          details: {},
          kept: { card_token_id: cardTokenId, cardholder_name: "Pat Doe", zip: "73301" },
        }, f.clock.now())
      );
    assert.ok((await choose(paid, good.id)).ok);
    assert.ok((await choose(declined, bad.id)).ok);
    await run();
    const status = async (payoutId: string) =>
      (await rows("SELECT status, failure_reason FROM payouts WHERE id = ?", payoutId))[0];
    assert.deepEqual(await status(paid), { status: "funds_sent", failure_reason: null });
    assert.deepEqual(await status(declined), {
      status: "modality_offered",
      failure_reason: "card_declined",
    });
    const [push] = server.pushesTo(good.id);
    assert.deepEqual([push.idempotency_key, push.presentment_amount.value], [
      `${paid}-1`,
      "250.00",
    ]);
    assert.equal(server.pushesTo(bad.id).length, 0);
    const [details] = await rows("SELECT method_details FROM payouts WHERE id = ?", paid);
    assert.equal(JSON.parse(String(details.method_details)).network, "visa");

    // 4. A forged webhook is refused; nothing is written.
    push.status = "complete";
    const post = (event: { body: string; headers: Record<string, string> }) =>
      app.request(`/rails/increase/${acme.id}/live/webhook`, {
        method: "POST",
        headers: event.headers,
        body: event.body,
      });
    const forged = await post(
      await server.signedEvent(push, { at: new Date(f.clock.now()), secret: "whsec_forged" }),
    );
    assert.equal(forged.status, 400);
    assert.equal((await forged.json()).error.code, "webhook_not_verified");
    assert.deepEqual(await rows("SELECT count(*) AS n FROM increase_notices"), [{ n: 0 }]);

    // 5. Increase's webhook: verified, recorded once; the check reads the push from Increase.
    const event = await server.signedEvent(push, { at: new Date(f.clock.now()) });
    const verified = await post(event);
    assert.equal(verified.status, 200, await verified.clone().text());
    assert.equal((await post(event)).status, 200, "Increase's retry of the same event");
    assert.equal((await rows("SELECT count(*) AS n FROM increase_notices"))[0].n, 1);
    await run();
    assert.deepEqual(await status(paid), { status: "completed", failure_reason: null });
    assert.ok(server.requests.includes(`GET /card_push_transfers/${push.id}`));

    // The ledger: $1,000.00 funded, $250.00 pushed, $100.00 held for the re-offered payee.
    assert.deepEqual(await readLineBalances(live.readClient, acme.autoLineId), {
      available: 65_000,
      pending_funding: 0,
      reserved: 10_000,
      in_transit: 0,
      fees_payor: 0,
      fees_payee: 0,
      fees_service: 0,
      bank: -75_000,
      funding_shortfall: 0,
      unclaimed_remitted: 0,
    });
    assert.deepEqual(await verifyLedger(live.readClient), []);
    const day = new Date(f.clock.now()).toISOString().slice(0, 10);
    const tieOut = (await lineTieOut(live.readClient, acme.autoLineId, day))!;
    assert.deepEqual(
      [tieOut.funded, tieOut.disbursed, tieOut.returned, tieOut.closing, tieOut.difference],
      [100_000, 25_000, 0, 75_000, 0],
    );

    const events = async (payoutId: string) =>
      (await rows(
        "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY created_at, rowid",
        payoutId,
      )).map((row) => Number(row.event_type_id));
    assert.equal((await events(paid)).at(-1), 7);
    assert.ok((await events(declined)).includes(8));

    assert.deepEqual(
      (await rows("SELECT action, operator_email, object_type FROM audit_log ORDER BY seq"))
        .filter((row) => row.action !== "login" && row.action !== "operator:create")
        .slice(0, 4),
      [
        { action: "ofac:load", operator_email: "alice@ops.test", object_type: "sanctions_list" },
        { action: "approval:request", operator_email: "alice@ops.test", object_type: "approval" },
        {
          action: "increase:set",
          operator_email: "bruno@ops.test",
          object_type: "increase_settings",
        },
        { action: "approval:approve", operator_email: "bruno@ops.test", object_type: "approval" },
      ],
    );
    assert.ok(
      !JSON.stringify(await rows("SELECT before, after FROM audit_log")).includes(server.apiKey),
    );
  });
}

Deno.test("end to end in live: an instant bank payment over RTP completes by Increase's webhook; a rejected one fails rtp_rejected and is offered again", async () => {
  const server = await IncreaseContractServer.start();
  try {
    await withHttpFixture((f) =>
      withLiveRun(f, async (r) => {
        const { app, acme, rows, run } = r;
        const live = f.deps.databases.live;
        await approvedSettings(r, "increase:set", server.settingsJson());
        await fundByWire(r, 1000);
        const created = await api(f, "POST", "/api/disbursements", {
          disbursement_uuid: "D-RTP-1",
          large_disbursement: false,
          line: "auto",
          payees: [
            payee("P-RTP-1", 250, { allowed_payment_method_ids: [4] }),
            payee("P-RTP-2", 100, { allowed_payment_method_ids: [4, 1] }),
          ],
        }, r.asLive);
        assert.equal(created.status, 201, await created.clone().text());
        await run();
        const idOf = async (uuid: string) =>
          String((await rows("SELECT id FROM payouts WHERE payee_uuid = ?", uuid))[0].id);
        const [paid, rejected] = [await idOf("P-RTP-1"), await idOf("P-RTP-2")];
        for (const payoutId of [paid, rejected]) {
          const sealed = await f.deps.secretBox.sealText("000123456789");
          const chosen = await live.writer.write((tx) =>
            selectMethod(tx, payoutId, {
              paymentMethodId: 4,
              details: { accountNumber: "000123456789" },
              kept: {
                instant_to: "bank",
                routing_number: "021000021",
                account_holder: "Pat Doe",
                account_sealed: sealed,
              },
            }, f.clock.now())
          );
          assert.ok(chosen.ok);
        }
        await run();
        const transferOf = (payoutId: string) =>
          [...server.rtpTransfers.values()].find((t) => t.idempotency_key === `${payoutId}-1`)!;
        transferOf(paid).status = "complete";
        transferOf(rejected).status = "rejected";
        transferOf(rejected).rejection = { reject_reason_code: "account_closed" };
        for (const payoutId of [paid, rejected]) {
          const event = await server.signedRtpEvent(transferOf(payoutId), new Date(f.clock.now()));
          const posted = await app.request(`/rails/increase/${acme.id}/live/webhook`, {
            method: "POST",
            headers: event.headers,
            body: event.body,
          });
          assert.equal(posted.status, 200, await posted.clone().text());
        }
        await run();
        const status = async (payoutId: string) =>
          (await rows("SELECT status, failure_reason FROM payouts WHERE id = ?", payoutId))[0];
        assert.deepEqual(await status(paid), { status: "completed", failure_reason: null });
        assert.deepEqual(await status(rejected), {
          status: "modality_offered",
          failure_reason: "rtp_rejected",
        });
        const balances = await readLineBalances(live.readClient, acme.autoLineId);
        assert.deepEqual(
          [balances.available, balances.reserved, balances.in_transit, balances.bank],
          [65_000, 10_000, 0, -75_000],
        );
        assert.deepEqual(await verifyLedger(live.readClient), []);
        const day = new Date(f.clock.now()).toISOString().slice(0, 10);
        const tieOut = (await lineTieOut(live.readClient, acme.autoLineId, day))!;
        assert.deepEqual([tieOut.disbursed, tieOut.difference], [25_000, 0]);
        const [{ method_details: details }] = await rows(
          "SELECT method_details FROM payouts WHERE id = ?",
          paid,
        );
        assert.equal(JSON.parse(String(details)).network, "rtp");
        assert.ok(!String(details).includes("000123456789"));
        const events = (await rows(
          "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY created_at, rowid",
          rejected,
        )).map((row) => Number(row.event_type_id));
        assert.ok(events.includes(8));
        assert.equal(
          (await rows("SELECT count(*) AS n FROM audit_log WHERE action = 'increase:set'"))[0].n,
          1,
        );
      })
    );
  } finally {
    await server.close();
  }
});
