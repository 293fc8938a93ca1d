/**
 * A sandbox day with a virtual card (Lithic) and an instant push (Increase) and no ACH file: the
 * company's money moved, so the sandbox bank states its day; the providers draw on the sandbox
 * settlement account (the sandbox's bank settings say so), each line named by the card or transfer
 * the provider's adapter recorded, and the day reconciles to zero. A line the bank leaves out is a
 * service-side exception naming the provider's card. With the sandbox's own PayPal, Lithic and
 * Increase (their simulators) the same; a card's unspent balance paid back at its close a month
 * later is a credit, and its day reconciles too.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../lib/platform/clock.ts";
import type { ExpectedMove } from "../lib/reconciliation/matching.ts";
import { planSandboxStatementsOfMovement } from "../lib/reconciliation/sandbox_statements.ts";
import { chooseCard, configureLithic, TEST_LITHIC_TIMEOUT_MS } from "./cards_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { chooseInstant, configureIncrease, TEST_INCREASE_TIMEOUT_MS } from "./instant_helpers.ts";
import { IncreaseContractServer } from "./increase_contract_server.ts";
import { LithicContractServer } from "./lithic_contract_server.ts";
import { DAY_SECONDS, type MoneyFixture, START } from "./money_core_helpers.ts";
import { openStatedMoneyFixture } from "./recon_helpers.ts";
import { rows } from "./ach_helpers.ts";

interface ProviderDay {
  readonly m: MoneyFixture;
  readonly cardPayout: string;
  readonly cardToken: string;
  readonly instantPayout: string;
  readonly transferId: string;
}

/** Monday: a wire in, a card issued, a push to a card; the statement written Tuesday 02:00. */
async function withProviderDay(
  fn: (day: ProviderDay) => Promise<void>,
  omit?: (companyId: string, date: string, move: ExpectedMove) => boolean,
): Promise<void> {
  const lithic = await LithicContractServer.start();
  const increase = await IncreaseContractServer.start();
  const m = await openStatedMoneyFixture({
    clock: new FakeClock(START),
    rails: { lithicTimeoutMs: TEST_LITHIC_TIMEOUT_MS, increaseTimeoutMs: TEST_INCREASE_TIMEOUT_MS },
    omit,
  });
  try {
    await configureLithic(m.database, lithic, m.companyId, START);
    await configureIncrease(m.database, increase, m.companyId, START);
    await m.fund(100_000);
    const cardPayout = await chooseCard(m, 10_000, "card");
    const token = increase.tokenize("4000123412341234");
    const instantPayout = await chooseInstant(m, 5_000, token.id);
    increase.pushesTo(token.id)[0].status = "complete";
    await m.advance(30);
    for (const id of [cardPayout, instantPayout]) {
      assert.equal((await m.payout(id)).status, "completed");
    }
    // No ACH file went: the statements start because money moved (the scheduler's upkeep).
    // Read a transaction a page, the event loop gets its turns between the pages.
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    try {
      assert.equal(await planSandboxStatementsOfMovement(m.database, testSecretBox, 1), 1);
    } finally {
      clearInterval(ticking);
    }
    assert.ok(turns >= 2, `${turns} turns`);
    assert.equal(await planSandboxStatementsOfMovement(m.database, testSecretBox), 0);
    await m.advance((Date.UTC(2026, 0, 6, 8) - m.now()) / 1000);
    const [card] = await rows(m, "SELECT card_token FROM virtual_cards");
    const [transfer] = await rows(m, "SELECT transfer_id FROM instant_transfers");
    await fn({
      m,
      cardPayout,
      cardToken: String(card.card_token),
      instantPayout,
      transferId: String(transfer.transfer_id),
    });
  } finally {
    await m.close();
    await lithic.close();
    await increase.close();
  }
}

/** What completion paid to the bank for a payout: the provider's draw. */
async function paidCents(m: MoneyFixture, payoutId: string): Promise<number> {
  const [row] = await rows(
    m,
    `SELECT e.amount_cents FROM ledger_transactions t
       JOIN ledger_entries e ON e.transaction_id = t.id
       JOIN ledger_accounts a ON a.id = e.account_id AND a.code = 'bank'
      WHERE t.kind = 'payout.complete' AND t.payout_id = ?`,
    payoutId,
  );
  return Number(row.amount_cents);
}

Deno.test("a sandbox day with a virtual card and an instant push and no ACH file reconciles to zero", async () => {
  await withProviderDay(async ({ m, cardPayout, cardToken, instantPayout, transferId }) => {
    const card = await paidCents(m, cardPayout);
    const push = await paidCents(m, instantPayout);
    assert.deepEqual(
      await rows(
        m,
        `SELECT d.statement_date, d.account_last_four, d.line_count, d.matched_count,
                d.exception_count, d.closing_cents, i.source
           FROM statement_days d JOIN statement_imports i ON i.id = d.import_id
          ORDER BY d.statement_date, d.account_last_four`,
      ),
      [
        {
          statement_date: "2026-01-05",
          account_last_four: "0002",
          line_count: 3,
          matched_count: 3,
          exception_count: 0,
          closing_cents: 100_000 - card - push,
          source: "sandbox_bank",
        },
        {
          statement_date: "2026-01-05",
          account_last_four: "0003",
          line_count: 0,
          matched_count: 0,
          exception_count: 0,
          closing_cents: 0,
          source: "sandbox_bank",
        },
      ],
    );
    const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
    assert.deepEqual(
      await rows(
        m,
        `SELECT type_code, direction, amount_cents, customer_reference, match_kind, match_reason
           FROM statement_lines WHERE match_kind = 'provider_settlement' ORDER BY rowid`,
      ),
      [
        {
          type_code: "495",
          direction: "debit",
          amount_cents: card,
          customer_reference: cardToken,
          match_kind: "provider_settlement",
          match_reason: `Lithic card ${cardToken} of payout ${cardPayout}: drawn, ${
            dollars(card)
          }, named on the line`,
        },
        {
          type_code: "495",
          direction: "debit",
          amount_cents: push,
          customer_reference: transferId,
          match_kind: "provider_settlement",
          match_reason: `Increase transfer ${transferId} of payout ${instantPayout}: drawn, ${
            dollars(push)
          }, named on the line`,
        },
      ],
    );
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM recon_exceptions"), [{ n: 0 }]);
  });
});

