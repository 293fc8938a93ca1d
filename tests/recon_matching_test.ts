import { deepStrictEqual as assertEquals } from "node:assert/strict";
import fc from "fast-check";
import {
  achFileTotal,
  checkByNumber,
  type ExpectedMove,
  reconcileDay,
  remittanceByAmount,
  remittanceByReport,
  returnByAmount,
  returnByTrace,
  wireByAmount,
} from "../lib/reconciliation/matching.ts";
import type { StatementLine } from "../lib/reconciliation/statement.ts";

const line = (over: Partial<StatementLine>): StatementLine => ({
  line: 1,
  direction: "debit",
  amountCents: 100,
  typeCode: "466",
  kind: "ach",
  bankReference: null,
  customerReference: null,
  text: "",
  ...over,
});
const move = (over: Partial<ExpectedMove>): ExpectedMove => ({
  kind: "ach_credit_file",
  subjectId: "rbt_1",
  direction: "debit",
  amountCents: 100,
  reference: null,
  description: "ACH file rbt_1",
  ...over,
});

const remittance = move({
  kind: "unclaimed_remittance",
  subjectId: "ucr_1",
  reference: "ucr_1",
  description: "the remittance of report ucr_1 to IL",
});

Deno.test("rules: each says why, or null", () => {
  const check = move({
    kind: "check_paid",
    subjectId: "chk_1",
    reference: "101",
    amountCents: 12500,
    description: "check 101",
  });
  const cases: [string, string | null, string | null][] = [
    [
      "check by number, leading zeros",
      checkByNumber(
        line({
          kind: "check_paid",
          typeCode: "475",
          customerReference: "000101",
          amountCents: 12500,
        }),
        check,
      ),
      "check 101 paid for $125.00, as written",
    ],
    [
      "check: another amount",
      checkByNumber(
        line({ kind: "check_paid", customerReference: "101", amountCents: 12600 }),
        check,
      ),
      null,
    ],
    [
      "check: another number",
      checkByNumber(
        line({ kind: "check_paid", customerReference: "102", amountCents: 12500 }),
        check,
      ),
      null,
    ],
    [
      "check: an ACH line is no check",
      checkByNumber(line({ kind: "ach", customerReference: "101", amountCents: 12500 }), check),
      null,
    ],
    [
      "return by trace",
      returnByTrace(
        line({
          kind: "ach_return",
          direction: "credit",
          amountCents: 5000,
          customerReference: "091000010000001",
        }),
        move({
          kind: "ach_return",
          direction: "credit",
          amountCents: 5000,
          reference: "091000010000001",
          description: "return R03 of payout po_1",
        }),
      ),
      "ACH return of trace 091000010000001 for $50.00",
    ],
    [
      "return by trace: another trace",
      returnByTrace(
        line({
          kind: "ach_return",
          direction: "credit",
          amountCents: 5000,
          customerReference: "091000010000002",
        }),
        move({
          kind: "ach_return",
          direction: "credit",
          amountCents: 5000,
          reference: "091000010000001",
        }),
      ),
      null,
    ],
    [
      "return by amount",
      returnByAmount(
        line({ kind: "ach_return", direction: "credit", amountCents: 5000 }),
        move({
          kind: "ach_return",
          direction: "credit",
          amountCents: 5000,
          description: "return R03 of payout po_1",
        }),
      ),
      "an ACH return item of $50.00, as return R03 of payout po_1 (no trace on the line)",
    ],
    [
      "file total",
      achFileTotal(line({ amountCents: 125000 }), move({ amountCents: 125000 })),
      "ACH file rbt_1: its credits total of $1,250.00 settled on its effective date",
    ],
    [
      "file total: another direction",
      achFileTotal(
        line({ direction: "credit", amountCents: 125000 }),
        move({ amountCents: 125000 }),
      ),
      null,
    ],
    [
      "file total: a wire line is no file",
      achFileTotal(line({ kind: "wire", amountCents: 125000 }), move({ amountCents: 125000 })),
      null,
    ],
    [
      "wire",
      wireByAmount(
        line({ kind: "wire", direction: "credit", amountCents: 50000 }),
        move({
          kind: "wire",
          direction: "credit",
          amountCents: 50000,
          description: "wire funding fund_1",
        }),
      ),
      "incoming wire of $500.00 for wire funding fund_1",
    ],
    [
      "remittance by the report on the line",
      remittanceByReport(line({ kind: "wire", text: "TO IL ucr_1" }), remittance),
      "the remittance of report ucr_1 to IL: $1.00, named on the line",
    ],
    [
      "remittance: another report named",
      remittanceByReport(line({ kind: "wire", text: "TO IL ucr_2" }), remittance),
      null,
    ],
    [
      "remittance by amount",
      remittanceByAmount(line({ kind: "other" }), remittance),
      "a debit of $1.00, as the remittance of report ucr_1 to IL (the report not named on the line)",
    ],
    [
      "remittance: a check paid is none",
      remittanceByAmount(line({ kind: "check_paid", typeCode: "475" }), remittance),
      null,
    ],
    [
      "remittance: a credit is none",
      remittanceByAmount(line({ direction: "credit" }), remittance),
      null,
    ],
  ];
  for (const [name, actual, expected] of cases) assertEquals([name, actual], [name, expected]);
});

