/**
 * Reconciliation per day and line, and expected payments: a line's day lists its tie-out, the
 * company's files cut that day with their balance, every payout paid out or returned (lines that
 * sum to the day's totals, in the tie-out CSV too), the payouts that failed with their meaning and
 * the checks paid; the Funding page lists the wire awaited for a large disbursement and the ACH
 * funding in flight as expected, and a wire that arrived as matched.
 */
import assert from "node:assert/strict";
import { applyMove } from "../lib/payouts/store.ts";
import type { PayoutMove } from "../lib/payouts/transition.ts";
import { api } from "./api_helpers.ts";
import { acmeWithRita, consoleAs, createPayout, textOf } from "./console_helpers.ts";
import { withHttpFixture } from "./http_fixture.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };
const noFees = { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 };

Deno.test("console day: a line's tie-out, files, payout lines and returns of one day; the CSV's payout lines sum to its totals", async () => {
  await withHttpFixture(async (f) => {
    const { acme, rita } = await acmeWithRita(f);
    const database = f.deps.databases.test;
    const sam = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "sam",
      email: "sam@example.test",
      name: "Sam Stone",
      claimId: "CLM-2",
      amount: 80.25,
    });
    const now = f.clock.now();
    const date = new Date(now).toISOString().slice(0, 10);
    await database.writer.write(async (tx) => {
      const moves = (fail: boolean): PayoutMove[] => [
        { kind: "offer" },
        { kind: "select", paymentMethodId: 1, fees: noFees },
        { kind: "send" },
        fail ? { kind: "fail", reason: "R03" } : { kind: "complete" },
      ];
      for (const [payoutId, fail] of [[rita.payoutId, true], [sam.payoutId, false]] as const) {
        for (const step of moves(fail)) {
          const moved = await applyMove(tx, payoutId, step, now);
          assert.equal(moved.ok, true, `${step.kind}: ${JSON.stringify(moved)}`);
        }
      }
      await tx.execute({
        sql: `INSERT INTO rail_batches (id, company_id, rail, status, entry_count, total_cents,
                cutoff_at, rail_reference, created_at)
              VALUES ('rb_day', ?, 'ach', 'transmitted', 0, 0, ?, 'ACH_DAY.txt', ?)`,
        args: [acme.companyId, now, now],
      });
    });
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });

    const tieOut = await browser.get(`/console/ledger/tie-out?env=test&line=${acme.lineId}`);
    assert.match(
      tieOut.html,
      new RegExp(
        `<a href="/console/ledger/day\\?line=${acme.lineId}&amp;date=${date}&amp;env=test">${date}</a>`,
      ),
    );
    const page = await browser.get(`/console/ledger/day?env=test&line=${acme.lineId}&date=${date}`);
    assert.equal(page.status, 200);
    const text = textOf(page.html);
    assert.match(
      text,
      /Opening \$0\.00 Funded \$5,000\.00 Returned funding \$0\.00 Returned \$0\.00 Disbursed \$80\.25 Fees \$0\.00 Closing \$4,919\.75 Difference ties out/,
    );
    assert.match(text, /ACH file ACH_DAY\.txt 0 \$0\.00 transmitted balanced/);
    assert.match(
      text,
      new RegExp(`${sam.payoutId} CLM-2 payout\\.complete \\$80\\.25 \\$0\\.00 \\$0\\.00`),
    );
    assert.match(
      text,
      /Rita Rivers \$1,250\.00 R03: The bank returned the payment: no account matches the number/,
    );
    assert.match(text, /No check of this line was paid this day\./);

    const csv = await browser.get(
      `/console/ledger/tie-out.csv?env=test&line=${acme.lineId}&date=${date}`,
    );
    assert.equal(csv.status, 200);
    const sections = csv.html.split("\n\n");
    assert.equal(sections.length, 3);
    const [payoutHeader, ...payoutLines] = sections[2].trimEnd().split("\n");
    assert.equal(
      payoutHeader,
      "transaction_id,kind,payout_id,claim_or_uuid,posted_at,disbursed,fees,returned",
    );
    assert.deepEqual(
      payoutLines.map((line) => line.split(",").slice(1)),
      [[
        "payout.complete",
        sam.payoutId,
        "CLM-2",
        new Date(now).toISOString(),
        "80.25",
        "0.00",
        "0.00",
      ]],
    );

    // Another company's line, and a date that does not exist, read as missing.
    assert.equal(
      (await browser.get(`/console/ledger/day?env=test&line=${acme.lineId}&date=2026-02-30`))
        .status,
      404,
    );
    const beacon = await consoleAs(f, {
      email: "bea@ops.test",
      role: "viewer",
      companies: f.cast.beacon.id,
    });
    assert.equal(
      (await beacon.browser.get(`/console/ledger/day?env=test&line=${acme.lineId}&date=${date}`))
        .status,
      404,
    );
  }, NO_LIMIT);
});

