/**
 * The console's Reconciliation page: each account's day with its bank movement against what was
 * expected and a badge, the open exceptions an admin resolves with a note (and an adjusting
 * entry), the days as CSV; /metrics counts the open exceptions and the oldest one's age.
 */
import assert from "node:assert/strict";
import { checkBankSettings } from "../lib/ach/bank_settings.ts";
import { saveBankSettings } from "../lib/ach/bank_store.ts";
import { bankLocal } from "../lib/ach/cutoffs.ts";
import { importStatement } from "../lib/reconciliation/service.ts";
import { consoleAs, parseCsv, textOf } from "./console_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { validSettingsJson } from "./bank_helpers.ts";
import { bai2Statement, statementAccount } from "./recon_helpers.ts";

/** A BAI2 statement of one account's day: a wire in and a fee. */
const dayFile = (date: string, accountNumber = "000900000002") =>
  new TextDecoder().decode(bai2Statement(date, [
    statementAccount(accountNumber, 0, [
      ["195", 100_000, null, "INCOMING WIRE"],
      ["699", 2_500, null, "ACCOUNT FEE"],
    ]),
  ]));

async function importDay(f: HttpFixture) {
  const date = bankLocal(f.clock.now(), "America/New_York").date;
  const content = dayFile(date);
  const imported = await importStatement({
    database: f.deps.databases.test,
    environment: "test",
    secretBox: f.deps.secretBox,
  }, {
    companyId: f.cast.acme.id,
    content: new TextEncoder().encode(content),
    fileName: "day.bai",
    source: "cli",
    importedBy: null,
  }, f.clock.now());
  assert.ok(imported.ok);
  return date;
}

Deno.test("the Reconciliation page shows each day's badge, exports the days, and an admin resolves an exception", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const date = await importDay(f);
    const { browser: viewer } = await consoleAs(f, { email: "vi@ops.test", role: "viewer" });
    const page = await viewer.get("/console/reconciliation?env=test");
    assert.equal(page.status, 200);
    const text = textOf(page.html);
    assert.match(
      text,
      new RegExp(
        `${date} Acme Mutual ••••0002 settlement \\$975\\.00 \\$975\\.00 \\$1,000\\.00 1 of 2 1 open of 1 differences`,
      ),
    );
    assert.match(
      text,
      /the bank reported a debit of \$25\.00 \(other, type 699\) the service did not expect/,
    );
    assert.match(text, /an admin resolves it/);
    assert.match(
      page.html,
      /<a[^>]*href="\/console\/reconciliation\?env=test"[^>]*aria-current="page"/,
    );
    const overview = await viewer.get("/console/needs-action?env=test");
    assert.match(textOf(overview.html), /1 bank statement difference open/);

    const csv = await viewer.get("/console/reconciliation/export.csv?env=test");
    assert.equal(csv.headers.get("Content-Type"), "text/csv; charset=utf-8");
    assert.deepEqual(parseCsv(csv.html), [
      [
        "date",
        "company",
        "account",
        "role",
        "opening",
        "closing",
        "bank_net",
        "expected_net",
        "lines",
        "matched",
        "exceptions",
        "open_exceptions",
        "status",
        "file",
        "source",
      ],
      [
        date,
        "Acme Mutual",
        "****0002",
        "settlement",
        "0.00",
        "975.00",
        "975.00",
        "1000.00",
        "2",
        "1",
        "1",
        "1",
        "differences",
        "day.bai",
        "cli",
      ],
    ]);

    const metrics = await (await f.app.request("/metrics")).text();
    assert.match(metrics, /recon_exceptions_open\{environment="test",side="bank"\} 1/);
    assert.match(metrics, /recon_exceptions_open\{environment="test",side="service"\} 0/);
    assert.match(
      metrics,
      /recon_exception_oldest_age_seconds\{environment="test",side="bank"\} \d+/,
    );

    const { browser: admin } = await consoleAs(f, { email: "ad@ops.test", role: "admin" });
    const adminPage = await admin.get("/console/reconciliation?env=test");
    const id = /action="\/console\/reconciliation\/(rex_\w+)\/resolve"/.exec(adminPage.html)![1];
    const resolved = await admin.post(`/console/reconciliation/${id}/resolve`, {
      env: "test",
      note: "the bank's account fee",
      adjust_line: "auto",
    });
    assert.equal(resolved.status, 303, textOf(resolved.html));
    const { rows } = await f.deps.databases.test.readClient.execute(
      `SELECT x.status, x.note, t.kind FROM recon_exceptions x
         JOIN ledger_transactions t ON t.id = x.ledger_transaction_id`,
    );
    assert.deepEqual(rows.map((r) => ({ ...r })), [{
      status: "resolved",
      note: "the bank's account fee",
      kind: "recon.adjustment_out",
    }]);
    const after = textOf((await admin.get("/console/reconciliation?env=test")).html);
    assert.match(after, /0 open of 1 resolved/);
    assert.match(after, /No open exception: every line matched\./);
  });
});

