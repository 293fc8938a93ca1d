/**
 * Statement imports reconcile each account's day: a day on which the bank did what the service
 * expects reconciles to zero exceptions; each injected difference is caught on its side, with its
 * reason; a file is imported once by SHA-256 and an account's day once.
 */
import assert from "node:assert/strict";
import { clearAchFunding } from "../lib/funding/store.ts";
import { importStatement } from "../lib/reconciliation/service.ts";
import { COMPANY, type ImportFixture, NOW, returnOf, withImports } from "./ach_import_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { bai2Statement, statementAccount } from "./recon_helpers.ts";

const DAY = "2026-11-24";
const SETTLEMENT = "000900000002";
const CHECKS = "000900000003";
const WIRE_CENTS = 10_000_000;

const account = statementAccount;
const statement = (accounts: ReturnType<typeof statementAccount>[], fileId = "1") =>
  bai2Statement(DAY, accounts, fileId);

interface Day {
  readonly returnTrace: string;
  readonly returnCents: number;
}

/** The day's moves as the service recorded them: an ACH file, a return, a paid check, a wire. */
async function serviceDay(f: ImportFixture): Promise<Day> {
  await f.database.writer.write((tx) =>
    tx.execute({
      sql: `INSERT INTO ach_files (batch_id, company_id, immediate_origin, immediate_destination,
              bank_date, file_id_modifier, effective_date, cutoff_kind, window_ends_at,
              content_sealed, sha256, byte_size, entry_hash, credit_total_cents, debit_total_cents,
              entry_count, file_name, created_at)
            VALUES (?, ?, '1123456789', '021000021', ?, 'A', ?, 'next_day', ?, 'x', 'x', 0, '0',
              125000, 50000, 2, 'ACME-20261124-A.ach', ?)`,
      args: [f.batchId, COMPANY, DAY, DAY, NOW, NOW],
    })
  );
  const returned = await f.credit({ amountCents: 7_500 });
  const imported = await f.import([returnOf(returned, "R03")]);
  assert.ok(imported.ok && imported.value.applied === 1);
  const paid = await f.credit({ amountCents: 12_550, stage: "selected" });
  await f.database.writer.write((tx) =>
    tx.execute({
      sql: `INSERT INTO checks (id, company_id, check_number, payout_id, reference, kind,
              amount_cents, payee_name, status, issue_date, issued_at, paid_date,
              paid_amount_cents, paid_at, created_at)
            VALUES ('chk_1', ?, 1001, ?, 'chk-ref', 'postal', 12500, 'Pat Doe', 'paid', ?, ?, ?,
              12500, ?, ?)`,
      args: [COMPANY, paid.payoutId, DAY, NOW, DAY, NOW, NOW],
    })
  );
  return { returnTrace: returned.trace, returnCents: returned.sentCents };
}

const deps = (f: ImportFixture) => ({
  database: f.database,
  environment: "test" as const,
  secretBox: testSecretBox,
});

const importFile = (f: ImportFixture, content: Uint8Array, fileName = "prior_day.bai") =>
  importStatement(deps(f), {
    companyId: COMPANY,
    content,
    fileName,
    source: "cli",
    importedBy: null,
  }, NOW + 86_400_000);

