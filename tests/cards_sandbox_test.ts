/**
 * A test company without Lithic settings is paid by card through the same Lithic rail as live,
 * bound to the sandbox's Lithic (lib/cards/sandbox_lithic.ts) in the test database: its cards,
 * the card rows the rail keeps, events, ledger and tie-out, the sandbox's deterministic outcomes
 * (declined: `fail+vcc`, card 4000000000000002; a card spent a day after its issue, with Lithic's
 * webhook delivered in process; a spend limit ending in 99 cents is never spent and comes back at
 * expiry; a card closed through its API is told by Lithic's `card.updated`), one answer per
 * idempotency key across a restart, and the portal's card page shown by the sandbox's hosted card
 * page.
 */
import assert from "node:assert/strict";
import { LithicClient } from "../lib/cards/client.ts";
import { cardExpiry, cardRequest } from "../lib/cards/rules.ts";
import { sandboxLithic } from "../lib/cards/sandbox_lithic.ts";
import { simulatedCardNumbers, spendOnCard } from "../lib/cards/simulator.ts";
import { sandboxLithicStore } from "../lib/cards/simulator_store.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { systemClock } from "../lib/platform/clock.ts";
import { withHttpFixture } from "./http_fixture.ts";
import {
  cardChosenInPortal,
  chooseCard,
  rows,
  untilExpiryMonthTurns,
  VCC_METHOD,
} from "./cards_helpers.ts";
import { composeRails, jobHandlersOf } from "../lib/payouts/runtime.ts";
import { type ExternalJob, externalJob, TransientJobError } from "../db/scheduler.ts";
import type { PayoutRail } from "../lib/rails/seam.ts";
import { testSecretBox } from "./helpers.ts";
import {
  DAY_SECONDS,
  FIXTURE_SETTINGS,
  MONEY_SETTINGS,
  type MoneyFixture,
  moneyProviderDeps,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";

async function withMoney(fn: (m: MoneyFixture) => Promise<void>) {
  const fixture = await openMoneyFixture();
  try {
    await fn(fixture);
  } finally {
    await fixture.close();
  }
}

/** A funded company's `success+vcc` payout of `amountCents`, paid by a card issued OPEN. */
async function cardIssued(m: MoneyFixture, amountCents: number): Promise<string> {
  await m.fund(1_000_000);
  const created = await m.create({
    email: "success+vcc@example.test",
    amountCents,
    allowedPaymentMethodIds: [VCC_METHOD],
  });
  assert.ok(created.ok);
  const id = created.value.payouts[0].id;
  await m.settle();
  assert.equal((await m.payout(id)).status, "completed");
  return id;
}

const CARD_COLUMNS = "state, spend_limit_cents, spent_cents, reclaimed_cents";

Deno.test("sandbox, success+vcc without Lithic settings: the Lithic rail issues the card from the sandbox's Lithic and completes at once; a day later its payee spends it in full and Lithic's webhook has the service read it: nothing comes back", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const created = await m.create({
      email: "success+vcc@example.test",
      amountCents: 25_000,
      allowedPaymentMethodIds: [VCC_METHOD],
    });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle();
    const payout = await m.payout(id);
    assert.equal(payout.status, "completed");
    const [card] = await rows(
      m,
      `SELECT card_token, last_four, ${CARD_COLUMNS} FROM virtual_cards`,
    );
    assert.equal(payout.rail_reference, card.card_token);
    assert.deepEqual({ ...card, card_token: "…" }, {
      card_token: "…",
      last_four: simulatedCardNumbers(String(card.card_token)).pan.slice(-4),
      state: "OPEN",
      spend_limit_cents: 25_000,
      spent_cents: null,
      reclaimed_cents: null,
    });
    const [simulated] = await rows(
      m,
      "SELECT token, company_id, idempotency_key FROM sandbox_lithic_cards",
    );
    assert.deepEqual(simulated, {
      token: card.card_token,
      company_id: m.companyId,
      idempotency_key: `${id}-1`,
    });
    assert.deepEqual(await m.events(id), [
      "created",
      "offered",
      "selected",
      "processing",
      "completed",
    ]);
    let b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit, b.bank], [975_000, 0, 0, -975_000]);

    await m.advance(DAY_SECONDS - 60);
    assert.equal((await rows(m, "SELECT state FROM virtual_cards"))[0].state, "OPEN");
    // A day after its issue the payee spends it: the single-use card closes itself at that
    // authorization, and Lithic's webhooks of both make the service read the card.
    await m.advance(60);
    assert.deepEqual(
      await rows(m, "SELECT event_type, card_token FROM lithic_notices ORDER BY rowid"),
      [
        { event_type: "card_transaction.updated", card_token: card.card_token },
        { event_type: "card.updated", card_token: card.card_token },
      ],
    );
    assert.equal(
      (await sandboxLithicStore(m.database).card(String(card.card_token)))?.state,
      "CLOSED",
    );
    const spent = [
      { state: "CLOSED", spend_limit_cents: 25_000, spent_cents: 25_000, reclaimed_cents: 0 },
    ];
    assert.deepEqual(await rows(m, `SELECT ${CARD_COLUMNS} FROM virtual_cards`), spent);
    await m.advance(30 * DAY_SECONDS); // past its expiry: nothing more is asked or comes back
    assert.deepEqual(await rows(m, `SELECT ${CARD_COLUMNS} FROM virtual_cards`), spent);
    assert.equal((await m.payout(id)).status, "completed");
    b = await m.balances();
    assert.deepEqual([b.available, b.bank], [975_000, -975_000]);
    const tieOut = (await lineTieOut(m.database.readClient, m.lineId, "2026-01-05"))!;
    assert.deepEqual([tieOut.funded, tieOut.disbursed, tieOut.difference], [
      1_000_000,
      25_000,
      0,
    ]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("sandbox's Lithic, single use: a card closes itself at its first successful authorization, pending or settled, as Lithic's SINGLE_USE does; a second purchase does not close it again", async () => {
  await withMoney(async (m) => {
    await cardIssued(m, 12_000);
    const [card] = await rows(m, "SELECT card_token FROM virtual_cards");
    const store = sandboxLithicStore(m.database);
    const open = (await store.card(String(card.card_token)))!;
    assert.deepEqual([open.type, open.state], ["SINGLE_USE", "OPEN"]);
    const first = await spendOnCard(store, open, { cents: 12_000, status: "PENDING", at: START });
    assert.deepEqual([first.transaction.status, first.closed], ["PENDING", true]);
    const reach = await moneyProviderDeps(m.database).lithic.read(
      m.database.readClient,
      m.companyId,
    );
    const lithic = await LithicClient.open(reach!);
    assert.equal((await lithic.card(String(card.card_token))).state, "CLOSED");
    const closedCard = (await store.card(String(card.card_token)))!;
    const again = await spendOnCard(store, closedCard, { cents: 1, status: "SETTLED", at: START });
    assert.equal(again.closed, false);
  });
});

Deno.test("sandbox, fail+vcc and card 4000000000000002: the sandbox's Lithic issues no card (422), the payout fails card_not_issued and is offered again with its money held", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const failing = await m.create({
      email: "fail+vcc@example.test",
      amountCents: 10_000,
      allowedPaymentMethodIds: [VCC_METHOD],
    });
    const chosen = await m.create({ amountCents: 7_500, allowedPaymentMethodIds: [VCC_METHOD] });
    assert.ok(failing.ok && chosen.ok);
    const ids = [failing.value.payouts[0].id, chosen.value.payouts[0].id];
    await m.settle();
    assert.ok((await m.select(ids[1], VCC_METHOD, { cardNumber: "4000000000000002" })).ok);
    await m.settle();
    for (const id of ids) {
      const payout = await m.payout(id);
      assert.deepEqual([payout.status, payout.failure_reason, payout.payment_method_id], [
        "modality_offered",
        "card_not_issued",
        null,
      ]);
      assert.deepEqual(await m.events(id), [
        "created",
        "offered",
        "selected",
        "failed",
        "offered",
      ]);
    }
    const [{ detail }] = await rows(
      m,
      `SELECT detail FROM payout_transitions WHERE payout_id = ? AND to_status = 'failed'`,
      ids[0],
    );
    assert.match(String(detail), /Lithic refused the card of .*-1: 422 /);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM virtual_cards"), [{ n: 0 }]);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM sandbox_lithic_cards"), [{ n: 0 }]);
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [982_500, 17_500, 0]);
  });
});