Deno.test("a provider's line the sandbox bank leaves out is a service-side exception naming its card", async () => {
  await withProviderDay(
    async ({ m, cardPayout, cardToken }) => {
      const card = await paidCents(m, cardPayout);
      const [complete] = await rows(
        m,
        "SELECT id FROM ledger_transactions WHERE kind = 'payout.complete' AND payout_id = ?",
        cardPayout,
      );
      assert.deepEqual(
        await rows(
          m,
          `SELECT statement_date, account_last_four, side, kind, subject_id, direction,
                  amount_cents, reason FROM recon_exceptions`,
        ),
        [{
          statement_date: "2026-01-05",
          account_last_four: "0002",
          side: "service",
          kind: "provider_settlement",
          subject_id: complete.id,
          direction: "debit",
          amount_cents: card,
          reason: `the bank reported no debit of $${
            (card / 100).toFixed(2)
          } for Lithic card ${cardToken} of payout ${cardPayout}`,
        }],
      );
    },
    (_companyId, _date, move) => move.description.startsWith("Lithic card"),
  );
});

Deno.test("the sandbox's own PayPal, Lithic and Increase: a batch, a card's funding and a push on their day, the card's unspent balance paid back a month later, each reconcile to zero", async () => {
  const m = await openStatedMoneyFixture();
  try {
    await m.fund(1_000_000);
    // A spend limit ending in 99 cents is never spent: the card comes back at its expiry.
    const created = await m.create({
      email: "success+vcc@example.test",
      amountCents: 12_399,
      allowedPaymentMethodIds: [3],
    });
    assert.ok(created.ok);
    const pushed = await m.create({
      email: "success+instant@example.test",
      amountCents: 5_000,
      allowedPaymentMethodIds: [4],
    });
    assert.ok(pushed.ok);
    const paypal = await m.create({
      email: "success+paypal@example.test",
      amountCents: 7_000,
      allowedPaymentMethodIds: [7],
    });
    assert.ok(paypal.ok);
    await m.settle();
    // The simulator's push completes 5 s later; PayPal's batch goes at the five-minute mark.
    await m.advance(6 * 60);
    for (const created of [pushed, paypal]) {
      assert.equal((await m.payout(created.value.payouts[0].id)).status, "completed");
    }
    assert.equal(await planSandboxStatementsOfMovement(m.database, testSecretBox), 1);
    await m.advance(30 * DAY_SECONDS + 60);
    const [card] = await rows(m, "SELECT card_token, reclaimed_cents FROM virtual_cards");
    assert.equal(card.reclaimed_cents, 12_399);
    // The statements stopped after a week without movement; the money back starts them again.
    assert.equal(await planSandboxStatementsOfMovement(m.database, testSecretBox), 1);
    await m.advance(DAY_SECONDS);
    assert.deepEqual(
      await rows(
        m,
        `SELECT d.statement_date, l.type_code, l.direction, l.amount_cents, l.match_kind
           FROM statement_lines l JOIN statement_days d ON d.id = l.day_id ORDER BY l.rowid`,
      ),
      [
        {
          statement_date: "2026-01-05",
          type_code: "195",
          direction: "credit",
          amount_cents: 1_000_000,
          match_kind: "wire",
        },
        {
          statement_date: "2026-01-05",
          type_code: "495",
          direction: "debit",
          amount_cents: 7_000,
          match_kind: "provider_settlement",
        },
        {
          statement_date: "2026-01-05",
          type_code: "495",
          direction: "debit",
          amount_cents: 12_399,
          match_kind: "provider_settlement",
        },
        {
          statement_date: "2026-01-05",
          type_code: "495",
          direction: "debit",
          amount_cents: 5_000,
          match_kind: "provider_settlement",
        },
        {
          statement_date: "2026-02-04",
          type_code: "399",
          direction: "credit",
          amount_cents: 12_399,
          match_kind: "provider_settlement",
        },
      ],
    );
    const [back] = await rows(
      m,
      "SELECT match_reason FROM statement_lines WHERE type_code = '399'",
    );
    assert.match(
      String(back.match_reason),
      new RegExp(
        `^the late return of Lithic card ${card.card_token} of payout po_\\w+: paid back, \\$123\\.99, named on the line$`,
      ),
    );
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM recon_exceptions"), [{ n: 0 }]);
  } finally {
    await m.close();
  }
});