Deno.test("a day on which the bank did what the service expected reconciles to zero exceptions", async () => {
  await withImports(async (f) => {
    const day = await serviceDay(f);
    const file = statement([
      account(SETTLEMENT, 0, [
        ["466", 125_000, null, "ACH SETTLEMENT ACME-20261124-A"],
        ["166", 50_000, null, "ACH SETTLEMENT"],
        ["168", day.returnCents, day.returnTrace, "ACH RETURN R03"],
        ["195", WIRE_CENTS, null, "INCOMING WIRE"],
      ]),
      account(CHECKS, 1_000_000, [["475", 12_500, "0000001001", "CHECK PAID"]]),
    ]);
    const imported = await importFile(f, file);
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.deepEqual(
      imported.value.days.map((
        d,
      ) => [d.accountLastFour, d.role, d.date, d.lines, d.matched, d.exceptions]),
      [["0002", "settlement", DAY, 4, 4, 0], ["0003", "check", DAY, 1, 1, 0]],
    );
    assert.deepEqual([imported.value.matched, imported.value.exceptions, imported.value.skipped], [
      5,
      0,
      [],
    ]);
    const lines = await f.rows(
      "SELECT file_line, match_kind, match_reason FROM statement_lines ORDER BY file_line",
    );
    assert.deepEqual(lines, [
      {
        file_line: 4,
        match_kind: "ach_credit_file",
        match_reason:
          `ACH file ${f.batchId} (ACME-20261124-A.ach): its credits total of $1,250.00 settled on its effective date`,
      },
      {
        file_line: 5,
        match_kind: "ach_debit_file",
        match_reason:
          `ACH file ${f.batchId} (ACME-20261124-A.ach): its funding debits total of $500.00 settled on its effective date`,
      },
      {
        file_line: 6,
        match_kind: "ach_return",
        match_reason: `ACH return of trace ${day.returnTrace} for $74.50`,
      },
      {
        file_line: 7,
        match_kind: "wire",
        match_reason: `incoming wire of $100,000.00 for wire funding ${
          String((await f.rows("SELECT id FROM fundings"))[0].id)
        }`,
      },
      {
        file_line: 10,
        match_kind: "check_paid",
        match_reason: "check 1001 paid for $125.00, as written",
      },
    ]);
    assert.deepEqual(await f.rows("SELECT count(*) AS n FROM recon_exceptions"), [{ n: 0 }]);

    // The same file again changes nothing; another file reporting the same days is not read for them.
    const again = await importFile(f, file);
    assert.ok(again.ok);
    assert.deepEqual([again.value.duplicate, again.value.importId], [
      true,
      imported.value.importId,
    ]);
    const restated = await importFile(f, statement([account(CHECKS, 0, [])], "2"), "restated.bai");
    assert.ok(restated.ok);
    assert.deepEqual(restated.value.skipped, [{
      accountLastFour: "0003",
      date: DAY,
      reason: `reconciled already from import ${imported.value.importId}`,
    }]);
    assert.deepEqual(await f.rows("SELECT count(*) AS n FROM statement_days"), [{ n: 2 }]);
  });
});

Deno.test("injected differences of each kind are caught, each on its side with its reason", async () => {
  await withImports(async (f) => {
    const day = await serviceDay(f);
    const file = statement([
      account(SETTLEMENT, 0, [
        ["466", 125_001, null, "ACH SETTLEMENT"], // the file's credits, a cent off
        ["166", 50_000, null, "ACH SETTLEMENT"],
        // the return is missing, and so is the wire
        ["699", 2_500, null, "SERVICE FEE"], // a debit nothing expected
      ]),
      account(CHECKS, 0, [["475", 12_600, "1001", "CHECK PAID"]]), // paid for another amount
      account("000777777777", 0, []), // not one of the company's statement accounts
    ]);
    const imported = await importFile(f, file);
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.deepEqual([imported.value.matched, imported.value.exceptions], [1, 7]);
    assert.deepEqual(imported.value.skipped, [{
      accountLastFour: "7777",
      date: DAY,
      reason: "not a statement account of the company's bank settings",
    }]);
    const fundingId = String((await f.rows("SELECT id FROM fundings"))[0].id);
    const returnEntry = String(
      (await f.rows("SELECT id FROM rail_batch_entries WHERE trace_number = ?", day.returnTrace))[0]
        .id,
    );
    assert.deepEqual(
      await f.rows(
        `SELECT account_last_four, side, kind, subject_id, direction, amount_cents, reason, status
           FROM recon_exceptions ORDER BY account_last_four, side, amount_cents`,
      ),
      [
        {
          account_last_four: "0002",
          side: "bank",
          kind: "other",
          subject_id: null,
          direction: "debit",
          amount_cents: 2_500,
          reason:
            "the bank reported a debit of $25.00 (other, type 699) the service did not expect",
          status: "open",
        },
        {
          account_last_four: "0002",
          side: "bank",
          kind: "ach",
          subject_id: null,
          direction: "debit",
          amount_cents: 125_001,
          reason:
            "the bank reported a debit of $1,250.01 (ach, type 466) the service did not expect",
          status: "open",
        },
        {
          account_last_four: "0002",
          side: "service",
          kind: "ach_return",
          subject_id: returnEntry,
          direction: "credit",
          amount_cents: 7_450,
          reason: `the bank reported no credit of $74.50 for the R03 return of payout ${
            String(
              (await f.rows("SELECT payout_id FROM rail_batch_entries WHERE id = ?", returnEntry))[
                0
              ].payout_id,
            )
          } (trace ${day.returnTrace})`,
          status: "open",
        },
        {
          account_last_four: "0002",
          side: "service",
          kind: "ach_credit_file",
          subject_id: f.batchId,
          direction: "debit",
          amount_cents: 125_000,
          reason:
            `the bank reported no debit of $1,250.00 for ACH file ${f.batchId} (ACME-20261124-A.ach)`,
          status: "open",
        },
        {
          account_last_four: "0002",
          side: "service",
          kind: "wire",
          subject_id: fundingId,
          direction: "credit",
          amount_cents: WIRE_CENTS,
          reason: `the bank reported no credit of $100,000.00 for wire funding ${fundingId}`,
          status: "open",
        },
        {
          account_last_four: "0003",
          side: "bank",
          kind: "check_paid",
          subject_id: null,
          direction: "debit",
          amount_cents: 12_600,
          reason:
            "the bank reported a debit of $126.00 (check_paid, type 475) the service did not expect: check 1001 was written for $125.00",
          status: "open",
        },
        {
          account_last_four: "0003",
          side: "service",
          kind: "check_paid",
          subject_id: "chk_1",
          direction: "debit",
          amount_cents: 12_500,
          reason: "the bank reported no debit of $125.00 for check 1001",
          status: "open",
        },
      ],
    );
  });
});

