/** The pure rules of deadlines: dates, the default pay_by, the offer's deadline, escalation, expiry. */
import assert from "node:assert/strict";
import {
  dateStart,
  DEADLINE_REMINDERS_BEFORE_MS,
  deadlineOf,
  expiryDecision,
  offerDeadline,
  payByFor,
  payByProblem,
  reminderEscalates,
} from "../lib/obligations/deadline.ts";
import { nextOfferStep } from "../lib/payouts/policy.ts";
import { parseSettingsChange } from "../lib/obligations/settings.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 5, 15); // 2026-01-05 15:00 UTC

Deno.test("dateStart: calendar dates only", () => {
  const cases: [string, number | null][] = [
    ["2026-02-04", Date.UTC(2026, 1, 4)],
    ["2028-02-29", Date.UTC(2028, 1, 29)],
    ["2026-02-29", null],
    ["2026-02-30", null],
    ["2026-13-01", null],
    ["2026-2-04", null],
    ["20260204", null],
    ["", null],
  ];
  for (const [text, expected] of cases) assert.equal(dateStart(text), expected, text);
  assert.throws(() => deadlineOf("2026-02-30"), /pay_by "2026-02-30" is no YYYY-MM-DD date/);
});

Deno.test("payByProblem: after today, at most 365 days ahead (at the limit and one past it)", () => {
  const cases: [string, string | null][] = [
    ["2026-01-06", null],
    ["2026-01-05", "pay_by must be after today (2026-01-05); got 2026-01-05"],
    ["2025-12-31", "pay_by must be after today (2026-01-05); got 2025-12-31"],
    ["2027-01-05", null],
    ["2027-01-06", "pay_by is at most 365 days ahead (2027-01-05); got 2027-01-06"],
    ["soon", 'pay_by must be a date YYYY-MM-DD, got "soon"'],
  ];
  for (const [payBy, expected] of cases) assert.equal(payByProblem(payBy, NOW), expected, payBy);
});

Deno.test("payByFor: the requested date, else the company's days from create, else none", () => {
  const fallback = { offerExpiryAction: "fallback" as const, payByDays: 30 };
  assert.equal(payByFor("2026-01-20", fallback, NOW), "2026-01-20");
  assert.equal(payByFor(undefined, fallback, NOW), "2026-02-04");
  assert.equal(payByFor(null, { ...fallback, payByDays: 1 }, NOW), "2026-01-06");
  assert.equal(payByFor(undefined, { offerExpiryAction: "cancel", payByDays: null }, NOW), null);
});

Deno.test("offerDeadline: the pay_by while ahead; the offer's own time otherwise", () => {
  const ttl = 90 * DAY;
  assert.deepEqual(offerDeadline("2026-02-04", NOW, ttl), {
    expiresAt: Date.UTC(2026, 1, 4),
    payBy: true,
  });
  assert.deepEqual(offerDeadline(null, NOW, ttl), { expiresAt: NOW + ttl, payBy: false });
  // Offered again after the date passed (a fallback check came back): the offer's own time.
  const later = Date.UTC(2026, 2, 1);
  assert.deepEqual(offerDeadline("2026-02-04", later, ttl), {
    expiresAt: later + ttl,
    payBy: false,
  });
  assert.deepEqual(offerDeadline("2026-02-04", Date.UTC(2026, 1, 4), ttl).payBy, false);
});

Deno.test("a pay_by deadline's reminders: 14, 7, 3 and 1 days before; the last two on every channel", () => {
  const deadline = Date.UTC(2026, 1, 4);
  const steps: [number, string, number][] = [];
  let after = NOW;
  for (;;) {
    const step = nextOfferStep(deadline, after, DEADLINE_REMINDERS_BEFORE_MS);
    steps.push([(deadline - step.dueAt) / DAY, step.kind, step.dueAt]);
    if (step.kind === "expire") break;
    after = step.dueAt;
  }
  assert.deepEqual(steps.map(([days, kind]) => [days, kind]), [
    [14, "remind"],
    [7, "remind"],
    [3, "remind"],
    [1, "remind"],
    [0, "expire"],
  ]);
  assert.deepEqual(steps.slice(0, 4).map(([, , at]) => reminderEscalates(deadline, at)), [
    false,
    false,
    true,
    true,
  ]);
  // Made 5 days before the deadline: only the 3-day and 1-day reminders are left.
  const late = nextOfferStep(deadline, deadline - 5 * DAY, DEADLINE_REMINDERS_BEFORE_MS);
  assert.equal((deadline - late.dueAt) / DAY, 3);
});

Deno.test("expiryDecision: the company's action; a payout falls back once, then is kept owed", () => {
  const table: [Parameters<typeof expiryDecision>[0], boolean, string][] = [
    ["cancel", false, "cancel"],
    ["cancel", true, "cancel"],
    ["hold", false, "hold"],
    ["hold", true, "hold"],
    ["fallback", false, "fallback"],
    ["fallback", true, "hold"],
  ];
  for (const [action, fellBackBefore, expected] of table) {
    assert.equal(
      expiryDecision(action, { fellBackBefore }),
      expected,
      `${action} ${fellBackBefore}`,
    );
  }
});

Deno.test("settings flags: valid, invalid naming the flag, at the limits, none given", () => {
  assert.deepEqual(parseSettingsChange({ "offer-expiry": "hold", "pay-by-days": "none" }), {
    ok: true,
    value: { offerExpiryAction: "hold", payByDays: null },
  });
  assert.deepEqual(parseSettingsChange({ "pay-by-days": "365", "holder-state": "de" }), {
    ok: true,
    value: { payByDays: 365, holderState: "DE" },
  });
  const refused: [Record<string, string>, string, string][] = [
    [{ "offer-expiry": "void" }, "offer-expiry", "--offer-expiry: one of cancel, fallback, hold"],
    [
      { "pay-by-days": "366" },
      "pay-by-days",
      "--pay-by-days: a whole number of days from 1 to 365, or none",
    ],
    [
      { "pay-by-days": "0" },
      "pay-by-days",
      "--pay-by-days: a whole number of days from 1 to 365, or none",
    ],
    [
      { "holder-state": "Delaware" },
      "holder-state",
      "--holder-state: a two-letter US state code such as DE",
    ],
    [
      {},
      "offer-expiry",
      "give at least one of --offer-expiry, --pay-by-days, --holder-state, --sandbox-dormancy-days",
    ],
  ];
  for (const [flags, field, message] of refused) {
    const result = parseSettingsChange(flags);
    assert.deepEqual(result.ok ? null : [result.field, result.message], [field, message]);
  }
});
