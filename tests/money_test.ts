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
    ["-5", "must be dollars with at most two decimals and no exponent, got -5"],
    ["-0", "must be dollars with at most two decimals and no exponent, got -0"],
    ["01.00", "must be dollars with at most two decimals and no exponent, got 01.00"],
    ["0", "must be at least 0.01"],
    ["0.00", "must be at least 0.01"],
    ["1000000.01", "must be at most 1000000.00"],
  ];
  for (const [source, message] of refused) {
    assert.deepEqual(
      parseDollars(source, bounds),
      { ok: false, code: "amount_invalid", message },
      source,
    );
  }
});

Deno.test("cents format back to dollars without float drift", () => {
  assert.equal(centsToDollars(1), 0.01);
  assert.equal(centsToDollars(123456), 1234.56);
  assert.equal(JSON.stringify({ amount: centsToDollars(1005) }), '{"amount":10.05}');
  assert.equal(formatDollars(100_000_000), "1000000.00");
  assert.equal(formatDollars(5), "0.05");
  assert.throws(() => centsToDollars(1.5), /safe integer/);
});
