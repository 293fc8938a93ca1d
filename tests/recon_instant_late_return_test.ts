/**
 * An instant deposit whose money came back after its payout completed (a push to a card reversed,
 * a Real-Time Payments transfer returned): Increase pays it back onto the account it settles from,
 * so the day of the late return expects a credit there named by the transfer's id, as the day of
 * its completion expected the debit. With the sandbox bank's statement and with a bank's statement
 * imported by hand, the day reconciles to zero with the lines, and without them each is a
 * service-side exception naming its transfer.
 */
import assert from "node:assert/strict";
import { recordLateReturn } from "../lib/payouts/store.ts";
import type { ExpectedMove } from "../lib/reconciliation/matching.ts";
import { planSandboxStatementsOfMovement } from "../lib/reconciliation/sandbox_statements.ts";
import { rows } from "./ach_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { chooseInstant, chooseInstantBank, withIncrease } from "./instant_helpers.ts";
import { DAY_SECONDS, type MoneyFixture } from "./money_core_helpers.ts";
import {
  bai2Statement,
  type BankLine,
  importBankStatement,
  openStatedMoneyFixture,
  statementAccount,
} from "./recon_helpers.ts";

const SETTLEMENT = "000900000002";
/** Wednesday 2026-01-07, two days after the payouts completed (Monday). */
const RETURN_DAY = "2026-01-07";

interface Returned {
  readonly m: MoneyFixture;
  /** The push to a card and the Real-Time Payments transfer, each with what came back. */
  readonly card: { payoutId: string; transferId: string; cents: number };
  readonly rtp: { payoutId: string; transferId: string; cents: number };
}

/**
 * Monday: a push to a card (a `success+instant` payee) and an instant bank payment complete at
 * the sandbox's Increase; Wednesday 15:00 the money of both comes back. `statements` says who
 * states the days: the sandbox bank (leaving out what `omit` names) or nobody, for a test that
 * imports a bank's file.
 */
async function withInstantLateReturns(
  statements: "sandbox" | "bank",
  fn: (returned: Returned) => Promise<void>,
  omit?: (companyId: string, date: string, move: ExpectedMove) => boolean,
): Promise<void> {
  const m = await openStatedMoneyFixture({ omit });
  try {
    await m.fund(1_000_000);
    const pushed = await m.create({
      email: "success+instant@example.test",
      amountCents: 5_000,
      allowedPaymentMethodIds: [4],
    });
    assert.ok(pushed.ok);
    await m.settle();
    const rtpPayout = await chooseInstantBank(m, 7_500, "021000021");
    await m.advance(10);
    const cardPayout = pushed.value.payouts[0].id;
    for (const id of [cardPayout, rtpPayout]) {
      assert.equal((await m.payout(id)).status, "completed");
    }
    if (statements === "sandbox") {
      assert.equal(await planSandboxStatementsOfMovement(m.database, testSecretBox), 1);
    }
    await m.advance((Date.UTC(2026, 0, 7, 20) - m.now()) / 1000);
    const back = async (payoutId: string, reason: string) => {
      const returned = await m.database.writer.write((tx) =>
        recordLateReturn(tx, payoutId, reason, m.now())
      );
      assert.ok(returned.ok, returned.ok ? "" : returned.message);
      const [transfer] = await rows(
        m,
        "SELECT transfer_id FROM instant_transfers WHERE payout_id = ?",
        payoutId,
      );
      return {
        payoutId,
        transferId: String(transfer.transfer_id),
        cents: returned.value.returnedCents,
      };
    };
    const card = await back(cardPayout, "reversed");
    const rtp = await back(rtpPayout, "AC04");
    // Thursday 08:00 New York: the sandbox bank stated Wednesday at 02:00.
    await m.advance(DAY_SECONDS);
    await fn({ m, card, rtp });
  } finally {
    await m.close();
  }
}

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

const returnDay = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT d.account_last_four, d.line_count, d.matched_count, d.exception_count
       FROM statement_days d WHERE d.statement_date = ? ORDER BY d.account_last_four`,
    RETURN_DAY,
  );

const providerLines = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT l.type_code, l.direction, l.amount_cents, l.customer_reference, l.match_reason
       FROM statement_lines l JOIN statement_days d ON d.id = l.day_id
      WHERE d.statement_date = ? ORDER BY l.rowid`,
    RETURN_DAY,
  );

const matchedAs = (
  returned: Returned["card"],
) =>
  `the late return of Increase transfer ${returned.transferId} of payout ${returned.payoutId}: paid back, ${
    dollars(returned.cents)
  }, named on the line`;

