/**
 * CSV exports of the console's lists beyond Payouts: each list's rows as it is filtered, with the
 * same cells as the Payouts export (text that would run as a spreadsheet formula starts with an
 * apostrophe, RFC 4180 quoting, dollars without symbol, UTC ISO times), linked from its page.
 */
import assert from "node:assert/strict";
import { acmeWithRita, consoleAs, parseCsv } from "./console_helpers.ts";
import { withHttpFixture } from "./http_fixture.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };

Deno.test("console exports: endpoints, an endpoint's deliveries, Needs action, approvals and the audit log as CSV, formula-safe", async () => {
  await withHttpFixture(async (f) => {
    const { acme } = await acmeWithRita(f);
    const database = f.deps.databases.test;
    const now = f.clock.now();
    await database.writer.write(async (tx) => {
      await tx.execute({
        sql: `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, description,
                events, secret_ciphertext, failing_since, created_at)
              VALUES ('we_dead', ?, ?, 'v1', 'https://hooks.acme.test/dead?a=1,b=2', '=2+3', '[]',
                'x', ?, ?)`,
        args: [acme.companyId, acme.lineId, now, now],
      });
      await tx.execute({
        sql: `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count,
                created_at, completed_at)
              SELECT 'whd_1', 'we_dead', id, 'failed', 3, ?, ? FROM events ORDER BY rowid LIMIT 1`,
        args: [now, now + 60_000],
      });
      await tx.execute({
        sql: `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, payload,
                done_at, error, attempts, created_at)
              VALUES ('job_parked', ?, 'payout.offer', 'po_x', ?, '{}', ?, ?, 5, ?)`,
        args: [acme.companyId, now, now, "-the rail answered 503, five times", now],
      });
    });
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const csv = async (path: string, name: string) => {
      const response = await browser.get(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get("Content-Type"), "text/csv; charset=utf-8");
      assert.equal(
        response.headers.get("Content-Disposition"),
        `attachment; filename="${name}"`,
      );
      return parseCsv(response.html);
    };
    const at = new Date(now).toISOString();

    const list = await browser.get("/console/webhooks?env=test");
    assert.match(list.html, /href="\/console\/webhooks\/export\.csv\?env=test" download/);
    assert.deepEqual(
      await csv("/console/webhooks/export.csv?env=test", "webhook-endpoints-test.csv"),
      [
        [
          "endpoint_id",
          "company",
          "receives",
          "url",
          "description",
          "state",
          "disabled_reason",
          "failing_since",
          "failed_deliveries",
          "created_at",
        ],
        [
          "we_dead",
          "Acme Mutual",
          "line auto",
          "https://hooks.acme.test/dead?a=1,b=2",
          "'=2+3",
          "failing",
          "",
          at,
          "1",
          at,
        ],
      ],
    );

    const endpoint = await browser.get("/console/webhooks/we_dead?env=test&status=failed");
    assert.match(
      endpoint.html,
      /href="\/console\/webhooks\/we_dead\/deliveries\.csv\?env=test&amp;status=failed" download/,
    );
    const deliveries = await csv(
      "/console/webhooks/we_dead/deliveries.csv?env=test&status=failed",
      "webhook-deliveries-we_dead-test.csv",
    );
    assert.deepEqual(deliveries[0], [
      "delivery_id",
      "event_id",
      "event",
      "status",
      "manual",
      "attempts",
      "last_http_status",
      "last_duration_ms",
      "last_error",
      "next_attempt_at",
      "created_at",
      "completed_at",
    ]);
    assert.deepEqual(
      deliveries.slice(1).map((row) => [row[0], row[3], row[4], row[5], row[11]]),
      [["whd_1", "failed", "no", "3", new Date(now + 60_000).toISOString()]],
    );
    assert.deepEqual(
      await csv(
        "/console/webhooks/we_dead/deliveries.csv?env=test&status=pending",
        "webhook-deliveries-we_dead-test.csv",
      ),
      [deliveries[0]],
    );
    assert.equal((await browser.get("/console/webhooks/we_none/deliveries.csv")).status, 404);

    const queue = await csv("/console/needs-action/export.csv?env=test", "needs-action-test.csv");
    assert.deepEqual(queue[0], [
      "kind",
      "company",
      "what",
      "why",
      "code",
      "meaning",
      "next_step",
      "amount",
      "since",
      "where",
    ]);
    assert.deepEqual(
      queue.slice(1).map((row) => [row[0], row[1], row[2], row[3], row[9]]),
      [
        [
          "webhook endpoint failing",
          "Acme Mutual",
          "https://hooks.acme.test/dead?a=1,b=2",
          queue[1][3],
          "/console/webhooks/we_dead",
        ],
        [
          "parked job",
          "Acme Mutual",
          "payout.offer of po_x",
          "parked: -the rail answered 503, five times",
          "/console/jobs",
        ],
      ],
    );

    const approvals = await csv("/console/approvals/export.csv?env=test", "approvals-test.csv");
    assert.deepEqual(approvals, [[
      "approval_id",
      "requested_at",
      "kind",
      "environment",
      "what",
      "object_id",
      "company",
      "requested_by",
      "status",
      "expires_at",
      "decided_by",
      "decided_at",
      "reason",
    ]]);

    // The audit log as filtered on its page, newest first as listed.
    const audited = await browser.get("/console/audit?env=live&action=operator:create");
    assert.match(
      audited.html,
      /href="\/console\/audit\/export\.csv\?env=live&amp;action=operator%3Acreate" download/,
    );
    const audit = await csv(
      "/console/audit/export.csv?env=live&action=operator:create",
      "audit-live.csv",
    );
    assert.deepEqual(audit[0], [
      "seq",
      "at",
      "operator",
      "origin",
      "action",
      "object_type",
      "object_id",
      "company_id",
      "before",
      "after",
    ]);
    assert.ok(audit.length > 1, "the operator's creation is audited");
    assert.deepEqual([...new Set(audit.slice(1).map((row) => row[4]))], ["operator:create"]);
    const refused = await browser.get("/console/audit/export.csv?since=5%20Jan");
    assert.equal(refused.status, 400);
    assert.equal(refused.html, "From: a date, YYYY-MM-DD\n");
  }, NO_LIMIT);
});

