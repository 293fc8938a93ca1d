/**
 * Push to a debit card through the Increase contract server (tests/increase_contract_server.ts),
 * at its base URL: the card's capabilities and a $0 validation with the name and ZIP before the
 * push; the push under the submission's reference as Idempotency-Key; its outcome from Increase
 * when a verified webhook names it or a poll reads it; a card not eligible, a validation declined
 * or mismatched, and a push declined all re-offer; a call Increase took but never answered pushes
 * once; a forged webhook writes nothing and a replay records nothing.
 */
import assert from "node:assert/strict";
import { moneyProviderDeps } from "./money_core_helpers.ts";
import { increaseSignature, increaseSigned } from "../lib/instant/client.ts";
import { receiveIncreaseWebhook } from "../lib/instant/service.ts";
import { checkIncreaseSettings } from "../lib/instant/settings.ts";
import { IncreaseContractServer } from "./increase_contract_server.ts";
import { pushAction, pushRoutes, validationVerdict } from "../lib/instant/rules.ts";
import { rows, statusOf } from "./paypal_helpers.ts";
import { chooseInstant, chooseInstantBank, withIncrease } from "./instant_helpers.ts";

const AMOUNT = 12_345;
const FUNDED = 1_000_000;

Deno.test("Increase's webhook signature: the official SDK's test vector verifies; a changed body, another secret or an old time does not", async () => {
  const secret = "whsec_zlFsbBZ8Xcodlpcu6NDTdSzZRLSdhkst";
  const body = '{"id":"event_123abc","created_at":"2020-01-31T23:59:59Z"}';
  const header =
    "t=2022-01-31T23:59:59Z,v1=3f9c3dcc820ca3adfae8e196d05b09dfef63b91db5ce5ac1407090f2aa424a6f";
  const at = Date.parse("2022-01-31T23:59:59Z");
  assert.equal(await increaseSignature(secret, body, new Date(at)), header);
  assert.equal(await increaseSigned(secret, header, body, at + 60_000), true);
  assert.equal(await increaseSigned(secret, header, body.replace("123", "124"), at), false);
  assert.equal(await increaseSigned("whsec_other", header, body, at), false);
  assert.equal(await increaseSigned(secret, header, body, at + 6 * 60_000), false);
  assert.equal(await increaseSigned(secret, null, body, at), false);
});

Deno.test("push rules: eligible routes, the validation's verdict, and each push status", () => {
  assert.deepEqual(
    pushRoutes({
      routes: [
        { route: "visa", domestic_push_transfers: "supported", cross_border_push_transfers: "x" },
        {
          route: "pulse",
          domestic_push_transfers: "not_supported",
          cross_border_push_transfers: "x",
        },
      ],
    }),
    ["visa"],
  );
  const accepted = (name: string, zip: string) => ({
    status: "complete",
    acceptance: { cardholder_full_name_result: name, cardholder_postal_code_result: zip },
    decline: null,
  });
  assert.deepEqual(validationVerdict(accepted("match", "match")), { kind: "valid" });
  assert.deepEqual(validationVerdict(accepted("partial_match", "match")), { kind: "valid" });
  assert.equal(validationVerdict(accepted("no_match", "match")).kind, "invalid");
  assert.equal(validationVerdict(accepted("match", "no_match")).kind, "invalid");
  assert.equal(
    validationVerdict({ status: "submitted", acceptance: null, decline: null }).kind,
    "pending",
  );
  assert.equal(
    validationVerdict({ status: "declined", acceptance: null, decline: { reason: "do_not_honor" } })
      .kind,
    "invalid",
  );
  for (
    const status of ["pending_approval", "pending_submission", "submitted", "requires_attention"]
  ) {
    assert.deepEqual(pushAction(status), { kind: "wait" }, status);
  }
  assert.deepEqual(pushAction("complete"), { kind: "complete" });
  assert.deepEqual(pushAction("declined"), { kind: "fail", reason: "card_declined" });
  assert.deepEqual(pushAction("canceled"), { kind: "fail", reason: "card_declined" });
});

