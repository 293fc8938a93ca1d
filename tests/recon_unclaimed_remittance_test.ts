/**
 * An unclaimed-property report remitted to a state moves its money out of the company's lines; the
 * settlement account, which holds the lines' money, pays it the same day as one debit of the
 * report's total. With the sandbox bank's statement and with a bank's statement imported by hand,
 * the day reconciles to zero with that debit (by the report's id on the line, or by its amount
 * alone), and without it the remittance is a service-side exception naming the report.
 */
import assert from "node:assert/strict";
import type { Result } from "../lib/platform/result.ts";
import {
  type Remittance,
  remitUnclaimedReport,
  writeUnclaimedReport,
  type WrittenReport,
} from "../lib/obligations/unclaimed.ts";
import type { ExpectedMove } from "../lib/reconciliation/matching.ts";
import { planSandboxStatementsOfMovement } from "../lib/reconciliation/sandbox_statements.ts";
import { rows } from "./ach_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { DAY_SECONDS, type MoneyFixture } from "./money_core_helpers.ts";
import { configure, owe } from "./obligations_helpers.ts";
import {
  bai2Statement,
  type BankLine,
  importBankStatement,
  openStatedMoneyFixture,
  statementAccount,
} from "./recon_helpers.ts";

const SETTLEMENT = "000900000002";
/** Thursday 2026-01-15: the report is written and remitted at 10:00 New York. */
const REMIT_DAY = "2026-01-15";

/**
 * Monday: a wire in, two payees in Illinois who never choose ($500.00 and $250.00, pay_by the next
 * day, kept owed under `hold`); the sandbox's one-day dormancy and their notices pass; ten days
 * later the Illinois report of 2026 is written and remitted. `statements` says who states the days: the
 * sandbox bank (leaving out what `omit` names) or nobody, for a test that imports a bank's file.
 */
async function withRemittance(
  statements: "sandbox" | "bank",
  fn: (m: MoneyFixture, report: WrittenReport["report"]) => Promise<void>,
  omit?: (companyId: string, date: string, move: ExpectedMove) => boolean,
): Promise<void> {
  const m = await openStatedMoneyFixture({ omit });
  try {
    await configure(m, {
      offer_expiry_action: "hold",
      holder_state: "DE",
      sandbox_dormancy_days: 1,
    });
    await m.fund(100_000);
    await owe(m, "pat", { amountCents: 50_000, payBy: "2026-01-06" });
    await owe(m, "sam", { amountCents: 25_000, payBy: "2026-01-06" });
    if (statements === "sandbox") {
      assert.equal(await planSandboxStatementsOfMovement(m.database, testSecretBox), 1);
    }
    await m.advance((Date.UTC(2026, 0, 15, 15) - m.now()) / 1000);
    const remitted = await m.database.writer.write<Result<Remittance>>(async (tx) => {
      const written = await writeUnclaimedReport(tx, "test", {
        companyId: m.companyId,
        state: "IL",
        reportYear: 2026,
      }, m.now());
      if (!written.ok) return tx.abort(written);
      const done = await remitUnclaimedReport(tx, "test", written.value.report.id, m.now());
      return done.ok ? done : tx.abort(done);
    });
    assert.ok(remitted.ok, remitted.ok ? "" : remitted.message);
    assert.deepEqual([remitted.value.escheated, remitted.value.totalCents], [2, 75_000]);
    if (statements === "sandbox") {
      // The statements stopped after days without movement; the remittance starts them again.
      assert.equal(await planSandboxStatementsOfMovement(m.database, testSecretBox), 1);
    }
    // Friday: the sandbox bank stated Thursday at 02:00.
    await m.advance(DAY_SECONDS);
    await fn(m, remitted.value.report);
  } finally {
    await m.close();
  }
}

const remitDayLines = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT d.account_last_four, l.type_code, l.direction, l.amount_cents, l.customer_reference,
            l.match_kind, l.match_subject_id, l.match_reason
       FROM statement_lines l JOIN statement_days d ON d.id = l.day_id
      WHERE d.statement_date = ? ORDER BY l.rowid`,
    REMIT_DAY,
  );

const described = (report: WrittenReport["report"]) =>
  `the remittance of unclaimed property report ${report.id} to IL (2026)`;

Deno.test("sandbox: the day an unclaimed-property report is remitted, the settlement account pays its total, and the day reconciles to zero", async () => {
  await withRemittance("sandbox", async (m, report) => {
    assert.deepEqual(await remitDayLines(m), [{
      account_last_four: "0002",
      type_code: "466",
      direction: "debit",
      amount_cents: 75_000,
      customer_reference: report.id,
      match_kind: "unclaimed_remittance",
      match_subject_id: report.id,
      match_reason: `${described(report)}: $750.00, named on the line`,
    }]);
    assert.deepEqual(await rows(m, "SELECT count(*) AS n FROM recon_exceptions"), [{ n: 0 }]);
  });
});

/** The one exception: the remittance the bank did not report. */
async function missingRemittance(m: MoneyFixture, report: WrittenReport["report"]) {
  assert.deepEqual(
    await rows(
      m,
      `SELECT statement_date, account_last_four, side, kind, subject_id, direction, amount_cents,
              reason FROM recon_exceptions`,
    ),
    [{
      statement_date: REMIT_DAY,
      account_last_four: "0002",
      side: "service",
      kind: "unclaimed_remittance",
      subject_id: report.id,
      direction: "debit",
      amount_cents: 75_000,
      reason: `the bank reported no debit of $750.00 for ${described(report)}`,
    }],
  );
}

Deno.test("sandbox: a remittance the bank leaves out is a service-side exception naming the report", async () => {
  await withRemittance(
    "sandbox",
    missingRemittance,
    (_companyId, _date, move) => move.kind === "unclaimed_remittance",
  );
});

/** A bank's prior-day statement of the settlement account on the remittance day. */
const bankStatement = (lines: BankLine[]) =>
  bai2Statement(REMIT_DAY, [statementAccount(SETTLEMENT, 100_000, lines)]);

Deno.test("a bank's statement: the remittance's debit reconciles the day, by the report named on the line or by its amount", async () => {
  for (
    const [line, reason] of [
      [
        ["466", 75_000, "", "ACH CCD ILLINOIS TREASURER UNCLAIMED"],
        (r: WrittenReport["report"]) =>
          `a debit of $750.00, as ${described(r)} (the report not named on the line)`,
      ],
      [
        ["495", 75_000, "REPORT", "WIRE TO IL TREASURER"],
        (r: WrittenReport["report"]) => `${described(r)}: $750.00, named on the line`,
      ],
    ] as const
  ) {
    await withRemittance("bank", async (m, report) => {
      const named = line[2] === "REPORT" ? report.id : "";
      const imported = await importBankStatement(
        m,
        bankStatement([[line[0], line[1], named, line[3]]]),
      );
      assert.ok(imported.ok, imported.ok ? "" : imported.message);
      assert.deepEqual([imported.value.matched, imported.value.exceptions], [1, 0]);
      const [matched] = await remitDayLines(m);
      assert.deepEqual([matched.match_kind, matched.match_reason], [
        "unclaimed_remittance",
        reason(report),
      ]);
    });
  }
});

Deno.test("a bank's statement without the remittance's debit: a service-side exception naming the report", async () => {
  await withRemittance("bank", async (m, report) => {
    const imported = await importBankStatement(m, bankStatement([]));
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.deepEqual([imported.value.matched, imported.value.exceptions], [0, 1]);
    await missingRemittance(m, report);
  });
});