Deno.test("console exports: disbursements, fundings, ledger transactions, parked jobs and failed notifications, as each list is filtered; never a notification's body", async () => {
  await withHttpFixture(async (f) => {
    const { acme, rita } = await acmeWithRita(f);
    const database = f.deps.databases.test;
    const now = f.clock.now();
    await database.writer.write(async (tx) => {
      await tx.execute({
        sql: `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, payload,
                done_at, error, attempts, created_at)
              VALUES ('job_parked', ?, 'payout.offer', ?, ?, '{}', ?, '=1+1', 5, ?)`,
        args: [acme.companyId, rita.payoutId, now, now, now],
      });
      await tx.execute({
        sql: `INSERT INTO notifications (id, company_id, payout_id, channel, recipient, subject,
                body, links, status, attempt_count, last_error, created_at)
              VALUES ('ntf_failed', ?, ?, 'email', 'rita@example.test', 'Your payment',
                'secret link inside', '[]', 'failed', 6, '550 mailbox unavailable', ?)`,
        args: [acme.companyId, rita.payoutId, now],
      });
    });
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const csv = async (path: string) => {
      const response = await browser.get(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get("Content-Type"), "text/csv; charset=utf-8");
      return parseCsv(response.html);
    };
    const at = new Date(now).toISOString();

    assert.match(
      (await browser.get("/console/disbursements?env=test&q=CLM-1")).html,
      /href="\/console\/disbursements\/export\.csv\?env=test&amp;q=CLM-1" download/,
    );
    const disbursements = await csv("/console/disbursements/export.csv?env=test&q=CLM-1");
    assert.deepEqual(disbursements[0], [
      "disbursement_id",
      "uuid",
      "claim_id",
      "kind",
      "company",
      "line",
      "payees",
      "total",
      "status",
      "large_disbursement",
      "created_at",
    ]);
    assert.deepEqual(
      disbursements.slice(1).map((row) => row.slice(2)),
      [["CLM-1", "v1", "Acme Mutual", "auto", "1", "1250.00", disbursements[1][8], "false", at]],
    );
    assert.deepEqual(await csv("/console/disbursements/export.csv?env=test&q=CLM-404"), [
      disbursements[0],
    ]);

    const fundings = await csv("/console/funding/export.csv?env=test&status=Completed");
    assert.deepEqual(
      fundings.map((row) => [row[2], row[4], row[5], row[6]]),
      [["company", "method", "amount", "status"], [
        "Acme Mutual",
        "WireTransfer",
        "5000.00",
        "Completed",
      ]],
    );
    assert.deepEqual(await csv("/console/funding/export.csv?env=test&status=Returned"), [
      fundings[0],
    ]);

    const held = await csv(
      `/console/ledger/transactions/export.csv?env=test&line=${acme.lineId}&kind=payout.hold`,
    );
    assert.deepEqual(held.map((row) => [row[2], row[5], row[7]]), [
      ["kind", "payout_id", "entries"],
      ["payout.hold", rita.payoutId, "available -1250.00; reserved 1250.00"],
    ]);

    assert.deepEqual(await csv("/console/jobs/export.csv?env=test"), [
      ["job_id", "kind", "subject_id", "company", "attempts", "error", "due_at", "parked_at"],
      ["job_parked", "payout.offer", rita.payoutId, "Acme Mutual", "5", "'=1+1", at, at],
    ]);
    const failed = await browser.get("/console/jobs/notifications/export.csv?env=test");
    assert.doesNotMatch(failed.html, /secret link inside/);
    assert.deepEqual(parseCsv(failed.html), [
      [
        "notification_id",
        "company",
        "payout_id",
        "channel",
        "recipient",
        "subject",
        "attempts",
        "last_error",
        "created_at",
      ],
      [
        "ntf_failed",
        "Acme Mutual",
        rita.payoutId,
        "email",
        "rita@example.test",
        "Your payment",
        "6",
        "550 mailbox unavailable",
        at,
      ],
    ]);
  }, NO_LIMIT);
});
