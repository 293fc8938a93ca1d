import assert from "node:assert/strict";
import {
  addBusinessDays,
  federalReserveHolidays,
  isBusinessDay,
} from "../lib/platform/business_days.ts";

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

Deno.test("Federal Reserve holidays of 2026 and 2027, with the Sunday and Saturday rules", () => {
  assert.deepEqual(
    [...federalReserveHolidays(2026)].sort().map(iso),
    [
      "2026-01-01",
      "2026-01-19",
      "2026-02-16",
      "2026-05-25",
      "2026-06-19", // Juneteenth on a Friday
      "2026-09-07",
      "2026-10-12",
      "2026-11-11",
      "2026-11-26",
      "2026-12-25",
    ].sort(),
  );
  // 2026-07-04 is a Saturday: not observed on the Friday by the Fed.
  assert.equal(isBusinessDay(Date.UTC(2026, 6, 3, 12)), true);
  // 2027: Juneteenth (Saturday) not observed; July 4 (Sunday) observed Monday July 5;
  // Christmas (Saturday) not observed on Friday the 24th.
  const h2027 = [...federalReserveHolidays(2027)].map(iso);
  assert.ok(h2027.includes("2027-07-05"));
  assert.ok(!h2027.includes("2027-06-18"));
  assert.ok(!h2027.includes("2027-12-24"));
  assert.equal(isBusinessDay(Date.UTC(2027, 11, 24, 12)), true);
});

Deno.test("addBusinessDays skips weekends and holidays and keeps the time of day", () => {
  const cases: [string, number, string][] = [
    ["2026-01-05T15:00:00Z", 3, "2026-01-08T15:00:00.000Z"], // Monday + 3 = Thursday
    ["2026-01-08T15:00:00Z", 3, "2026-01-13T15:00:00.000Z"], // Thursday + 3 crosses a weekend
    ["2026-01-16T09:30:00Z", 1, "2026-01-20T09:30:00.000Z"], // Friday + 1 skips MLK Monday
    ["2026-11-25T12:00:00Z", 1, "2026-11-27T12:00:00.000Z"], // Wednesday + 1 skips Thanksgiving
    ["2026-12-24T12:00:00Z", 3, "2026-12-30T12:00:00.000Z"], // Christmas and a weekend
    ["2026-01-10T12:00:00Z", 1, "2026-01-12T12:00:00.000Z"], // from a Saturday
    ["2026-01-05T15:00:00Z", 0, "2026-01-05T15:00:00.000Z"],
  ];
  for (const [from, days, expected] of cases) {
    assert.equal(
      new Date(addBusinessDays(Date.parse(from), days)).toISOString(),
      expected,
      `${from} + ${days}`,
    );
  }
  assert.throws(() => addBusinessDays(0, -1), /whole number >= 0/);
  assert.throws(() => addBusinessDays(0, 1.5), /whole number >= 0/);
});