Deno.test("push to card: capabilities, a $0 validation with the name and ZIP, one push; Increase's signed webhook completes it, a replay records nothing", async () => {
  await withIncrease(async ({ m, server, clock }) => {
    await m.fund(FUNDED);
    const token = server.tokenize("4000123412341234");
    const payoutId = await chooseInstant(m, AMOUNT, token.id);
    const reference = `${payoutId}-1`;
    const [validation] = server.validations.values();
    assert.deepEqual(
      [
        validation.cardholder_first_name,
        validation.cardholder_last_name,
        validation.cardholder_postal_code,
      ],
      ["Pat", "Q Doe", "73301"],
    );
    const [push] = server.pushesTo(token.id);
    assert.deepEqual(
      [push.idempotency_key, push.presentment_amount, push.recipient_name, push.status],
      [reference, { currency: "USD", value: "123.45" }, "Pat Q Doe", "pending_submission"],
    );
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    assert.equal(JSON.parse(String((await m.payout(payoutId)).method_details)).network, "visa");

    push.status = "complete";
    const deps = moneyProviderDeps(m.database);
    const event = await server.signedEvent(push, { at: new Date(clock.now()) });
    const webhook = {
      companyId: m.companyId,
      signature: event.headers["Increase-Webhook-Signature"],
      body: event.body,
    };
    const received = await receiveIncreaseWebhook(deps, webhook, clock.now());
    assert.ok(received.ok && received.value.recorded);
    await m.settle();
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    const replay = await receiveIncreaseWebhook(deps, webhook, clock.now());
    assert.ok(replay.ok && !replay.value.recorded);
    assert.equal((await rows(m, "SELECT * FROM increase_notices")).length, 1);
    const balances = await m.balances();
    assert.deepEqual([balances.available, balances.reserved, balances.in_transit], [
      FUNDED - AMOUNT,
      0,
      0,
    ]);
    assert.equal(server.pushesTo(token.id).length, 1);
  });
});

Deno.test("push to card: without a webhook, polling finds the push complete", async () => {
  await withIncrease(async ({ m, server }) => {
    await m.fund(FUNDED);
    const token = server.tokenize("4000123412341234");
    const payoutId = await chooseInstant(m, AMOUNT, token.id);
    server.pushesTo(token.id)[0].status = "complete";
    await m.advance(30);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
  });
});

Deno.test("push to card: a card no route can push to, a declined validation and a name that does not match re-offer the payout; nothing is pushed", async () => {
  for (
    const [setUp, reason] of [
      [(t: { pushable: boolean }) => t.pushable = false, "card_not_eligible"],
      [(t: { validation: string }) => t.validation = "declined", "card_declined"],
      [(t: { validation: string }) => t.validation = "name_no_match", "card_declined"],
    ] as const
  ) {
    await withIncrease(async ({ m, server }) => {
      await m.fund(FUNDED);
      const token = server.tokenize("4000123412341234");
      (setUp as (t: typeof token) => void)(token);
      const payoutId = await chooseInstant(m, AMOUNT, token.id);
      assert.deepEqual(await statusOf(m, payoutId), {
        status: "modality_offered",
        failure_reason: reason,
      });
      assert.equal(server.pushesTo(token.id).length, 0, reason);
      const balances = await m.balances();
      assert.equal(balances.in_transit, 0);
      assert.equal(balances.available + balances.reserved, FUNDED);
    });
  }
});

Deno.test("push to card: a push the network declines fails the payout card_declined and offers it again; its money is held again", async () => {
  await withIncrease(async ({ m, server }) => {
    await m.fund(FUNDED);
    const token = server.tokenize("4000123412341234");
    const payoutId = await chooseInstant(m, AMOUNT, token.id);
    const [push] = server.pushesTo(token.id);
    push.status = "declined";
    push.decline = { reason: "do_not_honor" };
    await m.advance(30);
    assert.deepEqual(await statusOf(m, payoutId), {
      status: "modality_offered",
      failure_reason: "card_declined",
    });
    const balances = await m.balances();
    assert.deepEqual([balances.in_transit, balances.available + balances.reserved], [0, FUNDED]);
  });
});

Deno.test("push to card: a push Increase took but never answered is asked again under the same Idempotency-Key: one push", async () => {
  await withIncrease(async ({ m, server, clock }) => {
    await m.fund(FUNDED);
    const token = server.tokenize("4000123412341234");
    server.disruptNext("POST", /^\/card_push_transfers$/, "take_then_hang");
    const payoutId = await chooseInstant(m, AMOUNT, token.id);
    assert.deepEqual(await statusOf(m, payoutId), {
      status: "modality_selected",
      failure_reason: null,
    });
    clock.advance(120_000);
    await m.advance(120);
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    assert.equal(server.pushesTo(token.id).length, 1);
    assert.equal(server.requests.filter((r) => r === "POST /card_push_transfers").length, 2);
    assert.equal(server.validations.size, 1);
  });
});

