/**
 * The console's record pages (issue 20): Ledger (balances, transactions, tie-out with the
 * difference highlighted and CSV, ledger:verify), Keys (hints only; rotate shows the new secret
 * once, revoke), Disbursements (list and detail with each payee), Review queues (sanctions holds
 * cleared or rejected) and Bank files; each for roles, company scope and audit rows. Last, every
 * page of the console is read and searched for the seeded secrets.
 */
import assert from "node:assert/strict";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { consoleAs, countRows, parseCsv, textOf } from "./console_helpers.ts";
import { seedConsoleData } from "./console_pages_helpers.ts";

/** A /v1 payout held for sanctions review, as screening leaves it: in_review with an open review. */
async function heldPayout(f: HttpFixture, disbursementId: string): Promise<string> {
  const reviewId = "scr_console_test";
  await f.deps.databases.test.writer.write(async (tx) => {
    await tx.execute({
      sql: `UPDATE payouts SET status = 'in_review', payment_method_id = 2, first_name = 'Ivan',
              last_name = 'Sanktionov' WHERE disbursement_id = ?`,
      args: [disbursementId],
    });
    await tx.execute({
      sql: `INSERT INTO sanctions_reviews (id, company_id, payout_id, matches, list_id, status,
              created_at)
            SELECT ?, company_id, id, ?, 'sandbox_fixture_v1', 'open', ? FROM payouts
            WHERE disbursement_id = ?`,
      args: [
        reviewId,
        JSON.stringify([{
          screenedName: "Ivan Sanktionov",
          entryNumber: 900001,
          listName: "SANKTIONOV, Ivan",
          program: "SANDBOX",
          score: 1,
          rule: "name",
        }]),
        f.clock.now(),
        disbursementId,
      ],
    });
  });
  return reviewId;
}