Deno.test("sandbox, a spend limit ending in 99 cents: never spent, the service closes the card at its expiry and the whole limit comes back once as a late return", async () => {
  await withMoney(async (m) => {
    const id = await cardIssued(m, 12_399);
    await m.advance(29 * DAY_SECONDS);
    assert.deepEqual(await rows(m, `SELECT ${CARD_COLUMNS} FROM virtual_cards`), [
      { state: "OPEN", spend_limit_cents: 12_399, spent_cents: null, reclaimed_cents: null },
    ]);
    assert.equal((await m.balances()).available, 987_601);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM lithic_notices"), [{ n: 0 }]);
    await m.advance(DAY_SECONDS + 60);
    assert.deepEqual(await rows(m, `SELECT ${CARD_COLUMNS} FROM virtual_cards`), [
      { state: "CLOSED", spend_limit_cents: 12_399, spent_cents: 0, reclaimed_cents: 12_399 },
    ]);
    const [simulated] = await rows(m, "SELECT card FROM sandbox_lithic_cards");
    assert.equal(JSON.parse(String(simulated.card)).state, "CLOSED", "closed by the service");
    const payout = await m.payout(id);
    assert.equal(payout.status, "completed");
    const b = await m.balances();
    assert.deepEqual([b.available, b.bank], [1_000_000, -1_000_000]);
    assert.deepEqual(
      await rows(
        m,
        "SELECT to_status, detail FROM payout_transitions WHERE payout_id = ? AND from_status = 'completed'",
        id,
      ),
      [{ to_status: "completed", detail: "card_unspent" }],
    );
    await m.advance(2 * DAY_SECONDS); // checked again: nothing more comes back
    assert.equal((await m.balances()).available, 1_000_000);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("sandbox's Lithic: a repeated idempotency key gets the first card, across a restart (a new handler on the same database); another body under it is refused 422", async () => {
  await withMoney(async (m) => {
    const reachOf = () =>
      sandboxLithic(m.database, "http://127.0.0.1:8000", systemClock).reach(m.companyId);
    const request = cardRequest("po_x-1", 5_000, cardExpiry(m.now(), 30));
    const first = await (await LithicClient.open(reachOf())).issueCard(request, "po_x-1");
    assert.equal(first.kind, "issued");
    const restarted = await LithicClient.open(reachOf());
    assert.deepEqual(await restarted.issueCard(request, "po_x-1"), first);
    const other = await restarted.issueCard({ ...request, spend_limit: 6_000 }, "po_x-1");
    assert.deepEqual(other.kind === "refused" && other.status, 422);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM sandbox_lithic_cards"), [{ n: 1 }]);
    // Another company's key does not see the card.
    const stranger = await LithicClient.open(
      sandboxLithic(m.database, "http://127.0.0.1:8000", systemClock).reach("co_other"),
    );
    await assert.rejects(
      () => stranger.card(first.kind === "issued" ? first.card.token : ""),
      /404/,
    );
  });
});

Deno.test("sandbox: the card rail composed again (a restart) and asked again for a submission whose card was issued gets that card: one card at the sandbox's Lithic, one card row", async () => {
  await withMoney(async (m) => {
    await m.fund(1_000_000);
    const id = await chooseCard(m, 8_000);
    const [kept] = await rows(m, "SELECT reference, card_token, expires_at FROM virtual_cards");
    assert.equal(kept.reference, `${id}-1`);
    const settings = { ...MONEY_SETTINGS, clock: { now: () => m.now() } };
    const rail = composeRails("test", settings, m.database, testSecretBox).directory.forModality(
      "vcc",
    );
    assert.equal(rail.shape, "per_payout");
    const again = await (rail as PayoutRail).submit({
      reference: `${id}-1`,
      companyId: m.companyId,
      payoutId: id,
      modality: "vcc",
      amountCents: 8_000,
      attempt: 0,
      submittedAt: m.now(),
      details: {},
      terms: { expires_at: Number(kept.expires_at) },
    });
    assert.equal(again.kind === "accepted" && again.railReference, kept.card_token);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM sandbox_lithic_cards"), [{ n: 1 }]);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM virtual_cards"), [{ n: 1 }]);
  });
});

Deno.test("sandbox: a card whose answer was lost, asked again after its expiry's month changed, sends the first body under the same key: the sandbox's Lithic answers the card it issued (no 422), expiring in the first month", async () => {
  let answersToLose = 1;
  const fixture = await openMoneyFixture({
    handlers: (database) => {
      const handlers = jobHandlersOf("test", FIXTURE_SETTINGS, database, testSecretBox);
      const submit = handlers["payout.submit"] as ExternalJob<unknown, unknown>;
      return {
        ...handlers,
        // Lithic issued the card, and its answer never reached the job: it is asked again later.
        "payout.submit": externalJob({
          ...submit,
          async call(request, job) {
            const answer = await submit.call(request, job);
            if (answersToLose-- > 0) throw new TransientJobError("the answer was lost");
            return answer;
          },
        }),
      };
    },
  });
  try {
    const m = fixture;
    await m.advance(untilExpiryMonthTurns(m.now(), 30));
    await m.fund(1_000_000);
    const firstAttemptAt = m.now();
    const created = await m.create({
      email: "success+vcc@example.test",
      amountCents: 8_000,
      allowedPaymentMethodIds: [VCC_METHOD],
    });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle();
    assert.equal((await m.payout(id)).status, "modality_selected");
    await m.advance(10);
    assert.equal((await m.payout(id)).status, "completed");
    const simulated = await rows(m, "SELECT card FROM sandbox_lithic_cards");
    assert.equal(simulated.length, 1);
    const card = JSON.parse(String(simulated[0].card));
    assert.deepEqual([card.exp_month, card.exp_year], ["02", "2026"]);
    assert.deepEqual(await rows(m, "SELECT card_token, expires_at FROM virtual_cards"), [
      { card_token: card.token, expires_at: firstAttemptAt + 30 * DAY_SECONDS * 1000 },
    ]);
  } finally {
    await fixture.close();
  }
});

Deno.test("portal, sandbox without Lithic settings: the paid card is shown in the sandbox's hosted card page, framed from this service's origin; a forged request is refused", async () => {
  await withHttpFixture(async (f) => {
    const { browser, linkPath } = await cardChosenInPortal(f);
    const page = await browser.get(linkPath);
    assert.equal(page.status, 200);
    assert.match(browser.lastHtml, /<h1>Paid<\/h1>/);
    const src = /<iframe[^>]* src="([^"]+)"/.exec(browser.lastHtml)?.[1]?.replaceAll("&amp;", "&");
    assert.ok(src, browser.lastHtml);
    const url = new URL(src);
    const base = new URL(f.deps.config.baseUrl);
    assert.equal(url.origin, base.origin);
    assert.equal(url.pathname, "/rails/lithic/sandbox/v1/embed/card");
    assert.match(
      page.headers.get("Content-Security-Policy")!,
      new RegExp(`frame-src ${base.origin}$`),
    );
    const token = JSON.parse(atob(url.searchParams.get("embed_request")!)).token;
    const { pan, cvv } = simulatedCardNumbers(token);
    assert.match(browser.lastHtml, new RegExp(`card ending in ${pan.slice(-4)}`));
    assert.ok(!browser.lastHtml.includes(pan) && !browser.lastHtml.includes(cvv));
    const shown = await f.app.request(`${url.pathname}${url.search}`);
    assert.equal(shown.status, 200);
    assert.match(shown.headers.get("Content-Security-Policy")!, /frame-ancestors 'self'/);
    const html = await shown.text();
    assert.equal(/<span id="pan">([^<]+)</.exec(html)?.[1]?.replaceAll(" ", ""), pan);
    url.searchParams.set("hmac", "forged");
    const forged = await f.app.request(`${url.pathname}${url.search}`);
    assert.equal(forged.status, 401);
    assert.equal((await forged.json()).message, "The embed request's hmac does not match");
  }, { SANDBOX_INBOX: "1" });
});