Deno.test("console funding: the wire awaited for a large disbursement and an ACH funding in flight are expected; a wire that arrived is matched", async () => {
  await withHttpFixture(async (f) => {
    const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
    const database = f.deps.databases.test;
    const now = f.clock.now();
    const ach = await api(f, "POST", "/api/funds", {
      payment_method: "ACH",
      description: "monthly top-up",
      large_disbursement: false,
      amount: 2500.5,
    });
    assert.equal(ach.status, 201);
    const arrived = await api(f, "POST", "/api/funds", {
      payment_method: "WireTransfer",
      description: "wire",
      large_disbursement: false,
      amount: 100,
    });
    assert.equal((await arrived.json() as { status: string }).status, "Completed");
    await database.writer.write(async (tx) => {
      await tx.execute({
        sql: `INSERT INTO disbursements (id, company_id, line_id, kind, external_uuid,
                request_fingerprint, large_disbursement, created_at)
              VALUES ('dsb_home', ?, ?, 'disbursement', 'HOME-2026-3009', 'x', 1, ?)`,
        args: [acme.companyId, acme.lineId, now],
      });
      await tx.execute({
        sql: `INSERT INTO payouts (id, disbursement_id, company_id, line_id, payee_uuid,
                amount_cents, status, created_at, updated_at)
              VALUES ('po_home', 'dsb_home', ?, ?, 'owner', 97500000, 'pending_funds', ?, ?)`,
        args: [acme.companyId, acme.lineId, now, now],
      });
      await tx.execute({
        sql: `INSERT INTO fundings (id, company_id, line_id, funding_uuid, payment_method,
                amount_cents, description, large_disbursement, disbursement_id, status,
                request_fingerprint, created_at)
              VALUES ('fund_wire', ?, ?, 'WIRE-975K', 'WireTransfer', 97500000, 'for HOME',
                1, 'dsb_home', 'Pending', 'x', ?)`,
        args: [acme.companyId, acme.lineId, now],
      });
    });
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const page = await browser.get("/console/funding?env=test");
    assert.equal(page.status, 200);
    const text = textOf(page.html);
    const expected = text.slice(text.indexOf("Expected payments"), text.indexOf("Fundings"));
    assert.match(
      expected,
      /WIRE-975K announced Jan 5, 2026, 15:00 UTC Acme Mutual · auto wire \$975,000\.00 HOME-2026-3009 \$975,000\.00 waiting for funds awaited —/,
    );
    assert.match(
      expected,
      /ACH \$2,500\.50 the line's balance [A-Z][a-z]{2} \d+, 2026, \d\d:\d\d UTC —/,
    );
    assert.match(expected, /wire \$100\.00 the line's balance — arrived Jan 5, 2026, 15:00 UTC/);
    // Awaited first, the arrived wire last.
    assert.ok(expected.indexOf("WIRE-975K") < expected.indexOf("$100.00"));
    assert.match(page.html, /href="\/console\/disbursements\/dsb_home\?env=test">HOME-2026-3009/);
  }, NO_LIMIT);
});
