/**
 * The virtual card rail through the Lithic contract server (tests/lithic_contract_server.ts),
 * driven by the official SDK at the server's base URL: one single-use card per payout (spend
 * limit = the net amount, memo = the reference, an expiry), completed when issued; a refused card
 * re-offers; a call unanswered after Lithic took it gets the same card on the retry (Idempotency-
 * Key); merchant category limits; the unspent balance back as a late return at the card's close
 * (webhook or expiry), once; a forged webhook writes nothing and a replay records nothing.
 */
import assert from "node:assert/strict";
import { LithicClient } from "../lib/cards/client.ts";
import { checkLithicSettings } from "../lib/cards/settings.ts";
import { cardExpiry, cardRequest } from "../lib/cards/rules.ts";
import { receiveLithicWebhook } from "../lib/cards/service.ts";
import { LithicContractServer } from "./lithic_contract_server.ts";
import {
  chooseCard,
  configureLithic,
  rows,
  statusOf,
  untilExpiryMonthTurns,
  withLithic,
} from "./cards_helpers.ts";
import { DAY_SECONDS, moneyProviderDeps } from "./money_core_helpers.ts";

const AMOUNT = 12_345;

Deno.test("virtual card: one single-use card whose spend limit is the amount and memo the reference; issued OPEN, the payout completes", async () => {
  await withLithic(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await chooseCard(m, AMOUNT);
    const reference = `${payoutId}-1`;
    const [card] = server.cardsOf(reference);
    assert.deepEqual(
      [card.type, card.spend_limit, card.spend_limit_duration, card.state],
      ["SINGLE_USE", AMOUNT, "FOREVER", "OPEN"],
    );
    const expiry = new Date(m.now() + 30 * DAY_SECONDS * 1000);
    assert.deepEqual([card.exp_month, card.exp_year], [
      String(expiry.getUTCMonth() + 1).padStart(2, "0"),
      String(expiry.getUTCFullYear()),
    ]);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.deepEqual(
      await rows(
        m,
        "SELECT reference, card_token, last_four, spend_limit_cents, state, reclaimed_cents FROM virtual_cards",
      ),
      [{
        reference,
        card_token: card.token,
        last_four: card.last_four,
        spend_limit_cents: AMOUNT,
        state: "OPEN",
        reclaimed_cents: null,
      }],
    );
    const balances = await m.balances();
    assert.deepEqual([balances.available, balances.reserved, balances.in_transit], [
      1_000_000 - AMOUNT,
      0,
      0,
    ]);
    assert.equal(server.authRules.length, 0);
  });
});

Deno.test("virtual card: Lithic refuses the card (400): the payout fails card_not_issued and is offered again, its hold back in reserved", async () => {
  await withLithic(async ({ m, server }) => {
    await m.fund(1_000_000);
    server.disruptNext("POST", /^\/v1\/cards$/, {
      status: 400,
      message: "Insufficient funds in program funding account",
    });
    const payoutId = await chooseCard(m, AMOUNT);
    assert.deepEqual(await statusOf(m, payoutId), {
      status: "modality_offered",
      failure_reason: "card_not_issued",
    });
    assert.equal(server.cards.size, 0);
    assert.deepEqual(await rows(m, "SELECT * FROM virtual_cards"), []);
    const balances = await m.balances();
    assert.equal(balances.in_transit, 0);
    assert.equal(balances.available + balances.reserved, 1_000_000);
  });
});

Deno.test("virtual card: a call Lithic took but never answered is asked again under the same Idempotency-Key: one card, paid once", async () => {
  await withLithic(async ({ m, server, clock }) => {
    await m.fund(1_000_000);
    server.disruptNext("POST", /^\/v1\/cards$/, "take_then_hang");
    const payoutId = await chooseCard(m, AMOUNT);
    const reference = `${payoutId}-1`;
    assert.equal(server.cardsOf(reference).length, 1);
    assert.deepEqual(await statusOf(m, payoutId), {
      status: "modality_selected",
      failure_reason: null,
    });
    clock.advance(120_000);
    await m.advance(120);
    assert.equal(server.cardsOf(reference).length, 1);
    assert.equal(server.requests.filter((r) => r === "POST /v1/cards").length, 2);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.equal((await rows(m, "SELECT * FROM virtual_cards")).length, 1);
  });
});

