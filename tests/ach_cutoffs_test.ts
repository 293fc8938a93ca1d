import assert from "node:assert/strict";
import fc from "fast-check";
import {
  bankLocal,
  bankTime,
  type CutoffSchedule,
  nextCutoffSlot,
  nextNextDayCutoffSlot,
  sandboxReturnsAt,
  settlementAt,
} from "../lib/ach/cutoffs.ts";
import { SANDBOX_CUTOFFS } from "../lib/ach/bank_settings.ts";
import { isBusinessDay } from "../lib/platform/business_days.ts";

const NEW_YORK = "America/New_York";
const sandbox: CutoffSchedule = {
  timeZone: NEW_YORK,
  cutoffs: SANDBOX_CUTOFFS,
  transmitWindowMinutes: 30,
};
const iso = (ms: number) => new Date(ms).toISOString();

Deno.test("bankLocal and bankTime convert New York time in winter (UTC-5) and summer (UTC-4)", () => {
  assert.deepEqual(bankLocal(Date.parse("2026-11-24T15:00:00Z"), NEW_YORK), {
    date: "2026-11-24",
    time: "1000",
  });
  assert.deepEqual(bankLocal(Date.parse("2026-07-01T03:30:00Z"), NEW_YORK), {
    date: "2026-06-30",
    time: "2330",
  });
  assert.equal(iso(bankTime("2026-11-24", "10:30", NEW_YORK)), "2026-11-24T15:30:00.000Z");
  assert.equal(iso(bankTime("2026-07-01", "10:30", NEW_YORK)), "2026-07-01T14:30:00.000Z");
  assert.equal(
    iso(bankTime("2026-07-01", "17:00", "America/Los_Angeles")),
    "2026-07-02T00:00:00.000Z",
  );
});

Deno.test("Tuesday 2026-11-24 10:00 New York: the same-day 10:30 cutoff, effective that day", () => {
  const slot = nextCutoffSlot(sandbox, Date.parse("2026-11-24T15:00:00Z"));
  assert.deepEqual(slot, {
    at: Date.parse("2026-11-24T15:30:00Z"),
    kind: "same_day",
    bankDate: "2026-11-24",
    effectiveDate: "2026-11-24",
    windowEndsAt: Date.parse("2026-11-24T16:00:00Z"),
  });
});

Deno.test("a cutoff is strictly after: at 10:30 exactly the next one is 14:45", () => {
  const slot = nextCutoffSlot(sandbox, Date.parse("2026-11-24T15:30:00Z"));
  assert.equal(iso(slot.at), "2026-11-24T19:45:00.000Z");
  assert.equal(slot.kind, "same_day");
});

Deno.test("next-day at 17:00 on Wednesday 11-25 is effective Friday 11-27 (Thanksgiving skipped)", () => {
  const slot = nextCutoffSlot(sandbox, Date.parse("2026-11-25T20:00:00Z")); // 15:00 local
  assert.deepEqual(slot, {
    at: Date.parse("2026-11-25T22:00:00Z"),
    kind: "next_day",
    bankDate: "2026-11-25",
    effectiveDate: "2026-11-27",
    windowEndsAt: Date.parse("2026-11-25T22:30:00Z"),
  });
});

Deno.test("after 17:00 on Wednesday 11-25 the next cutoff is Friday 11-27 10:30", () => {
  const slot = nextCutoffSlot(sandbox, Date.parse("2026-11-25T22:00:00Z"));
  assert.equal(iso(slot.at), "2026-11-27T15:30:00.000Z");
  assert.equal(slot.bankDate, "2026-11-27");
  assert.equal(slot.effectiveDate, "2026-11-27");
  // Friday's next-day cutoff is effective Monday.
  const friday = nextCutoffSlot(sandbox, Date.parse("2026-11-27T21:00:00Z"));
  assert.equal(friday.kind, "next_day");
  assert.equal(friday.effectiveDate, "2026-11-30");
});

Deno.test("a Saturday looks to Monday", () => {
  const slot = nextCutoffSlot(sandbox, Date.parse("2026-11-28T15:00:00Z"));
  assert.equal(iso(slot.at), "2026-11-30T15:30:00.000Z");
});

Deno.test("nextNextDayCutoffSlot skips same-day cutoffs", () => {
  const slot = nextNextDayCutoffSlot(sandbox, Date.parse("2026-11-24T15:00:00Z"));
  assert.equal(iso(slot.at), "2026-11-24T22:00:00.000Z");
  assert.equal(slot.effectiveDate, "2026-11-25");
  const none: CutoffSchedule = { ...sandbox, cutoffs: [{ time: "10:30", kind: "same_day" }] };
  assert.throws(() => nextNextDayCutoffSlot(none, 0), /no next_day cutoff/);
});

