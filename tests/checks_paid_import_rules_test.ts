/** Paid-items files, pure: the CSV read (columns by header, any order), and each item's decision. */
import assert from "node:assert/strict";
import {
  decidePaidItem,
  exceptionLedgerEffect,
  type PaidItem,
  parsePaidItems,
  type RegisterFacts,
} from "../lib/checks/paid_import_rules.ts";

Deno.test("a paid-items CSV: header names in any order and case, quoted cells, amounts and dates as banks write them", () => {
  const parsed = parsePaidItems(
    '\uFEFFPaid Date,"Check Number",Amount\r\n' +
      "2026-01-09,1001,1234.56\r\n" +
      '01/10/2026,1002,"$1,000.00"\r\n' +
      "\r\n" +
      "1/2/2026,1003,7\r\n",
  );
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.message);
  assert.deepEqual(parsed.value.items, [
    { line: 2, checkNumber: 1001, amountCents: 123_456, paidDate: "2026-01-09" },
    { line: 3, checkNumber: 1002, amountCents: 100_000, paidDate: "2026-01-10" },
    { line: 5, checkNumber: 1003, amountCents: 700, paidDate: "2026-01-02" },
  ]);
  assert.deepEqual(parsed.value.malformed, []);
});

Deno.test("a paid-items CSV without one of its columns is refused whole, naming the column", () => {
  const table: [string, string][] = [
    ["check_number,amount\n1001,1.00\n", "paid_date"],
    ["amount,paid_date\n1.00,2026-01-09\n", "check_number"],
    ["check_number,paid_date\n1001,2026-01-09\n", "amount"],
    ["", "check_number"],
    ["\n\n", "check_number"],
  ];
  for (const [csv, column] of table) {
    const parsed = parsePaidItems(csv);
    assert.ok(!parsed.ok, JSON.stringify(csv));
    assert.equal(parsed.code, "missing_column");
    assert.equal(parsed.field, column, JSON.stringify(csv));
    assert.match(parsed.message, new RegExp(column));
  }
});

Deno.test("rows that cannot be read are reported with their line, the others kept", () => {
  const parsed = parsePaidItems(
    "check_number,amount,paid_date\n" +
      "0,1.00,2026-01-09\n" +
      "1001,1.005,2026-01-09\n" +
      "1002,0.00,2026-01-09\n" +
      "1003,1.00,2026-02-30\n" +
      "abc,-1,yesterday\n" +
      "1004,2.50,2026-01-09\n",
  );
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value.items, [
    { line: 7, checkNumber: 1004, amountCents: 250, paidDate: "2026-01-09" },
  ]);
  assert.deepEqual(parsed.value.malformed.map((row) => row.line), [2, 3, 4, 5, 6]);
  assert.match(parsed.value.malformed[0].message, /check_number "0"/);
  assert.match(parsed.value.malformed[1].message, /amount "1.005"/);
  assert.match(parsed.value.malformed[3].message, /paid_date "2026-02-30"/);
  assert.equal(parsed.value.malformed[4].message.split(";").length, 3);
});

Deno.test("each paid item against its check: a match, or the exception it is", () => {
  const item: PaidItem = { line: 2, checkNumber: 1001, amountCents: 5_000, paidDate: "2026-01-09" };
  const check = (facts: Partial<RegisterFacts>): RegisterFacts => ({
    status: "issued",
    amountCents: 5_000,
    paidDate: null,
    issueSent: true,
    ...facts,
  });
  const kindOf = (facts: RegisterFacts | null, paid = item) => {
    const decided = decidePaidItem(paid, facts);
    return decided.kind === "match" ? "match" : decided.exception;
  };
  assert.equal(kindOf(check({})), "match");
  assert.equal(kindOf(check({}), { ...item, amountCents: 5_001 }), "amount_mismatch");
  assert.equal(kindOf(check({ status: "voided" })), "voided");
  assert.equal(kindOf(check({ status: "stale" })), "stale");
  assert.equal(kindOf(check({ status: "paid", paidDate: "2026-01-08" })), "duplicate");
  assert.equal(kindOf(null), "unknown");
  assert.equal(kindOf(check({ issueSent: false })), "not_sent");
  // The ledger effect if the bank's payment stands: the difference of a mismatch, else all of it.
  assert.equal(exceptionLedgerEffect("amount_mismatch", 5_100, 5_000), 100);
  assert.equal(exceptionLedgerEffect("amount_mismatch", 4_900, 5_000), -100);
  assert.equal(exceptionLedgerEffect("voided", 5_000, 5_000), 5_000);
  assert.equal(exceptionLedgerEffect("unknown", 1_234, null), 1_234);
});