for (
  const [disruption, what] of [
    ["5xx", "Lithic answered 5xx"],
    ["take_then_hang", "Lithic took it but never answered"],
  ] as const
) {
  Deno.test(`virtual card: ${what} and the retry came after the expiry's month changed: the retry sends the first body byte for byte under the same Idempotency-Key; one card, expiring in the first month, paid once`, async () => {
    await withLithic(async ({ m, server, clock }) => {
      await m.advance(untilExpiryMonthTurns(m.now(), 30));
      await m.fund(1_000_000);
      const firstAttemptAt = m.now();
      server.disruptNext("POST", /^\/v1\/cards$/, disruption);
      const payoutId = await chooseCard(m, AMOUNT);
      clock.advance(120_000);
      await m.advance(120);
      assert.equal(server.cardBodies.length, 2);
      assert.equal(server.cardBodies[1], server.cardBodies[0]);
      const cards = server.cardsOf(`${payoutId}-1`);
      assert.equal(cards.length, 1);
      assert.deepEqual([cards[0].exp_month, cards[0].exp_year], ["02", "2026"]);
      assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
      assert.deepEqual(await rows(m, "SELECT card_token, expires_at FROM virtual_cards"), [
        { card_token: cards[0].token, expires_at: firstAttemptAt + 30 * DAY_SECONDS * 1000 },
      ]);
    });
  });
}

Deno.test("virtual card: card_valid_days changed between a submission's attempts: the retry still sends the first body (the expiry decided at the first attempt)", async () => {
  await withLithic(async ({ m, server, clock }) => {
    await m.fund(1_000_000);
    const firstAttemptAt = m.now();
    server.disruptNext("POST", /^\/v1\/cards$/, "take_then_hang");
    const payoutId = await chooseCard(m, AMOUNT);
    await configureLithic(m.database, server, m.companyId, m.now(), { card_valid_days: 10 });
    clock.advance(120_000);
    await m.advance(120);
    assert.equal(server.cardBodies.length, 2);
    assert.equal(server.cardBodies[1], server.cardBodies[0]);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.deepEqual(await rows(m, "SELECT expires_at FROM virtual_cards"), [
      { expires_at: firstAttemptAt + 30 * DAY_SECONDS * 1000 },
    ]);
  });
});

Deno.test("virtual card: Lithic's idempotency answer — the same key and body give the same card; the same key with another body is refused", async () => {
  const server = await LithicContractServer.start();
  try {
    const settings = checkLithicSettings(server.settingsJson(), "test");
    assert.ok(settings.ok);
    const lithic = await LithicClient.open({ settings: settings.value }, 2_000);
    const request = cardRequest("po_x-1", 5_000, cardExpiry(Date.UTC(2026, 0, 5), 30));
    const first = await lithic.issueCard(request, "po_x-1");
    const again = await lithic.issueCard(request, "po_x-1");
    assert.equal(first.kind, "issued");
    assert.deepEqual(again, first);
    const other = await lithic.issueCard({ ...request, spend_limit: 6_000 }, "po_x-1");
    assert.equal(other.kind, "refused");
    assert.equal(other.kind === "refused" && other.status, 422);
    assert.equal(server.cards.size, 1);
  } finally {
    await server.close();
  }
});

Deno.test("virtual card: with merchant categories set, one card-level rule declines the others, also when the card is asked for again", async () => {
  await withLithic(async ({ m, server, clock }) => {
    await m.fund(1_000_000);
    server.disruptNext("POST", /^\/v2\/auth_rules$/, "take_then_hang");
    const payoutId = await chooseCard(m, AMOUNT);
    clock.advance(120_000);
    await m.advance(120);
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    const [card] = server.cardsOf(`${payoutId}-1`);
    assert.equal(server.authRules.length, 1);
    assert.deepEqual(server.authRules[0].card_tokens, [card.token]);
    assert.deepEqual(server.authRules[0].parameters, {
      conditions: [{ attribute: "MCC", operation: "IS_NOT_ONE_OF", value: ["7531", "5533"] }],
    });
  }, { allowed_mccs: ["7531", "5533"] });
});