/** A check of the day's payout `payoutId` and a paid item of it the register could not take. */
async function paidItemException(
  f: ImportFixture,
  check: { id: string; number: number; cents: number; status: "issued" | "paid" },
  item: { id: string; kind: "voided" | "not_sent"; resolution: "payment_stands" | "bank_reversed" },
) {
  const { payoutId } = await f.credit({ amountCents: check.cents + 50, stage: "selected" });
  await f.database.writer.write(async (tx) => {
    await tx.execute({
      sql: `INSERT INTO checks (id, company_id, check_number, payout_id, reference, kind,
              amount_cents, payee_name, status, issue_date, issued_at, paid_date,
              paid_amount_cents, paid_at, created_at)
            VALUES (?, ?, ?, ?, ?, 'postal', ?, 'Pat Doe', ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        check.id,
        COMPANY,
        check.number,
        payoutId,
        `${check.id}-ref`,
        check.cents,
        check.status,
        DAY,
        NOW,
        check.status === "paid" ? DAY : null,
        check.status === "paid" ? check.cents : null,
        check.status === "paid" ? NOW : null,
        NOW,
      ],
    });
    await tx.execute({
      sql: `INSERT INTO check_paid_imports (id, company_id, sha256, source, file_name, item_count,
              matched_count, exception_count, report, imported_by, imported_at)
            VALUES (?, ?, ?, 'sftp', 'paid.csv', 1, 0, 1, '[]', NULL, ?)
            ON CONFLICT DO NOTHING`,
      args: ["cpi_day", COMPANY, "sha-paid", NOW],
    });
    await tx.execute({
      sql: `INSERT INTO check_exceptions (id, company_id, import_id, check_number, check_id, kind,
              paid_amount_cents, paid_date, status, resolution, resolved_by, resolved_at,
              created_at)
            VALUES (?, ?, 'cpi_day', ?, ?, ?, ?, ?, 'resolved', ?, 'op_admin', ?, ?)`,
      args: [
        item.id,
        COMPANY,
        check.number,
        check.id,
        item.kind,
        check.cents,
        DAY,
        item.resolution,
        NOW,
        NOW,
      ],
    });
  });
}

/**
 * A payout's credit returned after it completed, a funding debit returned after it cleared; check
 * 2001 voided and paid before the void reached the bank, its payment standing (which made the
 * check paid); check 2002 paid before its issue was sent, and the bank took the payment back.
 */
async function lateDay(f: ImportFixture) {
  const late = await f.credit({ amountCents: 8_000, stage: "completed" });
  const cleared = await f.debit(20_000, "completed");
  await f.database.writer.write((tx) => clearAchFunding(tx, cleared.fundingId, NOW));
  const returned = await f.import([returnOf(late, "R10"), returnOf(cleared, "R10")]);
  assert.ok(returned.ok);
  assert.deepEqual([returned.value.applied, returned.value.notApplied], [2, []]);
  await paidItemException(f, { id: "chk_v", number: 2001, cents: 3_000, status: "paid" }, {
    id: "cex_v",
    kind: "voided",
    resolution: "payment_stands",
  });
  await paidItemException(f, { id: "chk_r", number: 2002, cents: 4_000, status: "issued" }, {
    id: "cex_r",
    kind: "not_sent",
    resolution: "bank_reversed",
  });
  return { late, cleared };
}

Deno.test("late returns, a voided check's payment that stood and a paid item the bank took back are each expected once, as the bank posts them", async () => {
  await withImports(async (f) => {
    const { late, cleared } = await lateDay(f);
    const imported = await importFile(
      f,
      statement([
        account(SETTLEMENT, 0, [
          ["195", WIRE_CENTS, null, "INCOMING WIRE"],
          ["168", late.sentCents, late.trace, "ACH RETURN R10"],
          ["468", cleared.amountCents, cleared.trace, "ACH RETURN R10"],
        ]),
        account(CHECKS, 50_000, [
          ["475", 3_000, "2001", "CHECK PAID"],
          ["475", 4_000, "2002", "CHECK PAID"],
          ["399", 4_000, "2002", "CHECK PAID REVERSED"],
        ]),
      ]),
    );
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.deepEqual(await f.rows("SELECT side, kind, reason FROM recon_exceptions"), []);
    assert.deepEqual([imported.value.matched, imported.value.exceptions], [6, 0]);
    assert.deepEqual(
      await f.rows(
        `SELECT type_code, match_kind, match_subject_id, match_reason FROM statement_lines
          WHERE type_code <> '195' ORDER BY file_line`,
      ),
      [
        {
          type_code: "168",
          match_kind: "ach_return",
          match_subject_id: late.entryId,
          match_reason: `ACH return of trace ${late.trace} for $79.50`,
        },
        {
          type_code: "468",
          match_kind: "ach_return",
          match_subject_id: cleared.entryId,
          match_reason: `ACH return of trace ${cleared.trace} for $200.00`,
        },
        {
          type_code: "475",
          match_kind: "check_paid",
          match_subject_id: "chk_v",
          match_reason: "check 2001 paid for $30.00, as written",
        },
        {
          type_code: "475",
          match_kind: "check_paid",
          match_subject_id: "cex_r",
          match_reason: "check 2002 paid for $40.00, as written",
        },
        {
          type_code: "399",
          match_kind: "check_reversal",
          match_subject_id: "cex_r",
          match_reason: "the bank's payment of check 2002 ($40.00) came back, as resolved",
        },
      ],
    );
  });
});

Deno.test("late returns and a reversal the bank did not report are service-side exceptions with their reasons", async () => {
  await withImports(async (f) => {
    const { late, cleared } = await lateDay(f);
    const imported = await importFile(
      f,
      statement([
        account(SETTLEMENT, 0, [["195", WIRE_CENTS, null, "INCOMING WIRE"]]),
        account(CHECKS, 50_000, [
          ["475", 3_000, "2001", "CHECK PAID"],
          ["475", 4_000, "2002", "CHECK PAID"],
        ]),
      ]),
    );
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    const payoutId = String(
      (await f.rows("SELECT payout_id FROM rail_batch_entries WHERE id = ?", late.entryId))[0]
        .payout_id,
    );
    assert.deepEqual(
      await f.rows(
        `SELECT account_last_four, side, kind, subject_id, direction, amount_cents, reason
           FROM recon_exceptions ORDER BY account_last_four, amount_cents`,
      ),
      [
        {
          account_last_four: "0002",
          side: "service",
          kind: "ach_return",
          subject_id: late.entryId,
          direction: "credit",
          amount_cents: late.sentCents,
          reason:
            `the bank reported no credit of $79.50 for the late R10 return of payout ${payoutId} (trace ${late.trace})`,
        },
        {
          account_last_four: "0002",
          side: "service",
          kind: "ach_return",
          subject_id: cleared.entryId,
          direction: "debit",
          amount_cents: 20_000,
          reason:
            `the bank reported no debit of $200.00 for the late R10 return of funding ${cleared.fundingId} (trace ${cleared.trace})`,
        },
        {
          account_last_four: "0003",
          side: "service",
          kind: "check_reversal",
          subject_id: "cex_r",
          direction: "credit",
          amount_cents: 4_000,
          reason:
            "the bank reported no credit of $40.00 for the bank's reversal of its payment of check 2002 (not sent)",
        },
      ],
    );
  });
});

Deno.test("a malformed statement is refused whole with its line and reason; nothing is written", async () => {
  await withImports(async (f) => {
    const good = new TextDecoder().decode(
      statement([account(SETTLEMENT, 0, [["195", 100, null, "WIRE"]])]),
    );
    const bad = good.replace("49,200,3/", "49,201,3/");
    assert.notEqual(bad, good);
    const refused = await importFile(f, new TextEncoder().encode(bad), "bad.bai");
    assert.deepEqual(refused, {
      ok: false,
      code: "malformed_statement",
      message:
        "bad.bai line 5: the account control total is 201, the records add up to 200; nothing was imported",
      field: "file",
      details: { line: 5, reason: "the account control total is 201, the records add up to 200" },
    });
    assert.deepEqual(await f.rows("SELECT count(*) AS n FROM statement_imports"), [{ n: 0 }]);
  });
});