Deno.test("console ledger: balances per line, transactions with entries, a tie-out day as CSV, and ledger:verify on demand", async () => {
  await withHttpFixture(async (f) => {
    await seedConsoleData(f);
    const { browser: viewer } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const balances = await viewer.get("/console/ledger?env=test");
    assert.equal(balances.status, 200);
    assert.match(textOf(balances.html), /Acme Mutual auto \$9,875\.00 \$125\.00 \$0\.00 \$0\.00/);
    assert.match(textOf(balances.html), /Beacon Casualty default \$9,875\.00 \$125\.00/);
    const verified = await viewer.get("/console/ledger?env=test&verify=1");
    assert.match(textOf(verified.html), /Ledger verified: every transaction sums to zero/);

    const transactions = await viewer.get(
      `/console/ledger/transactions?env=test&line=${f.cast.acme.autoLineId}&sort=posted&dir=asc`,
    );
    const text = textOf(/<tbody>[\s\S]*<\/tbody>/.exec(transactions.html)![0]);
    assert.match(
      text,
      /funding\.wire_received .* Acme Mutual \/ auto .* bank -\$10,000\.00 available \$10,000\.00/,
    );
    assert.ok(!text.includes("Beacon Casualty / default"), "one line's transactions");

    const today = new Date(f.clock.now()).toISOString().slice(0, 10);
    const tieOut = await viewer.get(
      `/console/ledger/tie-out?env=test&line=${f.cast.acme.autoLineId}`,
    );
    assert.equal(tieOut.status, 200);
    assert.match(
      textOf(tieOut.html),
      new RegExp(`${today} \\$0\\.00 \\$10,000\\.00 .* \\$10,000\\.00 \\$0\\.00 CSV`),
    );
    const csv = await f.app.request(
      `/console/ledger/tie-out.csv?env=test&line=${f.cast.acme.autoLineId}&date=${today}`,
      { headers: { Cookie: [...viewer.cookies].map(([k, v]) => `${k}=${v}`).join("; ") } },
    );
    assert.equal(csv.status, 200);
    assert.equal(csv.headers.get("Content-Type"), "text/csv; charset=utf-8");
    assert.equal(
      csv.headers.get("Content-Disposition"),
      `attachment; filename="tieout-auto-${today}.csv"`,
    );
    assert.match(
      await csv.text(),
      new RegExp(
        `^line,date,currency,opening,funded,returned_funding,returned,disbursed,fees,closing,difference\nauto,${today},USD,0\\.00,10000\\.00,0\\.00,0\\.00,0\\.00,0\\.00,10000\\.00,0\\.00\n`,
      ),
    );

    // A posting that does not balance: the day's difference shows, and verification names it.
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO ledger_transactions (id, company_id, line_id, kind, posted_at)
              VALUES ('ltx_bad', ?, ?, 'payout.hold', ?)`,
        args: [f.cast.acme.id, f.cast.acme.autoLineId, f.clock.now()],
      }).then(() =>
        tx.execute({
          sql: `INSERT INTO ledger_entries (transaction_id, account_id, amount_cents)
                SELECT 'ltx_bad', id, 100 FROM ledger_accounts WHERE line_id = ? AND code = 'available'`,
          args: [f.cast.acme.autoLineId],
        })
      )
    );
    const differs = await viewer.get(
      `/console/ledger/tie-out?env=test&line=${f.cast.acme.autoLineId}`,
    );
    assert.match(textOf(differs.html), /1 of these days do not tie out/);
    assert.match(
      differs.html,
      /<strong class="badge bad"><span class="money negative">-\$1\.00<\/span> does not tie out<\/strong>/,
    );
    const broken = await viewer.get("/console/ledger?env=test&verify=1");
    assert.match(textOf(broken.html), /Ledger differences found\. \d+ ledger differences found/);

    const { browser: scoped } = await consoleAs(f, {
      email: "bea@ops.test",
      role: "viewer",
      companies: f.cast.beacon.tin,
    });
    const own = await scoped.get("/console/ledger?env=test");
    assert.ok(!textOf(own.html).includes("Acme Mutual"));
    assert.ok(!own.html.includes("verify=1"), "verification covers every company");
    const otherCsv = await scoped.get(
      `/console/ledger/tie-out.csv?env=test&line=${f.cast.acme.autoLineId}&date=${today}`,
    );
    assert.equal(otherCsv.status, 404);
    const otherTieOut = await scoped.get(
      `/console/ledger/tie-out?env=test&line=${f.cast.acme.autoLineId}`,
    );
    assert.equal(otherTieOut.status, 404);
  });
});

Deno.test("console keys: hints only; an admin rotates (new secret shown once, audited) and revokes; a clerk and another company's admin cannot", async () => {
  await withHttpFixture(async (f) => {
    const { rows } = await f.deps.databases.test.readClient.execute({
      sql: "SELECT id, hint FROM api_keys WHERE line_id = ?",
      args: [f.cast.acme.autoLineId],
    });
    const keyId = String(rows[0].id);
    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const seen = await clerk.get("/console/keys?env=test");
    assert.equal(seen.status, 200);
    assert.ok(seen.html.includes(String(rows[0].hint)), "the hint is shown");
    assert.ok(!seen.html.includes(f.cast.acmeAutoKeyTest), "never the secret");
    assert.ok(!seen.html.includes(">Rotate</button>"));
    assert.equal((await clerk.post(`/console/keys/${keyId}/rotate`, { env: "test" })).status, 403);

    const { browser: beaconAdmin } = await consoleAs(f, {
      email: "bea@ops.test",
      role: "admin",
      companies: f.cast.beacon.tin,
    });
    const beaconKeys = await beaconAdmin.get("/console/keys?env=test");
    assert.ok(!beaconKeys.html.includes(keyId), "Acme's keys are not listed");
    assert.equal(
      (await beaconAdmin.post(`/console/keys/${keyId}/rotate`, { env: "test" })).status,
      404,
    );
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM api_keys WHERE expires_at IS NOT NULL"),
      0,
    );

    const { browser: admin } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    await admin.get("/console/keys?env=test");
    const rotated = await admin.post(`/console/keys/${keyId}/rotate`, { env: "test" });
    assert.equal(rotated.status, 200);
    const secret = /<p class="secret" id="new-key-secret">(sk_test_[0-9A-Za-z]+)<\/p>/.exec(
      rotated.html,
    );
    assert.ok(secret, "the new secret is on the answer");
    assert.match(textOf(rotated.html), /New secret: copy it now This is the only time it is shown/);
    const v1 = await f.app.request("/v1/ledgers/auto/balance", {
      headers: { Authorization: `Bearer ${secret[1]}` },
    });
    assert.equal(v1.status, 200, "the new secret works");
    const after = await admin.get("/console/keys?env=test");
    assert.ok(!after.html.includes(secret[1]), "shown once: not on the next page");
    assert.match(textOf(after.html), /rotated works until/);
    const audit = await f.deps.databases.test.readClient.execute(
      "SELECT operator_email, object_id, after FROM audit_log WHERE action = 'key:rotate'",
    );
    assert.equal(audit.rows.length, 1);
    assert.equal(audit.rows[0].object_id, keyId);
    assert.ok(!String(audit.rows[0].after).includes(secret[1]), "no secret in the audit row");

    const revoked = await admin.post(`/console/keys/${keyId}/revoke`, { env: "test" });
    assert.equal(revoked.status, 303);
    assert.equal(revoked.location, "/console/keys?done=revoked&env=test");
    assert.equal(
      await countRows(
        f,
        "test",
        "SELECT count(*) AS n FROM api_keys WHERE id = ? AND revoked_at IS NOT NULL",
        [keyId],
      ),
      1,
    );
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM audit_log WHERE action = 'key:revoke'"),
      1,
    );
  });
});

Deno.test("console disbursements: list, search by claim id, detail with each payee; another company's is 404 by id", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    const { browser: viewer } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const list = await viewer.get("/console/disbursements?env=test");
    assert.equal(list.status, 200);
    assert.match(
      textOf(list.html),
      /CLM-ACME \/v1 .* Acme Mutual auto 1 \$125\.00 created/,
    );
    const searched = await viewer.get("/console/disbursements?env=test&q=CLM-BEACON");
    assert.ok(searched.html.includes(data.beacon.disbursementId));
    assert.ok(!searched.html.includes(data.acme.disbursementId));
    const none = await viewer.get("/console/disbursements?env=test&q=CLM-NONE");
    assert.match(textOf(none.html), /No disbursement has the id, uuid or claim id "CLM-NONE"/);
    const detail = await viewer.get(`/console/disbursements/${data.acme.disbursementId}?env=test`);
    assert.equal(detail.status, 200);
    assert.match(
      textOf(detail.html),
      /Pat Doe p-CLM-ACME pat@example\.test \$125\.00 created not chosen yet/,
    );

    const { browser: scoped } = await consoleAs(f, {
      email: "bea@ops.test",
      role: "viewer",
      companies: f.cast.beacon.tin,
    });
    const own = await scoped.get("/console/disbursements?env=test");
    assert.ok(!own.html.includes(data.acme.disbursementId));
    assert.equal(
      (await scoped.get(`/console/disbursements/${data.acme.disbursementId}?env=test`)).status,
      404,
    );
  });
});

Deno.test("console reviews: a sanctions hold shown with its match; a clerk cannot decide; an admin rejects with a reason, audited", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    const reviewId = await heldPayout(f, data.acme.disbursementId);
    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const list = await clerk.get("/console/reviews?env=test");
    assert.match(
      textOf(list.html),
      /Ivan Sanktionov .* Acme Mutual \$125\.00 SANKTIONOV, Ivan \(SANDBOX\) open/,
    );
    assert.match(list.html, /href="\/console\/reviews\/export\.csv\?env=test"/);
    const exported = await clerk.get("/console/reviews/export.csv?env=test");
    assert.equal(exported.headers.get("Content-Type"), "text/csv; charset=utf-8");
    const reviewRows = parseCsv(exported.html);
    assert.deepEqual(reviewRows[0], [
      "held_at",
      "payout",
      "payee",
      "company",
      "amount",
      "matched",
      "status",
      "decided_by",
      "decided_at",
      "reason",
    ]);
    assert.deepEqual(
      reviewRows.slice(1).map((row) => [row[2], row[3], row[4], row[5], row[6], row[7]]),
      [["Ivan Sanktionov", "Acme Mutual", "125.00", "SANKTIONOV, Ivan (SANDBOX)", "open", ""]],
    );
    const page = await clerk.get(`/console/reviews/${reviewId}?env=test`);
    assert.match(
      textOf(page.html),
      /Ivan Sanktionov SANKTIONOV, Ivan 900001 SANDBOX 1\.000 \(name\)/,
    );
    assert.ok(!page.html.includes(">Reject</button>"));
    const refused = await clerk.post(`/console/reviews/${reviewId}/decide`, {
      env: "test",
      reason: "x",
      decision: "reject",
    });
    assert.equal(refused.status, 403);

    const { browser: admin } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    await admin.get(`/console/reviews/${reviewId}?env=test`);
    const noReason = await admin.post(`/console/reviews/${reviewId}/decide`, {
      env: "test",
      reason: "",
      decision: "reject",
    });
    assert.equal(noReason.status, 400);
    assert.match(noReason.html, /Reason is required/);
    const rejected = await admin.post(`/console/reviews/${reviewId}/decide`, {
      env: "test",
      reason: "same date of birth as the listed party",
      decision: "reject",
    });
    assert.equal(rejected.status, 303);
    assert.equal(rejected.location, "/console/reviews?done=rejected&env=test");
    const { rows } = await f.deps.databases.test.readClient.execute({
      sql: `SELECT r.status, p.status AS payout_status, p.failure_reason FROM sanctions_reviews r
              JOIN payouts p ON p.id = r.payout_id WHERE r.id = ?`,
      args: [reviewId],
    });
    assert.deepEqual({ ...rows[0] }, {
      status: "rejected",
      payout_status: "failed",
      failure_reason: "sanctions_review",
    });
    const audit = await f.deps.databases.test.readClient.execute(
      "SELECT operator_email, object_id FROM audit_log WHERE action = 'sanctions:reject'",
    );
    assert.deepEqual(audit.rows.map((row) => ({ ...row })), [{
      operator_email: "ada@ops.test",
      object_id: reviewId,
    }]);
    const again = await admin.post(`/console/reviews/${reviewId}/decide`, {
      env: "test",
      reason: "twice",
      decision: "clear",
    });
    assert.equal(again.status, 409);
    assert.match(textOf(again.html), /is rejected, not open/);

    const { browser: scoped } = await consoleAs(f, {
      email: "bea@ops.test",
      role: "admin",
      companies: f.cast.beacon.tin,
    });
    assert.equal((await scoped.get(`/console/reviews/${reviewId}?env=test`)).status, 404);
    const checks = await scoped.get("/console/reviews/checks?env=test");
    assert.match(textOf(checks.html), /No open check exceptions/);
  });
});

Deno.test("console: no page shows a seeded secret (key secrets, webhook secrets, full account numbers)", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    await heldPayout(f, data.acme.disbursementId);
    const account = "000123456789";
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE payouts SET method_last_four = ? WHERE disbursement_id = ?",
        args: [account.slice(-4), data.beacon.disbursementId],
      })
    );
    const secrets = [
      f.cast.acme.companyKey,
      f.cast.beacon.companyKey,
      f.cast.alice.keyTest,
      f.cast.alice.keyLive,
      f.cast.acmeAutoKeyTest,
      f.cast.acmeAutoKeyLive,
      f.cast.beaconKeyTest,
      data.acme.webhookSecret,
      data.beacon.webhookSecret,
      account,
    ];
    const { browser: admin } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    const pages = [
      "/console/disbursements",
      `/console/disbursements/${data.acme.disbursementId}`,
      `/console/disbursements/${data.beacon.disbursementId}`,
      "/console/ledger",
      "/console/ledger/transactions",
      "/console/ledger/tie-out",
      "/console/funding",
      "/console/webhooks",
      `/console/webhooks/${data.acme.endpointId}`,
      "/console/jobs",
      "/console/jobs/notifications",
      "/console/approvals",
      "/console/audit",
      "/console/audit?verify=1",
      "/console/reviews",
      "/console/reviews/scr_console_test",
      "/console/reviews/checks",
      "/console/keys",
      "/console/keys?ended=1",
      "/console/bank-files",
      "/console/bank-files/imports",
      "/console/bank-files/checks",
      "/console/bank-files/check-files",
      "/console/sandbox",
    ];
    for (const environment of ["test", "live"]) {
      for (const path of pages) {
        // The sandbox and the seeded objects are the test environment's.
        if (environment === "live" && (path === "/console/sandbox" || /_/.test(path))) continue;
        const url = `${path}${path.includes("?") ? "&" : "?"}env=${environment}`;
        const page = await admin.get(url);
        assert.equal(page.status, 200, url);
        for (const secret of secrets) {
          assert.ok(!page.html.includes(secret), `${url} shows a secret`);
        }
      }
    }
  });
});

Deno.test("console reviews: an admin resolves a check paid-item exception (bank reversed: nothing posted), audited; another company's is 404", async () => {
  await withHttpFixture(async (f) => {
    const now = f.clock.now();
    await f.deps.databases.test.writer.write(async (tx) => {
      await tx.execute({
        sql: `INSERT INTO check_paid_imports (id, company_id, sha256, source, file_name, item_count,
                matched_count, exception_count, report, imported_at)
              VALUES ('cpi_console', ?, 'abc', 'cli', 'paid-2026-01-05.csv', 1, 0, 1, '[]', ?)`,
        args: [f.cast.acme.id, now],
      });
      await tx.execute({
        sql: `INSERT INTO check_exceptions (id, company_id, import_id, check_number, kind,
                paid_amount_cents, paid_date, status, created_at)
              VALUES ('cex_console', ?, 'cpi_console', 9001, 'unknown', 4200, '2026-01-05', 'open', ?)`,
        args: [f.cast.acme.id, now],
      });
    });
    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const list = await clerk.get("/console/reviews/checks?env=test");
    assert.match(
      textOf(list.html),
      /No\. 9001 paid-2026-01-05\.csv unknown — \$42\.00 2026-01-05 open/,
    );
    const exported = await clerk.get("/console/reviews/checks/export.csv?env=test");
    assert.equal(exported.headers.get("Content-Type"), "text/csv; charset=utf-8");
    assert.deepEqual(parseCsv(exported.html), [
      [
        "reported_at",
        "check_number",
        "exception",
        "issued",
        "paid",
        "paid_on",
        "payout",
        "file",
        "status",
        "resolution",
      ],
      [
        new Date(now).toISOString(),
        "9001",
        "unknown",
        "",
        "42.00",
        "2026-01-05",
        "",
        "paid-2026-01-05.csv",
        "open",
        "",
      ],
    ]);
    const page = await clerk.get("/console/reviews/checks/cex_console?env=test");
    assert.match(textOf(page.html), /If the payment stands \$42\.00 from available to bank/);
    assert.ok(!page.html.includes(">Resolve</button>"));
    assert.equal(
      (await clerk.post("/console/reviews/checks/cex_console/resolve", {
        env: "test",
        resolution: "bank_reversed",
        note: "x",
      })).status,
      403,
    );

    const { browser: beaconAdmin } = await consoleAs(f, {
      email: "bea@ops.test",
      role: "admin",
      companies: f.cast.beacon.tin,
    });
    assert.equal(
      (await beaconAdmin.get("/console/reviews/checks/cex_console?env=test")).status,
      404,
    );
    assert.equal(
      (await beaconAdmin.post("/console/reviews/checks/cex_console/resolve", {
        env: "test",
        resolution: "bank_reversed",
        note: "x",
      })).status,
      404,
    );

    const { browser: admin } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    await admin.get("/console/reviews/checks/cex_console?env=test");
    const bad = await admin.post("/console/reviews/checks/cex_console/resolve", {
      env: "test",
      resolution: "shrug",
      note: "",
    });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /Resolution: choose what the bank says happened/);
    const resolved = await admin.post("/console/reviews/checks/cex_console/resolve", {
      env: "test",
      resolution: "bank_reversed",
      note: "the bank took the item back on 2026-01-06",
    });
    assert.equal(resolved.status, 303);
    assert.equal(resolved.location, "/console/reviews/checks?done=resolved&env=test");
    assert.equal(
      await countRows(
        f,
        "test",
        "SELECT count(*) AS n FROM check_exceptions WHERE status = 'resolved' AND resolution = 'bank_reversed'",
      ),
      1,
    );
    assert.equal(await countRows(f, "test", "SELECT count(*) AS n FROM ledger_transactions"), 0);
    const audit = await f.deps.databases.test.readClient.execute(
      "SELECT operator_email, object_id FROM audit_log WHERE object_id = 'cex_console'",
    );
    assert.deepEqual(audit.rows.map((row) => ({ ...row })), [{
      operator_email: "ada@ops.test",
      object_id: "cex_console",
    }]);
  });
});

Deno.test("console bank files: ACH files of the scope filtered by status, one file's page; another company's file is 404", async () => {
  await withHttpFixture(async (f) => {
    const now = f.clock.now();
    await f.deps.databases.test.writer.write(async (tx) => {
      for (
        const [id, companyId, modifier] of [["rbt_acme", f.cast.acme.id, "A"], [
          "rbt_beacon",
          f.cast.beacon.id,
          "B",
        ]]
      ) {
        await tx.execute({
          sql: `INSERT INTO rail_batches (id, company_id, rail, status, entry_count, total_cents,
                  cutoff_at, created_at) VALUES (?, ?, 'ach', 'built', 1, 12500, ?, ?)`,
          args: [id, companyId, now, now],
        });
        await tx.execute({
          sql:
            `INSERT INTO ach_files (batch_id, company_id, immediate_origin, immediate_destination,
                  bank_date, file_id_modifier, effective_date, cutoff_kind, window_ends_at,
                  content_sealed, sha256, byte_size, entry_hash, credit_total_cents,
                  debit_total_cents, entry_count, file_name, created_at)
                VALUES (?, ?, '0123456780', '0987654320', '2026-01-05', ?, '2026-01-06',
                  'next_day', ?, 'sealed', 'f00d', 940, '0001234567', 12500, 0, 1, ?, ?)`,
          args: [id, companyId, modifier, now, `ACH-${modifier}.txt`, now],
        });
      }
    });
    const { browser: scoped } = await consoleAs(f, {
      email: "sam@ops.test",
      role: "viewer",
      companies: f.cast.acme.tin,
    });
    const list = await scoped.get("/console/bank-files?env=test");
    assert.equal(list.status, 200);
    assert.match(
      textOf(list.html),
      /ACH-A\.txt next day Acme Mutual 2026-01-06 1 \$125\.00 \/ \$0\.00 built/,
    );
    assert.ok(!list.html.includes("ACH-B.txt"));
    const detail = await scoped.get("/console/bank-files/ach/rbt_acme?env=test");
    assert.equal(detail.status, 200);
    assert.match(textOf(detail.html), /This file has no entries/);
    assert.equal((await scoped.get("/console/bank-files/ach/rbt_beacon?env=test")).status, 404);
    const transmitted = await scoped.get("/console/bank-files?env=test&status=transmitted");
    assert.match(textOf(transmitted.html), /No ACH files/);
  });
});
