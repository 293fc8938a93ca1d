import assert from "node:assert/strict";
import { centsToDollars, formatDollars, parseDollars } from "../lib/platform/money.ts";

const bounds = { minCents: 1, maxCents: 100_000_000 };

Deno.test("parseDollars: exact cents from the JSON source text, limits included", () => {
  const accepted: [string, number][] = [
    ["0.01", 1],
    ["1", 100],
    ["10.5", 1050],
    ["10.50", 1050],
    ["1000000", 100_000_000],
    ["1000000.00", 100_000_000],
    ["0.1", 10],
  ];
  for (const [source, cents] of accepted) {
    assert.deepEqual(parseDollars(source, bounds), { ok: true, value: cents }, source);
  }
  const refused: [string, string][] = [
    ["10.005", "must be dollars with at most two decimals and no exponent, got 10.005"],
    ["1e2", "must be dollars with at most two decimals and no exponent, got 1e2"],
    ["-5", "must be positive: at least $0.01, got -5"],
    ["-0.5", "must be positive: at least $0.01, got -0.5"],
    ["-0", "must be positive: at least $0.01, got -0"],
    ["-1e2", "must be dollars with at most two decimals and no exponent, got -1e2"],
    ["01.00", "must be dollars with at most two decimals and no exponent, got 01.00"],
    ["0", "must be at least $0.01"],
    ["0.00", "must be at least $0.01"],
    ["1000000.01", "must be at most $1,000,000.00"],
  ];
  for (const [source, message] of refused) {
    assert.deepEqual(
      parseDollars(source, bounds),
      { ok: false, code: "amount_invalid", message },
      source,
    );
  }
});

Deno.test("parseDollars: a zero floor admits 0 (fees), the NACHA ceiling admits $99,999,999.99", () => {
  assert.deepEqual(parseDollars("0", { minCents: 0, maxCents: 100 }), { ok: true, value: 0 });
  const nacha = { minCents: 1, maxCents: 9_999_999_999 };
  assert.deepEqual(parseDollars("99999999.99", nacha), { ok: true, value: 9_999_999_999 });
  assert.deepEqual(parseDollars("100000000", nacha), {
    ok: false,
    code: "amount_invalid",
    message: "must be at most $99,999,999.99",
  });
});

Deno.test("cents format back to dollars without float drift", () => {
  assert.equal(centsToDollars(1), 0.01);
  assert.equal(centsToDollars(123456), 1234.56);
  assert.equal(JSON.stringify({ amount: centsToDollars(1005) }), '{"amount":10.05}');
  assert.throws(() => centsToDollars(1.5), /safe integer/);
});

Deno.test("formatDollars: every human-facing amount reads $1,250.00, negatives included", () => {
  const cases: [number, string][] = [
    [0, "$0.00"],
    [5, "$0.05"],
    [99, "$0.99"],
    [100, "$1.00"],
    [125_000, "$1,250.00"],
    [100_000_000, "$1,000,000.00"],
    [999_999_999_999, "$9,999,999,999.99"],
    [-5, "-$0.05"],
    [-150, "-$1.50"],
    [-125_050, "-$1,250.50"],
  ];
  for (const [cents, text] of cases) assert.equal(formatDollars(cents), text, String(cents));
  assert.throws(() => formatDollars(1.5), /cents must be a safe integer, got 1.5/);
});
