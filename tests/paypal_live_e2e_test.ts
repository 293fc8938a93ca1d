/**
 * End to end in live (issue 19): a company whose PayPal settings a second admin approved, pointed
 * at the contract test server. It funds its line by wire (recorded by one admin, approved by
 * another), pays one payee by Venmo; the five-minute cutoff sends the batch to PayPal; a forged
 * webhook is refused and changes nothing; PayPal's signed webhook is verified and recorded, and the
 * job it queues reads the item from PayPal, which completes the payout. Checked: the final state,
 * what PayPal was sent, the ledger, the tie-out, the audit log and ledger:verify.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { createApp } from "../routes/app.ts";
import { api, payee } from "./api_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { PaypalContractServer } from "./paypal_contract_server.ts";

/** The fixture's clock starts on Monday 2026-01-05 at 15:00 UTC, a five-minute boundary. */
const MONDAY_15_00 = Date.UTC(2026, 0, 5, 15, 0);
const SDN_CSV = '7001,"KARIMOV, Rustam","individual","SDGT",-0-,-0-\r\n\x1a';

Deno.test("end to end in live: PayPal settings approved by a second admin, a wire funded, one Venmo payout batched, a forged webhook refused, PayPal's verified webhook completing it", async () => {
  const server = await PaypalContractServer.start();
  try {
    await withHttpFixture((f) => endToEnd(f, server));
  } finally {
    await server.close();
  }
});