Deno.test("sandbox's Lithic card.updated: a card closed at the sandbox's Lithic outside the service (as from Lithic's dashboard) before its payee spends it is told to the service at once; it reads the card and its whole limit comes back as a late return then, not at its expiry", async () => {
  await withMoney(async (m) => {
    const id = await cardIssued(m, 25_000);
    const [card] = await rows(m, "SELECT card_token FROM virtual_cards");
    await m.advance(3_600);

    const reach = await moneyProviderDeps(m.database).lithic.read(
      m.database.readClient,
      m.companyId,
    );
    const closed = await (await LithicClient.open(reach!)).closeCard(String(card.card_token));
    assert.equal(closed.state, "CLOSED");
    await m.settle();
    assert.deepEqual(await rows(m, "SELECT event_type, card_token FROM lithic_notices"), [
      { event_type: "card.updated", card_token: card.card_token },
    ]);
    assert.deepEqual(
      await rows(m, "SELECT state, spent_cents, reclaimed_cents FROM virtual_cards"),
      [{ state: "CLOSED", spent_cents: 0, reclaimed_cents: 25_000 }],
    );
    assert.deepEqual(
      await rows(
        m,
        "SELECT to_status, detail, at FROM payout_transitions WHERE payout_id = ? AND from_status = 'completed'",
        id,
      ),
      [{ to_status: "completed", detail: "card_unspent", at: START + 3_600_000 }],
    );
    assert.equal((await m.balances()).available, 1_000_000);
    // The payee's purchase a day after its issue finds the card closed: nothing more happens.
    await m.advance(DAY_SECONDS);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM lithic_notices"), [{ n: 1 }]);
    assert.equal((await m.balances()).available, 1_000_000);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});