Deno.test("a cutoff across the March and November DST changes keeps its wall-clock time", () => {
  // 2026-03-08 is the spring change (Sunday): Friday 03-06 is UTC-5, Monday 03-09 UTC-4.
  const friday = nextCutoffSlot(sandbox, Date.parse("2026-03-06T23:00:00Z"));
  assert.equal(iso(friday.at), "2026-03-09T14:30:00.000Z");
  assert.equal(bankLocal(friday.at, NEW_YORK).time, "1030");
  // 2026-11-01 is the autumn change: Friday 10-30 is UTC-4, Monday 11-02 UTC-5.
  const autumn = nextCutoffSlot(sandbox, Date.parse("2026-10-30T22:00:00Z"));
  assert.equal(iso(autumn.at), "2026-11-02T15:30:00.000Z");
  assert.equal(bankLocal(autumn.at, NEW_YORK).time, "1030");
  // A 17:00 cutoff on the Friday before, in summer time.
  const before = nextCutoffSlot(sandbox, Date.parse("2026-10-30T20:00:00Z"));
  assert.equal(iso(before.at), "2026-10-30T21:00:00.000Z");
  assert.equal(before.effectiveDate, "2026-11-02");
});

Deno.test("settlement of effective Wednesday 11-25 is Monday 11-30 17:00; sandbox returns 09:00", () => {
  assert.equal(iso(settlementAt("2026-11-25", NEW_YORK)), "2026-11-30T22:00:00.000Z");
  assert.equal(iso(sandboxReturnsAt("2026-11-25", NEW_YORK)), "2026-11-30T14:00:00.000Z");
  assert.equal(iso(settlementAt("2026-11-24", NEW_YORK, 1)), "2026-11-25T22:00:00.000Z");
});

Deno.test("property: every slot is on a banking day, after `after`, with a banking effective date", () => {
  const zones = ["America/New_York", "America/Chicago", "America/Los_Angeles", "UTC"];
  const times = ["00:00", "06:15", "10:30", "14:45", "17:00", "23:59"];
  fc.assert(
    fc.property(
      fc.integer({
        min: Date.parse("2026-01-01T00:00:00Z"),
        max: Date.parse("2028-12-31T00:00:00Z"),
      }),
      fc.constantFrom(...zones),
      fc.uniqueArray(fc.constantFrom(...times), { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      (after, timeZone, cutoffTimes, nextDayLast) => {
        const cutoffs = cutoffTimes.map((time, index) => ({
          time,
          kind: nextDayLast && index === cutoffTimes.length - 1
            ? "next_day" as const
            : "same_day" as const,
        }));
        const slot = nextCutoffSlot({ timeZone, cutoffs, transmitWindowMinutes: 30 }, after);
        assert.ok(slot.at > after);
        const local = bankLocal(slot.at, timeZone);
        assert.equal(local.date, slot.bankDate);
        assert.ok(isBusinessDay(Date.parse(`${slot.bankDate}T00:00:00Z`)));
        assert.ok(isBusinessDay(Date.parse(`${slot.effectiveDate}T00:00:00Z`)));
        assert.ok(slot.effectiveDate >= slot.bankDate);
        assert.ok(
          cutoffs.some((c) => c.time.replace(":", "") === local.time && c.kind === slot.kind),
        );
        assert.equal(slot.windowEndsAt, slot.at + 30 * 60_000);
        // No earlier cutoff of a banking day lies between `after` and the slot.
        for (
          let day = Date.parse(`${bankLocal(after, timeZone).date}T00:00:00Z`);
          day <= Date.parse(`${slot.bankDate}T00:00:00Z`);
          day += 86_400_000
        ) {
          if (!isBusinessDay(day)) continue;
          const date = new Date(day).toISOString().slice(0, 10);
          for (const cutoff of cutoffs) {
            const at = bankTime(date, cutoff.time, timeZone);
            assert.ok(at <= after || at >= slot.at, `${date} ${cutoff.time} comes first`);
          }
        }
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("bank time prepared at a service's start bears a process's first load of the time zone data: a later conversion in another zone does not", async () => {
  // A process of its own: this one has converted bank time already.
  const cutoffs = new URL("../lib/ach/cutoffs.ts", import.meta.url).href;
  const script = `
    const { bankLocal, prepareBankTime } = await import(${JSON.stringify(cutoffs)});
    const time = (f) => { const start = performance.now(); f(); return performance.now() - start; };
    const prepared = time(() => prepareBankTime());
    const later = time(() => bankLocal(0, "America/Chicago"));
    console.log(JSON.stringify({ prepared, later }));`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    cwd: new URL("..", import.meta.url).pathname,
    stderr: "inherit",
  }).output();
  assert.equal(output.code, 0);
  const { prepared, later } = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.ok(later < prepared / 4, `prepared in ${prepared} ms, a later zone in ${later} ms`);
});