async function endToEnd(f: HttpFixture, server: PaypalContractServer): Promise<void> {
  assert.equal(f.clock.now(), MONDAY_15_00);
  const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
  const live = f.deps.databases.live;
  const acme = f.cast.acme;
  const asLive = { key: f.cast.alice.keyLive, tin: acme.tin };
  const rows = async (sql: string, ...args: (string | number)[]) =>
    (await live.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
  const runUntil = async (at: number) => {
    f.clock.set(at);
    return await runDueJobs(live, acme.id, at, f.deps.jobHandlers.live, { clock: f.clock });
  };
  const now = f.clock.now();
  const alice = await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now);
  const bruno = await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now);
  const asAlice = adminCall(app, alice.token);
  const asBruno = adminCall(app, bruno.token);
  const dir = await Deno.makeTempDir({ prefix: "paypal-e2e-" });
  try {
    // 1. PayPal settings: requested by one admin, saved once another approves.
    const settingsPath = `${dir}/acme-paypal.json`;
    await Deno.writeTextFile(settingsPath, JSON.stringify(server.settingsJson()));
    const requested = await asAlice("paypal:set", { tin: acme.tin, file: settingsPath });
    assert.equal(requested.status, 200, JSON.stringify(requested.body));
    assert.equal(requested.body.result.status, "pending_approval");
    assert.equal(requested.body.result.kind, "paypal_settings.change");
    assert.deepEqual(await rows("SELECT count(*) AS n FROM paypal_settings"), [{ n: 0 }]);
    const approved = await asBruno("approvals:approve", { id: requested.body.result.approval_id });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const shown = await asAlice("paypal:show", { tin: acme.tin });
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    assert.deepEqual(shown.body.result.settings, {
      client_id: `…${server.clientId.slice(-4)}`,
      client_secret: "(sealed)",
      base_url: server.baseUrl,
      webhook_id: server.webhookId,
    });
    assert.ok(!JSON.stringify(shown.body).includes(server.clientSecret));

    // The OFAC list, as published, so payees can be screened.
    const sdnPath = `${dir}/sdn.csv`;
    await Deno.writeTextFile(sdnPath, SDN_CSV);
    assert.equal((await asAlice("ofac:load", { file: sdnPath })).status, 200);

    // 2. A $1,000.00 wire, recorded by Alice and approved by Bruno.
    const funded = await api(f, "POST", "/api/funds", {
      payment_method: "WireTransfer",
      amount: 1000,
      description: "wire",
      large_disbursement: false,
      line: "auto",
    }, asLive);
    assert.equal(funded.status, 201, await funded.clone().text());
    const fundingId = (await funded.json()).funding_uuid as string;
    const wire = await asAlice("wire:receive", { funding: fundingId });
    assert.equal(wire.status, 200, JSON.stringify(wire.body));
    const wireApproved = await asBruno("approvals:approve", { id: wire.body.result.approval_id });
    assert.equal(wireApproved.status, 200, JSON.stringify(wireApproved.body));
    assert.equal((await readLineBalances(live.readClient, acme.autoLineId)).available, 100_000);

    // 3. One payee paid by Venmo at 15:01: $250.00, chosen with their Venmo phone.
    f.clock.set(MONDAY_15_00 + 60_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-VENMO-1",
      large_disbursement: false,
      line: "auto",
      payees: [payee("P-VENMO", 250, { allowed_payment_method_ids: [6] })],
    }, asLive);
    assert.equal(created.status, 201, await created.clone().text());
    await runUntil(f.clock.now());
    const [{ id: payoutId }] = await rows("SELECT id FROM payouts WHERE payee_uuid = 'P-VENMO'");
    const selected = await live.writer.write((tx) =>
      selectMethod(tx, String(payoutId), {
        paymentMethodId: 6,
        details: {},
        kept: { phone: "+15125550100" },
      }, f.clock.now())
    );
    assert.ok(selected.ok, selected.ok ? "" : selected.message);
    await runUntil(f.clock.now());
    const status = async () =>
      (await rows("SELECT status, failure_reason FROM payouts WHERE id = ?", String(payoutId)))[0];
    // Waits for the company's next cutoff, five minutes on.
    assert.deepEqual(await status(), { status: "modality_selected", failure_reason: null });
    assert.equal(server.batches.size, 0);
    await runUntil(MONDAY_15_00 + 5 * 60_000);
    assert.deepEqual(await status(), { status: "funds_sent", failure_reason: null });
    const [batch] = await rows("SELECT id, status, rail_reference FROM rail_batches");
    const [[payoutBatchId, sent]] = [...server.batches.entries()];
    assert.deepEqual(batch, {
      id: sent.senderBatchId,
      status: "transmitted",
      rail_reference: payoutBatchId,
    });
    const item = server.items.get(sent.itemIds[0])!;
    assert.deepEqual(item.payout_item, {
      recipient_type: "PHONE",
      recipient_wallet: "VENMO",
      receiver: "+15125550100",
      amount: { currency: "USD", value: "250.00" },
      sender_item_id: `${payoutId}-1`,
    });

    // 4. A forged webhook (its signature PayPal never made) is refused; nothing is written.
    server.setItemState(item.payout_item.sender_item_id, "SUCCESS");
    const webhook = server.signedItemWebhook("PAYMENT.PAYOUTS-ITEM.SUCCEEDED", item);
    const post = (headers: Record<string, string>) =>
      app.request(`/rails/paypal/${acme.id}/live/webhook`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: JSON.stringify(webhook.body),
      });
    const forged = await post({ ...webhook.headers, "PAYPAL-TRANSMISSION-SIG": "forged" });
    assert.equal(forged.status, 400);
    assert.equal((await forged.json()).error.code, "webhook_not_verified");
    assert.deepEqual(await rows("SELECT count(*) AS n FROM paypal_notices"), [{ n: 0 }]);
    assert.deepEqual(
      await rows("SELECT count(*) AS n FROM scheduled_jobs WHERE kind = 'paypal.notice'"),
      [{ n: 0 }],
    );

    // 5. PayPal's own webhook: verified, recorded once, and its job asks PayPal for the item.
    const at = MONDAY_15_00 + 5 * 60_000 + 20_000;
    f.clock.set(at);
    const verified = await post(webhook.headers);
    assert.equal(verified.status, 200, await verified.clone().text());
    assert.equal((await post(webhook.headers)).status, 200, "PayPal's retry of the same event");
    assert.deepEqual(await rows("SELECT id, resource_id FROM paypal_notices"), [
      { id: webhook.body.id, resource_id: item.payout_item_id },
    ]);
    await runUntil(at);
    assert.deepEqual(await status(), { status: "completed", failure_reason: null });
    assert.ok(server.requests.includes(`GET /v1/payments/payouts-item/${item.payout_item_id}`));

    // The ledger: $1,000.00 funded, $250.00 paid by Venmo.
    assert.deepEqual(await readLineBalances(live.readClient, acme.autoLineId), {
      available: 75_000,
      pending_funding: 0,
      reserved: 0,
      in_transit: 0,
      fees_payor: 0,
      fees_payee: 0,
      fees_service: 0,
      bank: -75_000,
      funding_shortfall: 0,
      unclaimed_remitted: 0,
    });
    assert.deepEqual(await verifyLedger(live.readClient), []);
    const { payouts: paidLines, ...day } =
      (await lineTieOut(live.readClient, acme.autoLineId, "2026-01-05"))!;
    // Each payout paid through PayPal is a line; together they are the day's disbursed.
    assert.ok(paidLines.every((line) => line.kind === "payout.complete"));
    assert.equal(paidLines.reduce((sum, line) => sum + line.disbursedCents, 0), 25_000);
    assert.deepEqual(day, {
      date: "2026-01-05",
      opening: 0,
      funded: 100_000,
      returnedFunding: 0,
      returned: 0,
      disbursed: 25_000,
      fees: 0,
      closing: 75_000,
      difference: 0,
      fundings: [],
    });
    const verify = await asAlice("ledger:verify", { environment: "live" });
    assert.equal(verify.status, 200, JSON.stringify(verify.body));

    // The audit log: who asked for the PayPal settings and who approved them, the list, the wire.
    assert.deepEqual(
      (await rows("SELECT action, operator_email, object_type FROM audit_log ORDER BY seq"))
        .filter((row) => row.action !== "login" && row.action !== "operator:create"),
      [
        { action: "approval:request", operator_email: "alice@ops.test", object_type: "approval" },
        { action: "paypal:set", operator_email: "bruno@ops.test", object_type: "paypal_settings" },
        { action: "approval:approve", operator_email: "bruno@ops.test", object_type: "approval" },
        { action: "ofac:load", operator_email: "alice@ops.test", object_type: "sanctions_list" },
        { action: "approval:request", operator_email: "alice@ops.test", object_type: "approval" },
        { action: "wire:receive", operator_email: "bruno@ops.test", object_type: "funding" },
        { action: "approval:approve", operator_email: "bruno@ops.test", object_type: "approval" },
      ],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