Deno.test("sandbox: an instant deposit's push and RTP transfer returned after completion are credits on the day of their return, and it reconciles to zero", async () => {
  await withInstantLateReturns("sandbox", async ({ m, card, rtp }) => {
    assert.deepEqual(await returnDay(m), [
      { account_last_four: "0002", line_count: 2, matched_count: 2, exception_count: 0 },
      { account_last_four: "0003", line_count: 0, matched_count: 0, exception_count: 0 },
    ]);
    assert.deepEqual(await providerLines(m), [
      {
        type_code: "399",
        direction: "credit",
        amount_cents: card.cents,
        customer_reference: card.transferId,
        match_reason: matchedAs(card),
      },
      {
        type_code: "399",
        direction: "credit",
        amount_cents: rtp.cents,
        customer_reference: rtp.transferId,
        match_reason: matchedAs(rtp),
      },
    ]);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM recon_exceptions"), [{ n: 0 }]);
  });
});

/** The service-side exceptions of the return day: each late return the bank did not report. */
async function missingReturns(m: MoneyFixture, returned: readonly Returned["card"][]) {
  const expected = [];
  for (const r of returned) {
    const [posting] = await rows(
      m,
      "SELECT id FROM ledger_transactions WHERE kind = 'payout.late_return' AND payout_id = ?",
      r.payoutId,
    );
    expected.push({
      statement_date: RETURN_DAY,
      account_last_four: "0002",
      side: "service",
      kind: "provider_settlement",
      subject_id: posting.id,
      direction: "credit",
      amount_cents: r.cents,
      reason: `the bank reported no credit of ${
        dollars(r.cents)
      } for the late return of Increase transfer ${r.transferId} of payout ${r.payoutId}`,
    });
  }
  assert.deepEqual(
    await rows(
      m,
      `SELECT statement_date, account_last_four, side, kind, subject_id, direction, amount_cents,
              reason FROM recon_exceptions ORDER BY rowid`,
    ),
    expected,
  );
}

Deno.test("sandbox: an instant deposit's late return the bank leaves out is a service-side exception naming its transfer", async () => {
  await withInstantLateReturns(
    "sandbox",
    async ({ m, card, rtp }) => await missingReturns(m, [card, rtp]),
    (_companyId, date, move) => date === RETURN_DAY && move.kind === "provider_settlement",
  );
});

/** A bank's prior-day statement of the settlement account on the return day. */
const bankStatement = (lines: BankLine[]) =>
  bai2Statement(RETURN_DAY, [statementAccount(SETTLEMENT, 0, lines)]);

Deno.test("a bank's statement: the instant deposits' late returns, each a credit naming its transfer, reconcile the day to zero", async () => {
  await withInstantLateReturns("bank", async ({ m, card, rtp }) => {
    const imported = await importBankStatement(
      m,
      bankStatement([
        ["399", card.cents, card.transferId, "INCREASE CARD PUSH REVERSAL"],
        ["399", rtp.cents, rtp.transferId, "RTP RETURN"],
      ]),
    );
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.deepEqual([imported.value.matched, imported.value.exceptions], [2, 0]);
    assert.deepEqual((await providerLines(m)).map((l) => l.match_reason), [
      matchedAs(card),
      matchedAs(rtp),
    ]);
  });
});

Deno.test("a bank's statement without the instant deposits' late returns: each is a service-side exception naming its transfer", async () => {
  await withInstantLateReturns("bank", async ({ m, card, rtp }) => {
    const imported = await importBankStatement(m, bankStatement([]));
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.deepEqual([imported.value.matched, imported.value.exceptions], [0, 2]);
    await missingReturns(m, [card, rtp]);
  });
});

Deno.test("a payout whose push was declined and that was then paid by ACH: its completion is no Increase draw, on the sandbox bank's statement or in what the service expects", async () => {
  await withIncrease(async ({ m, server }) => {
    await m.fund(100_000);
    const token = server.tokenize("4000123412341234");
    const payoutId = await chooseInstant(m, 5_000, token.id);
    const [push] = server.pushesTo(token.id);
    push.status = "declined";
    push.decline = { reason: "do_not_honor" };
    await m.advance(30);
    assert.equal((await m.payout(payoutId)).status, "modality_offered");
    assert.ok((await m.select(payoutId, 1, { accountNumber: "000123456789" })).ok);
    // The ACH file goes Monday (effective the same day); the payout completes Wednesday 17:00.
    await m.advance(4 * DAY_SECONDS);
    assert.equal((await m.payout(payoutId)).status, "completed");
    assert.deepEqual(
      await rows(
        m,
        `SELECT d.statement_date, l.type_code, l.amount_cents, l.match_kind
           FROM statement_lines l JOIN statement_days d ON d.id = l.day_id ORDER BY l.rowid`,
      ),
      [
        {
          statement_date: "2026-01-05",
          type_code: "466",
          amount_cents: 5_000,
          match_kind: "ach_credit_file",
        },
        {
          statement_date: "2026-01-05",
          type_code: "195",
          amount_cents: 100_000,
          match_kind: "wire",
        },
      ],
    );
    assert.deepEqual(await rows(m, "SELECT reason FROM recon_exceptions"), []);
  });
});
