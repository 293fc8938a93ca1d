/**
 * Console Overview (issue 20): balances per company and line, payouts that changed today, the
 * 30-day chart, what needs attention, the empty states, and company scope.
 */
import assert from "node:assert/strict";
import { scheduleJob } from "../db/scheduler_store.ts";
import { postTransaction } from "../lib/ledger/store.ts";
import { applyMove } from "../lib/payouts/store.ts";
import { dayIn, formatDateTime, startOfDayIn } from "../lib/platform/format.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { consoleAs, createPayout, fundLine, textOf } from "./console_helpers.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };

Deno.test("console overview: empty states say there is nothing to do", async () => {
  await withHttpFixture(async (f) => {
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const page = await browser.get("/console");
    assert.equal(page.status, 200);
    const text = textOf(page.html);
    assert.match(text, /Nothing needs attention/);
    assert.match(text, /No payout changed state today \(Jan 5, 2026\)/);
    assert.match(text, /\$0\.00 sent in 0 payouts over 30 days/);
    assert.match(page.html, /<svg class="chart"[^>]*role="img"/);
  }, NO_LIMIT);
});

Deno.test("console overview: balances, today's payouts by status, the chart, and attention", async () => {
  await withHttpFixture(async (f) => {
    const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
    await fundLine(f, acme, 500_000);
    const { payoutId } = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "rita",
      email: "rita@example.test",
      name: "Rita Rivers",
      claimId: "CLM-1",
      amount: 1250,
    });
    await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "sam",
      email: "sam@example.test",
      claimId: "CLM-2",
      amount: 100,
    });
    const database = f.deps.databases.test;
    const now = f.clock.now();
    await database.writer.write(async (tx) => {
      for (
        const step of [
          { kind: "offer" } as const,
          {
            kind: "select",
            paymentMethodId: 1,
            fees: { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 },
          } as const,
          { kind: "send" } as const,
        ]
      ) {
        assert.equal((await applyMove(tx, payoutId, step, now)).ok, true);
      }
      const job = await scheduleJob(tx, {
        companyId: acme.companyId,
        kind: "payout.offer",
        subjectId: payoutId,
        dueAt: now,
      }, now);
      await tx.execute({
        sql: "UPDATE scheduled_jobs SET done_at = ?, error = 'rail answered 500' WHERE id = ?",
        args: [now, job],
      });
      await tx.execute({
        sql:
          `INSERT INTO notifications (id, company_id, payout_id, channel, recipient, body, status,
                created_at) VALUES ('ntf_1', ?, ?, 'email', 'rita@example.test', 'x', 'failed', ?)`,
        args: [acme.companyId, payoutId, now],
      });
      // Money to the bank under a kind the tie-out counts as a move between held accounts.
      const posted = await postTransaction(tx, {
        companyId: acme.companyId,
        lineId: acme.lineId,
        kind: "payout.send",
        payoutId,
        transfers: [{ from: "available", to: "bank", amountCents: 700 }],
        postedAt: now,
      });
      assert.equal(posted.ok, true);
    });
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const page = await browser.get("/console");
    const text = textOf(page.html);
    assert.match(
      text,
      /Acme Mutual auto \$3,643\.00 \$100\.00 \$1,250\.00 \$0\.00/,
    );
    assert.match(text, /Beacon Casualty default \$0\.00 \$0\.00 \$0\.00 \$0\.00/);
    assert.match(text, /Funds sent: 1/);
    assert.match(text, /Created: 1/);
    assert.match(text, /\$1,250\.00 sent in 1 payouts over 30 days/);
    assert.match(text, /1 parked job/);
    assert.match(text, /1 failed notification/);
    assert.match(text, /Tie-out of Acme Mutual · auto on 2026-01-05 is off by \$7\.00/);
    assert.match(
      page.html,
      new RegExp(`href="/console/ledger\\?line=${acme.lineId}&amp;date=2026-01-05&amp;env=test"`),
    );
    assert.doesNotMatch(text, /Nothing needs attention/);

    const { browser: scoped } = await consoleAs(f, {
      email: "bo@ops.test",
      role: "viewer",
      companies: f.cast.beacon.id,
    });
    const beaconOnly = textOf((await scoped.get("/console")).html);
    assert.doesNotMatch(beaconOnly, /Acme Mutual/);
    assert.match(beaconOnly, /Beacon Casualty default/);
    assert.match(beaconOnly, /Nothing needs attention/);
    assert.match(beaconOnly, /\$0\.00 sent in 0 payouts/);
  }, NO_LIMIT);
});

Deno.test("console overview: times follow the operator's zone, UTC on hover", async () => {
  await withHttpFixture(async (f) => {
    await fundLine(f, { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId }, 500_000);
    await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "rita",
      email: "rita@example.test",
      claimId: "CLM-1",
      amount: 10,
    });
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const page = await browser.get("/console/payouts?tz=America/Chicago");
    assert.match(
      page.html,
      /<time datetime="2026-01-05T15:00:00.000Z" title="2026-01-05 15:00:00 UTC">Jan 5, 2026, 09:00 CST<\/time>/,
    );
    // Remembered for the next pages.
    const next = await browser.get("/console/payouts");
    assert.match(next.html, />Jan 5, 2026, 09:00 CST</);
    assert.match(textOf(next.html), /Times in America\/Chicago/);
  }, NO_LIMIT);
});

Deno.test("format: a day's start in a zone, across a daylight-saving change", () => {
  assert.equal(
    new Date(startOfDayIn("2026-03-08", "America/New_York")!).toISOString(),
    "2026-03-08T05:00:00.000Z",
  );
  assert.equal(
    new Date(startOfDayIn("2026-03-09", "America/New_York")!).toISOString(),
    "2026-03-09T04:00:00.000Z",
  );
  assert.equal(startOfDayIn("2026-02-30", "UTC"), null);
  assert.equal(dayIn(Date.UTC(2026, 0, 5, 3), "America/Chicago"), "2026-01-04");
  assert.equal(
    formatDateTime(Date.UTC(2026, 6, 1, 12), "Europe/Berlin"),
    "Jul 1, 2026, 14:00 GMT+2",
  );
});

Deno.test("console overview: in test, today and the chart follow the sandbox clock", async () => {
  await withHttpFixture(async (f) => {
    const advanced = await f.app.request("/v1/sandbox/clock/advance", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ seconds: 5 * 86_400 }),
    });
    assert.equal(advanced.status, 200, await advanced.text());
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const text = textOf((await browser.get("/console?env=test")).html);
    assert.match(text, /No payout changed state today \(Jan 10, 2026\)/);
    assert.match(text, /Dec 12, 2025 Jan 10, 2026 The chart as a table/);
    // Live runs on real time.
    assert.doesNotMatch(textOf((await browser.get("/console?env=live")).html), /Jan 10, 2026/);
  }, NO_LIMIT);
});