Deno.test("push to card: a forged webhook (another secret, an old signature) is refused and writes nothing", async () => {
  await withIncrease(async ({ m, server, clock }) => {
    await m.fund(FUNDED);
    const token = server.tokenize("4000123412341234");
    const payoutId = await chooseInstant(m, AMOUNT, token.id);
    const [push] = server.pushesTo(token.id);
    push.status = "complete";
    const deps = moneyProviderDeps(m.database);
    const jobsBefore = await rows(m, "SELECT count(*) AS n FROM scheduled_jobs");
    for (
      const event of [
        await server.signedEvent(push, { at: new Date(clock.now()), secret: "whsec_forged" }),
        await server.signedEvent(push, { at: new Date(clock.now() - 3_600_000) }),
      ]
    ) {
      const refused = await receiveIncreaseWebhook(deps, {
        companyId: m.companyId,
        signature: event.headers["Increase-Webhook-Signature"],
        body: event.body,
      }, clock.now());
      assert.equal(!refused.ok && refused.code, "webhook_not_verified");
    }
    assert.deepEqual(await rows(m, "SELECT * FROM increase_notices"), []);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM scheduled_jobs"), jobsBefore);
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
  });
});

Deno.test("instant bank payment: the routing lookup says the bank takes RTP; one transfer under the reference as Idempotency-Key; Increase's webhook completes it", async () => {
  await withIncrease(async ({ m, server, clock }) => {
    await m.fund(FUNDED);
    const payoutId = await chooseInstantBank(m, AMOUNT, "021000021");
    const [transfer] = server.rtpTransfers.values();
    assert.deepEqual(
      [
        transfer.amount,
        transfer.account_number,
        transfer.routing_number,
        transfer.creditor_name,
        transfer.idempotency_key,
      ],
      [AMOUNT, "000123456789", "021000021", "Pat Doe", `${payoutId}-1`],
    );
    assert.ok(server.requests.includes("GET /routing_numbers"));
    assert.deepEqual(await statusOf(m, payoutId), { status: "funds_sent", failure_reason: null });
    assert.equal(JSON.parse(String((await m.payout(payoutId)).method_details)).network, "rtp");
    transfer.status = "complete";
    const event = await server.signedRtpEvent(transfer, new Date(clock.now()));
    const received = await receiveIncreaseWebhook(
      moneyProviderDeps(m.database),
      {
        companyId: m.companyId,
        signature: event.headers["Increase-Webhook-Signature"],
        body: event.body,
      },
      clock.now(),
    );
    assert.ok(received.ok && received.value.recorded);
    await m.settle();
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.equal((await m.balances()).available, FUNDED - AMOUNT);
  });
});

Deno.test("instant bank payment: a bank the routing lookup says cannot take RTP is refused before any transfer (bank_not_reachable), and a rejected transfer fails rtp_rejected; both re-offer", async () => {
  await withIncrease(async ({ m, server }) => {
    await m.fund(FUNDED);
    const unreachable = await chooseInstantBank(m, AMOUNT, "091000019");
    assert.deepEqual(await statusOf(m, unreachable), {
      status: "modality_offered",
      failure_reason: "bank_not_reachable",
    });
    assert.equal(server.rtpTransfers.size, 0);
  });
  await withIncrease(async ({ m, server }) => {
    await m.fund(FUNDED);
    const rejected = await chooseInstantBank(m, AMOUNT, "021000021");
    const [transfer] = server.rtpTransfers.values();
    transfer.status = "rejected";
    transfer.rejection = { reject_reason_code: "account_closed" };
    await m.advance(30);
    assert.deepEqual(await statusOf(m, rejected), {
      status: "modality_offered",
      failure_reason: "rtp_rejected",
    });
    const balances = await m.balances();
    assert.deepEqual([balances.in_transit, balances.available + balances.reserved], [0, FUNDED]);
  });
});

Deno.test("Increase settings: Increase's live host only in live, an https card page, and the first wrong field named", async () => {
  const server = await IncreaseContractServer.start();
  try {
    const base = server.settingsJson();
    assert.equal(checkIncreaseSettings(base, "live").ok, true);
    const sandboxInLive = checkIncreaseSettings(
      { ...base, base_url: "https://sandbox.increase.com" },
      "live",
    );
    assert.equal(!sandboxInLive.ok && sandboxInLive.field, "base_url");
    const plainPage = checkIncreaseSettings(
      { ...base, card_page_url: "http://cards.example.com/page" },
      "live",
    );
    assert.equal(!plainPage.ok && plainPage.field, "card_page_url");
    const badState = checkIncreaseSettings({
      ...base,
      merchant: { ...(base.merchant as Record<string, string>), state: "Texas" },
    }, "live");
    assert.equal(!badState.ok && badState.field, "merchant.state");
  } finally {
    await server.close();
  }
});
