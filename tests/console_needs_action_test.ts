/**
 * The console's Needs action queue: failed and re-offered payouts with the meaning of their code
 * and the next step, payees and endorsements waiting longer than the company allows, failing
 * endpoints (retries waiting count as failures), bank files in doubt, held and past their window,
 * the Overview's counts, company scope, and the counts in /metrics.
 */
import assert from "node:assert/strict";
import { applyMove } from "../lib/payouts/store.ts";
import { explainFailure, failureReasons } from "../lib/payouts/failure_reasons.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { consoleAs, createPayout, fundLine, textOf } from "./console_helpers.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };
const DAY_MS = 86_400_000;
const noFees = { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 };

Deno.test("failure catalogue: every code has a meaning and a next step in English and Spanish", () => {
  for (const reason of failureReasons) {
    for (const language of ["en", "es"] as const) {
      assert.ok(reason.text[language].meaning.length > 10, `${reason.code} ${language}`);
      assert.ok(reason.text[language].nextStep.length > 10, `${reason.code} ${language}`);
    }
  }
  assert.match(explainFailure("R03").meaning, /no account matches/);
  assert.match(explainFailure("R03", "es").meaning, /ninguna cuenta/);
  assert.equal(explainFailure("X99").meaning, 'The payment network reported "X99".');
});

Deno.test("needs action: empty queue says so, on its page and the Overview", async () => {
  await withHttpFixture(async (f) => {
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const page = await browser.get("/console/needs-action?env=test");
    assert.equal(page.status, 200);
    assert.match(textOf(page.html), /Nothing needs action/);
    assert.match(textOf((await browser.get("/console?env=test")).html), /Nothing needs attention/);
  }, NO_LIMIT);
});