Deno.test("a day: the specific rule wins over an amount-only one, leftovers are exceptions with reasons", () => {
  const lines = [
    line({ line: 4, kind: "ach_return", direction: "credit", amountCents: 5000, text: "RETURN" }),
    line({
      line: 5,
      kind: "ach_return",
      direction: "credit",
      amountCents: 5000,
      customerReference: "091000010000002",
    }),
    line({
      line: 6,
      kind: "check_paid",
      typeCode: "475",
      customerReference: "101",
      amountCents: 12600,
    }),
    line({ line: 7, amountCents: 125000 }),
  ];
  const expected = [
    move({
      kind: "ach_return",
      subjectId: "rbe_1",
      direction: "credit",
      amountCents: 5000,
      reference: "091000010000001",
      description: "return R03 of trace 091000010000001",
    }),
    move({
      kind: "ach_return",
      subjectId: "rbe_2",
      direction: "credit",
      amountCents: 5000,
      reference: "091000010000002",
      description: "return R01 of trace 091000010000002",
    }),
    move({
      kind: "check_paid",
      subjectId: "chk_1",
      amountCents: 12500,
      reference: "101",
      description: "check 101",
    }),
    move({ amountCents: 125000 }),
  ];
  const day = reconcileDay(lines, expected);
  assertEquals(day.matched.map((m) => [m.lineIndex, m.expected.subjectId]), [[0, "rbe_1"], [
    1,
    "rbe_2",
  ], [3, "rbt_1"]]);
  assertEquals(day.unmatchedLines, [{
    lineIndex: 2,
    reason:
      "the bank reported a debit of $126.00 (check_paid, type 475) the service did not expect: check 101 was written for $125.00",
  }]);
  assertEquals(day.unmatchedExpected.map((u) => u.reason), [
    "the bank reported no debit of $125.00 for check 101",
  ]);
});

const kinds = ["ach_credit_file", "ach_debit_file", "ach_return", "check_paid", "wire"] as const;
const expectedMove = fc.record({
  kind: fc.constantFrom(...kinds),
  amountCents: fc.integer({ min: 1, max: 10_000_000 }),
  number: fc.integer({ min: 1, max: 999_999 }),
}).map(({ kind, amountCents, number }) => {
  const direction = kind === "ach_credit_file" || kind === "check_paid"
    ? "debit" as const
    : "credit" as const;
  return move({
    kind,
    subjectId: `s_${number}`,
    direction,
    amountCents,
    reference: kind === "check_paid"
      ? String(number)
      : kind === "ach_return"
      ? `0910000${String(number).padStart(8, "0")}`
      : null,
    description: `${kind} ${number}`,
  });
});

/** The statement a bank that did exactly what the service expects would write. */
const bankLineOf = (m: ExpectedMove): StatementLine =>
  line({
    direction: m.direction,
    amountCents: m.amountCents,
    kind: m.kind === "check_paid"
      ? "check_paid"
      : m.kind === "ach_return"
      ? "ach_return"
      : m.kind === "wire"
      ? "wire"
      : "ach",
    customerReference: m.reference,
  });

Deno.test("property: a bank that posted exactly what was expected reconciles to zero exceptions", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(expectedMove, { selector: (m) => m.subjectId, maxLength: 30 }),
      fc.nat(),
      (moves, seed) => {
        const lines = moves.map(bankLineOf);
        // The bank's order is its own.
        const shuffled = lines.map((l, i) => ({ l, k: (i * 7919 + seed) % 104729 })).sort((a, b) =>
          a.k - b.k
        ).map((x) => x.l);
        const day = reconcileDay(shuffled, moves);
        assertEquals(
          [day.unmatchedLines.length, day.unmatchedExpected.length, day.matched.length],
          [0, 0, moves.length],
        );
      },
    ),
  );
});

Deno.test("property: every line and every expected move ends up exactly once; a dropped or changed line is an exception", () => {
  fc.assert(fc.property(
    fc.uniqueArray(expectedMove, { selector: (m) => m.subjectId, minLength: 1, maxLength: 20 }),
    fc.nat(),
    fc.integer({ min: 1, max: 1000 }),
    (moves, pick, delta) => {
      const lines = moves.map(bankLineOf);
      const index = pick % lines.length;
      const changed = lines.map((
        l,
        i,
      ) => (i === index ? { ...l, amountCents: l.amountCents + delta } : l));
      const day = reconcileDay(changed, moves);
      const linesSeen = [
        ...day.matched.map((m) => m.lineIndex),
        ...day.unmatchedLines.map((u) => u.lineIndex),
      ].sort((a, b) => a - b);
      assertEquals(linesSeen, changed.map((_, i) => i));
      const movesSeen = [
        ...day.matched.map((m) => m.expected.subjectId),
        ...day.unmatchedExpected.map((u) => u.expected.subjectId),
      ].sort();
      assertEquals(movesSeen, moves.map((m) => m.subjectId).sort());
      // The changed line is on the bank's side of the exceptions, its move on the service's side
      // (unless another move happens to have the changed amount, or the unchanged one: then which
      // of two moves alike is left over is the matcher's choice).
      const alike = (m: ExpectedMove, cents: number) =>
        m.amountCents === cents && m.direction === changed[index].direction;
      if (
        !moves.some((m) => alike(m, changed[index].amountCents)) &&
        !moves.some((m, i) => i !== index && alike(m, moves[index].amountCents))
      ) {
        assertEquals(day.unmatchedLines.map((u) => u.lineIndex), [index]);
        assertEquals(day.unmatchedExpected.map((u) => u.expected.subjectId), [
          moves[index].subjectId,
        ]);
      }
      const dropped = reconcileDay(lines.filter((_, i) => i !== index), moves);
      assertEquals(dropped.unmatchedLines, []);
      assertEquals(dropped.unmatchedExpected.length, 1);
    },
  ));
});