Deno.test("virtual card: a card partly spent and closed comes back as a late return of the unspent balance when Lithic's webhook names it; a replay records nothing", async () => {
  await withLithic(async ({ m, server, clock }) => {
    await m.fund(1_000_000);
    const payoutId = await chooseCard(m, AMOUNT);
    const [card] = server.cardsOf(`${payoutId}-1`);
    await server.spend(card.token, 4_000, "SETTLED");
    const signed = server.signedWebhook({
      event_type: "card_transaction.updated",
      card_token: card.token,
      status: "SETTLED",
      // What a webhook says is never acted on: the rail reads the card from Lithic.
      settled_amount: 1,
    });
    const deps = moneyProviderDeps(m.database);
    const webhook = {
      companyId: m.companyId,
      headers: {
        id: signed.headers["webhook-id"],
        timestamp: signed.headers["webhook-timestamp"],
        signature: signed.headers["webhook-signature"],
      },
      body: signed.body,
    };
    const received = await receiveLithicWebhook(deps, webhook, clock.now());
    assert.deepEqual(received, {
      ok: true,
      value: { recorded: true, eventId: signed.headers["webhook-id"] },
    });
    await m.settle();
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.deepEqual(
      await rows(m, "SELECT state, spent_cents, reclaimed_cents FROM virtual_cards"),
      [{ state: "CLOSED", spent_cents: 4_000, reclaimed_cents: AMOUNT - 4_000 }],
    );
    const balances = await m.balances();
    assert.deepEqual([balances.available, balances.in_transit], [
      1_000_000 - 4_000,
      0,
    ]);
    assert.deepEqual(
      await rows(
        m,
        "SELECT kind FROM ledger_transactions WHERE payout_id = ? ORDER BY posted_at, id",
        payoutId,
      ).then((r) => r.map((row) => row.kind).filter((k) => k === "payout.late_return")),
      ["payout.late_return"],
    );
    assert.deepEqual(
      (await rows(
        m,
        "SELECT event_type_id FROM events WHERE payout_id = ? AND event_type_id = 12",
        payoutId,
      ))
        .length,
      1,
    );

    const replay = await receiveLithicWebhook(deps, webhook, clock.now());
    assert.deepEqual(replay, {
      ok: true,
      value: { recorded: false, eventId: signed.headers["webhook-id"] },
    });
    await m.settle();
    assert.equal((await m.balances()).available, 1_000_000 - 4_000);
    assert.equal((await rows(m, "SELECT * FROM lithic_notices")).length, 1);
  });
});

Deno.test("virtual card: a forged webhook (another secret, or an old timestamp) is refused and writes nothing", async () => {
  await withLithic(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await chooseCard(m, AMOUNT);
    const [card] = server.cardsOf(`${payoutId}-1`);
    await server.spend(card.token, 4_000, "SETTLED");
    const deps = moneyProviderDeps(m.database);
    const jobsBefore = await rows(m, "SELECT count(*) AS n FROM scheduled_jobs");
    for (
      const signed of [
        server.signedWebhook({ event_type: "card.updated", card_token: card.token }, {
          secret: `whsec_${btoa("not the subscription secret!!!!!")}`,
        }),
        server.signedWebhook({ event_type: "card.updated", card_token: card.token }, {
          at: new Date(Date.now() - 3_600_000),
        }),
      ]
    ) {
      const refused = await receiveLithicWebhook(deps, {
        companyId: m.companyId,
        headers: {
          id: signed.headers["webhook-id"],
          timestamp: signed.headers["webhook-timestamp"],
          signature: signed.headers["webhook-signature"],
        },
        body: signed.body,
      }, Date.now());
      assert.equal(refused.ok, false);
      assert.equal(!refused.ok && refused.code, "webhook_not_verified");
    }
    assert.deepEqual(await rows(m, "SELECT * FROM lithic_notices"), []);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM scheduled_jobs"), jobsBefore);
    assert.equal((await m.balances()).available, 1_000_000 - AMOUNT);
  });
});

Deno.test("virtual card: an unspent card is closed at its expiry and its whole balance comes back as a late return (polling, no webhook)", async () => {
  await withLithic(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await chooseCard(m, AMOUNT);
    const [card] = server.cardsOf(`${payoutId}-1`);
    await m.advance(29 * DAY_SECONDS);
    assert.equal(server.cards.get(card.token)!.state, "OPEN");
    await m.advance(DAY_SECONDS + 60);
    assert.equal(server.cards.get(card.token)!.state, "CLOSED");
    assert.ok(server.requests.includes(`PATCH /v1/cards/${card.token}`));
    assert.deepEqual(
      await rows(m, "SELECT state, spent_cents, reclaimed_cents FROM virtual_cards"),
      [{ state: "CLOSED", spent_cents: 0, reclaimed_cents: AMOUNT }],
    );
    assert.deepEqual(await statusOf(m, payoutId), { status: "completed", failure_reason: null });
    assert.equal((await m.balances()).available, 1_000_000);
  });
});