Deno.test("needs action: a returned payout stays after its re-offer, waits, endpoints and files, in scope and in /metrics", async () => {
  await withHttpFixture(async (f) => {
    const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
    const database = f.deps.databases.test;
    await fundLine(f, acme, 500_000);
    const returned = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "rita",
      email: "rita@example.test",
      name: "Rita Rivers",
      claimId: "CLM-1",
      amount: 1250,
    });
    const waiting = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "sam",
      email: "sam@example.test",
      name: "Sam Stone",
      claimId: "CLM-2",
      amount: 100,
    });
    const fresh = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "tia",
      email: "tia@example.test",
      name: "Tia Tran",
      claimId: "CLM-3",
      amount: 50,
    });
    // Over the company's threshold of $1,500.00: the payment waits for approval.
    await database.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO payment_approval_rules (id, company_id, threshold_cents, created_at)
              VALUES ('par_1', ?, 150000, ?)`,
        args: [acme.companyId, f.clock.now()],
      })
    );
    await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "una",
      email: "una@example.test",
      name: "Una Upton",
      claimId: "CLM-4",
      amount: 2000,
    });
    const now = f.clock.now();
    await database.writer.write(async (tx) => {
      for (
        const step of [
          { kind: "offer" },
          { kind: "select", paymentMethodId: 1, fees: noFees },
          { kind: "send" },
          { kind: "fail", reason: "R03" },
          { kind: "reoffer", holdCents: 125_000 },
        ] as const
      ) {
        const moved = await applyMove(tx, returned.payoutId, step, now, {
          methodDetails: { last_four: "6789" },
        });
        assert.equal(moved.ok, true, `${step.kind}: ${JSON.stringify(moved)}`);
      }
      assert.equal((await applyMove(tx, waiting.payoutId, { kind: "offer" }, now)).ok, true);
      await tx.execute({
        sql: `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events,
                secret_ciphertext, failing_since, created_at)
              VALUES ('we_dead', ?, ?, 'v1', 'https://hooks.acme.test/dead', '[]', 'x', ?, ?)`,
        args: [acme.companyId, acme.lineId, now, now],
      });
      await tx.execute({
        sql: `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count,
                next_attempt_at, created_at)
              SELECT 'whd_' || id, 'we_dead', id, 'pending', 2, ?, ? FROM events LIMIT 1`,
        args: [now + 60_000, now],
      });
      for (
        const [id, status, error] of [
          ["rb_doubt", "in_doubt", "the run stopped before the answer was kept"],
          ["rb_held", "built", null],
          ["rb_stuck", "built", null],
          ["rb_late", "voided", "the transmission window closed before the file was sent: no"],
          ["rb_sent", "transmitted", null],
        ]
      ) {
        await tx.execute({
          sql: `INSERT INTO rail_batches (id, company_id, rail, status, entry_count, total_cents,
                  cutoff_at, rail_reference, error, created_at)
                VALUES (?, ?, 'ach', ?, 1, 1250, ?, ?, ?, ?)`,
          // Built a day ago by the time the queue is read (a week on), the voided one still shows.
          args: [id, acme.companyId, status, now, `${id}.ach`, error, now + 7 * DAY_MS],
        });
      }
      // A check print file, which has no window, whose one transmission was not taken.
      await tx.execute({
        sql: `INSERT INTO rail_batches (id, company_id, rail, status, entry_count, total_cents,
                cutoff_at, rail_reference, error, created_at)
              VALUES ('rb_print', ?, 'check', 'built', 1, 1250, ?, 'rb_print.txt', NULL, ?)`,
        args: [acme.companyId, now, now + 7 * DAY_MS],
      });
      // rb_stuck's window is still to close (its job waits); rb_print has none.
      await tx.execute({
        sql: `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, created_at)
              VALUES ('job_window', ?, 'rail.window_close', 'rb_stuck', ?, ?)`,
        args: [acme.companyId, now + 30 * DAY_MS, now],
      });
      // Two transmissions of rb_stuck were not taken: the queue gives the last one's reason.
      for (
        const [id, batch, attempt, detail] of [
          ["rba_1", "rb_stuck", 1, "connection refused"],
          [
            "rba_2",
            "rb_stuck",
            2,
            "the kept file could not be opened: its SHA-256 is not the build's",
          ],
          [
            "rba_3",
            "rb_print",
            1,
            "the kept file could not be opened: its SHA-256 is not the build's",
          ],
        ] as const
      ) {
        await tx.execute({
          sql: `INSERT INTO rail_batch_attempts (id, batch_id, attempt, started_at, answered_at,
                  outcome, detail)
                VALUES (?, ?, ?, ?, ?, 'not_transmitted', ?)`,
          args: [id, batch, attempt, now, now, detail],
        });
      }
    });
    // The offer of Tia is fresh; Sam's is older than the company's 7 days.
    f.clock.advance(8 * DAY_MS);
    assert.equal(
      (await database.writer.write((tx) =>
        applyMove(tx, fresh.payoutId, { kind: "offer" }, f.clock.now())
      )).ok,
      true,
    );

    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const overview = textOf((await browser.get("/console?env=test")).html);
    assert.match(overview, /1 payout failed or returned/);
    assert.match(overview, /1 payee waiting too long to choose/);
    assert.match(overview, /1 payment waiting for approval/);
    assert.match(overview, /1 webhook endpoint failing/);
    assert.match(overview, /1 bank file in doubt/);
    assert.match(overview, /3 bank files held, not sent/);
    assert.match(overview, /1 bank file voided past its window/);

    const page = await browser.get("/console/needs-action?env=test");
    assert.equal(page.status, 200);
    const text = textOf(page.html);
    assert.match(text, /9 things need action/);
    assert.match(
      text,
      /Rita Rivers failed, offered again to the payee R03 : The bank returned the payment: no account matches the number, or the name does not match it\. Next step: Offer the payment again so the payee can give other bank details\. \$1,250\.00/,
    );
    assert.match(page.html, new RegExp(`href="/console/payouts/${returned.payoutId}\\?env=test"`));
    assert.match(text, /Sam Stone offered and not chosen for more than 7 days/);
    assert.match(text, /Una Upton over the company's approval threshold: approve or reject it/);
    assert.doesNotMatch(text, /Tia Tran/);
    assert.match(
      text,
      /https:\/\/hooks\.acme\.test\/dead every attempt failing; 1 delivery failed or retrying/,
    );
    assert.match(page.html, /href="\/console\/webhooks\/we_dead\?env=test"/);
    assert.match(page.html, /href="\/console\/bank-files\/ach\/rb_doubt\?env=test"/);
    assert.match(
      text,
      /ACH file rb_held\.ach \(1 entries\) built and not sent: it waits for its release by a second admin, a download or the bank/,
    );
    assert.match(
      text,
      /ACH file rb_stuck\.ach \(1 entries\) built and not sent: its transmission 2 was not taken \(the kept file could not be opened: its SHA-256 is not the build's\); it is tried again until an operator voids it or its window closes/,
    );
    assert.match(
      text,
      /check batch rb_print\.txt \(1 entries\) built and not sent: its transmission 1 was not taken \(the kept file could not be opened: its SHA-256 is not the build's\); it is tried again until an operator voids it(?! or)/,
    );
    assert.doesNotMatch(text, /connection refused/);
    assert.match(text, /ACH file rb_late\.ach \(1 entries\) the transmission window closed/);
    assert.doesNotMatch(text, /rb_sent/);

    // The company's own wait: 10 days, and Sam is no longer late.
    await database.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE companies SET payee_wait_days = 10 WHERE id = ?",
        args: [acme.companyId],
      })
    );
    assert.doesNotMatch(
      textOf((await browser.get("/console/needs-action?env=test")).html),
      /Sam Stone/,
    );

    // The payout carries its last failure after the re-offer, and the list finds it as failed.
    const detail = textOf((await browser.get(`/console/payouts/${returned.payoutId}`)).html);
    assert.match(
      detail,
      /Status Waiting for the payee's choice Last failure R03 : The bank returned the payment: no account matches the number, or the name does not match it\. Next step: Offer the payment again so the payee can give other bank details\. ACH ending in 6789, Jan 5, 2026, 15:00 UTC/,
    );
    const namesIn = (html: string) =>
      [...html.matchAll(/href="\/console\/payouts\/po_[^"]*">([^<]+)<\/a>/g)].map((m) => m[1])
        .sort();
    assert.deepEqual(namesIn((await browser.get("/console/payouts?status=failed")).html), []);
    const failedAnyTime = await browser.get("/console/payouts?attention=failed");
    assert.deepEqual(namesIn(failedAnyTime.html), ["Rita Rivers"]);
    assert.match(
      textOf(failedAnyTime.html),
      /Rita Rivers rita@example\.test CLM-1 ACH ending in 6789/,
    );
    assert.match(textOf(failedAnyTime.html), /Waiting for the payee's choice last failure R03/);
    assert.deepEqual(
      namesIn((await browser.get("/console/payouts?attention=now")).html),
      ["Rita Rivers", "Una Upton"],
      "Sam's wait is within the company's 10 days now",
    );
    assert.equal((await browser.get("/console/payouts?attention=later")).status, 400);

    const { browser: beacon } = await consoleAs(f, {
      email: "bo@ops.test",
      role: "viewer",
      companies: f.cast.beacon.id,
    });
    assert.match(
      textOf((await beacon.get("/console/needs-action?env=test")).html),
      /Nothing needs action/,
    );

    const metrics = await (await f.app.request("/metrics")).text();
    assert.match(metrics, /needs_action\{environment="test",kind="failed_payouts"\} 1/);
    assert.match(metrics, /needs_action\{environment="test",kind="failing_endpoints"\} 1/);
    assert.match(metrics, /needs_action\{environment="test",kind="files_in_doubt"\} 1/);
    assert.match(metrics, /needs_action\{environment="live",kind="failed_payouts"\} 0/);
  }, NO_LIMIT);
});
