/**
 * The sandbox bank writes a statement of each bank day from what it did, and the day reconciles:
 * an ACH file (credits and a funding debit), a wire, and a payout returned R03, over a week, with
 * no exception. A difference injected into a day (a fee the service never expected) is caught.
 */
import assert from "node:assert/strict";
import { selectMethod } from "../lib/payouts/jobs.ts";
import type { InjectedLine } from "../lib/reconciliation/sandbox_statements.ts";
import { testSecretBox } from "./helpers.ts";
import type { MoneyFixture } from "./money_core_helpers.ts";
import { openStatedMoneyFixture } from "./recon_helpers.ts";
import { rows } from "./ach_helpers.ts";

async function chooseAchAccount(m: MoneyFixture, payoutId: string, accountNumber: string) {
  const kept = {
    routing_number: "021000021",
    account_type: "checking",
    account_sealed: await testSecretBox.sealText(accountNumber),
  };
  const selected = await m.database.writer.write((tx) =>
    selectMethod(tx, payoutId, { paymentMethodId: 1, details: { accountNumber }, kept }, m.now())
  );
  assert.ok(selected.ok);
}

/** A week of the sandbox: a wire, an ACH funding, two ACH payouts, one of them returned. */
async function week(inject?: (companyId: string, date: string) => readonly InjectedLine[]) {
  const m = await openStatedMoneyFixture({ inject });
  await m.fund(100_000);
  await m.fund(50_000, "ACH");
  const created = await m.create([
    { payeeUuid: "settles", amountCents: 10_000 },
    { payeeUuid: "returned", amountCents: 10_000 },
  ]);
  assert.ok(created.ok);
  await m.settle();
  const [settles, returned] = created.value.payouts.map((p) => p.id);
  await chooseAchAccount(m, settles, "000123456789");
  await chooseAchAccount(m, returned, "000111111116");
  await m.settle();
  // Monday 10:30 New York the file goes; Wednesday the return; Thursday 02:00 Wednesday's statement.
  await m.advance((Date.UTC(2026, 0, 8, 8) - m.now()) / 1000);
  return m;
}

const days = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT d.statement_date, d.account_last_four, d.line_count, d.matched_count, d.exception_count,
            d.opening_cents, d.closing_cents, i.source
       FROM statement_days d JOIN statement_imports i ON i.id = d.import_id
      ORDER BY d.statement_date, d.account_last_four`,
  );

Deno.test("a sandbox week reconciles to zero: the sandbox bank's statements match every move", async () => {
  const m = await week();
  try {
    const stated = await days(m);
    const row = (date: string, four: string, lines: number, opening: number, closing: number) => ({
      statement_date: date,
      account_last_four: four,
      line_count: lines,
      matched_count: lines,
      exception_count: 0,
      opening_cents: opening,
      closing_cents: closing,
      source: "sandbox_bank",
    });
    // Monday: the wire in, the file's funding debit in and its credits out; Wednesday: the return.
    assert.deepEqual(stated, [
      row("2026-01-05", "0002", 3, 0, 100_000 + 50_000 - 20_000),
      row("2026-01-05", "0003", 0, 0, 0),
      row("2026-01-06", "0002", 0, 130_000, 130_000),
      row("2026-01-06", "0003", 0, 0, 0),
      row("2026-01-07", "0002", 1, 130_000, 140_000),
      row("2026-01-07", "0003", 0, 0, 0),
    ]);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM recon_exceptions"), [{ n: 0 }]);
    assert.deepEqual(
      (await rows(m, "SELECT match_kind FROM statement_lines ORDER BY rowid")).map((r) =>
        r.match_kind
      ),
      ["ach_credit_file", "ach_debit_file", "wire", "ach_return"],
    );
  } finally {
    await m.close();
  }
});

Deno.test("a difference injected into a sandbox day is an exception", async () => {
  const m = await week((_companyId, date) =>
    date === "2026-01-06"
      ? [{ accountNumber: "000900000002", typeCode: "699", amountCents: 1_500, text: "WIRE FEE" }]
      : []
  );
  try {
    assert.deepEqual(
      await rows(
        m,
        "SELECT statement_date, side, kind, direction, amount_cents, reason FROM recon_exceptions",
      ),
      [{
        statement_date: "2026-01-06",
        side: "bank",
        kind: "other",
        direction: "debit",
        amount_cents: 1_500,
        reason: "the bank reported a debit of $15.00 (other, type 699) the service did not expect",
      }],
    );
  } finally {
    await m.close();
  }
});