Deno.test("console statement upload: in test reconciled at once and recorded as the console's, once by SHA-256; a malformed file refused with its line and reason", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const date = bankLocal(f.clock.now(), "America/New_York").date;
    const { browser: ada } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    const page = await ada.get("/console/reconciliation?env=test");
    assert.match(page.html, /href="\/console\/bank-files\/import\?env=test">Import a file</);
    const form = await ada.get("/console/bank-files/import?env=test");
    assert.match(form.html, /<option value="statement" ?>Bank statement \(BAI2 or camt\.053\)</);
    const upload = (name: string, content: string, company: string | null = f.cast.acme.id) =>
      ada.postFile("/console/bank-files/import", {
        env: "test",
        kind: "statement",
        ...(company === null ? {} : { company }),
      }, { field: "file", name, content });

    const imported = await upload("prior day.bai", dayFile(date));
    assert.equal(imported.status, 200, textOf(imported.html));
    assert.match(
      textOf(imported.html),
      new RegExp(
        `Imported in test\\. File prior_day\\.bai SHA-256 [0-9a-f]{64} Imported before no Format bai2 Account days ••••0002 ${date}: 2 lines, 1 matched, 1 exceptions Lines matched 1 Exceptions 1 Not read none`,
      ),
    );
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT file_name, source, imported_by IS NOT NULL AS by FROM statement_imports",
    );
    assert.deepEqual(rows.map((r) => ({ ...r })), [
      { file_name: "prior_day.bai", source: "console", by: 1 },
    ]);
    const again = await upload("again.bai", dayFile(date));
    assert.equal(again.status, 200, textOf(again.html));
    assert.match(textOf(again.html), /Imported before yes: it changes nothing/);

    const noCompany = await upload("day.bai", dayFile(date), null);
    assert.equal(noCompany.status, 400);
    assert.match(
      textOf(noCompany.html),
      /Company: choose the company whose accounts the statement reports/,
    );
    const broken = dayFile(date).replace(/^49,.*$/m, "49,1,4/");
    const refused = await upload("broken.bai", broken);
    assert.equal(refused.status, 409, textOf(refused.html));
    assert.match(
      textOf(refused.html),
      /This was not done: broken\.bai line \d+: .+; nothing was imported \(in test\)/,
    );
    const count = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM statement_imports",
    );
    assert.equal(Number(count.rows[0].n), 1);
  });
});

Deno.test("console statement upload in live: staged for a second admin, imported as the console's once approved", async () => {
  await withHttpFixture(async (f) => {
    const now = f.clock.now();
    const checked = checkBankSettings(validSettingsJson(), "live");
    assert.ok(checked.ok);
    await f.deps.databases.live.writer.write((tx) =>
      saveBankSettings(tx, f.deps.secretBox, f.cast.acme.id, checked.value, null, now)
    );
    const date = bankLocal(now, "America/New_York").date;
    const { browser: ada } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    await ada.get("/console/bank-files/import?env=live");
    const staged = await ada.postFile("/console/bank-files/import", {
      env: "live",
      kind: "statement",
      company: f.cast.acme.id,
    }, { field: "file", name: "live.bai", content: dayFile(date, "9876543210") });
    assert.equal(staged.status, 200, textOf(staged.html));
    assert.match(
      textOf(staged.html),
      /Staged: recon:import live\.bai: 1 account days, 0 lines matched, 2 exceptions\. A second admin decides approval/,
    );
    const live = f.deps.databases.live.readClient;
    const imports = async () =>
      (await live.execute("SELECT file_name, source FROM statement_imports")).rows.map((r) => ({
        ...r,
      }));
    assert.deepEqual(await imports(), []);
    const { rows: [approval] } = await live.execute(
      "SELECT id FROM approvals WHERE kind = 'statement_import.apply'",
    );
    const { browser: bo } = await consoleAs(f, { email: "bo@ops.test", role: "admin" });
    await bo.get(`/console/approvals/${approval.id}?env=live`);
    const approved = await bo.post(`/console/approvals/${approval.id}/approve`, { env: "live" });
    assert.equal(approved.status, 303, textOf(approved.html));
    assert.deepEqual(await imports(), [{ file_name: "live.bai", source: "console" }]);
  });
});
