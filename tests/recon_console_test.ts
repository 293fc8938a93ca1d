/**
 * The console's Reconciliation page: each account's day with its bank movement against what was
 * expected and a badge, the open exceptions an admin resolves with a note (and an adjusting
 * entry), the days as CSV; /metrics counts the open exceptions and the oldest one's age.
 */
import assert from "node:assert/strict";
import { bankLocal } from "../lib/ach/cutoffs.ts";
import { writeBai2 } from "../lib/reconciliation/bai2_writer.ts";
import { importStatement } from "../lib/reconciliation/service.ts";
import { kindOfBaiTypeCode } from "../lib/reconciliation/statement.ts";
import { consoleAs, parseCsv, textOf } from "./console_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

async function importDay(f: HttpFixture) {
  const date = bankLocal(f.clock.now(), "America/New_York").date;
  const lines = ([["195", 100_000, "INCOMING WIRE"], ["699", 2_500, "ACCOUNT FEE"]] as const).map((
    [typeCode, amountCents, text],
  ) => ({
    line: 0,
    direction: Number(typeCode) < 400 ? "credit" as const : "debit" as const,
    amountCents,
    typeCode,
    kind: kindOfBaiTypeCode(Number(typeCode)),
    bankReference: null,
    customerReference: null,
    text,
  }));
  const content = writeBai2({
    senderId: "021000021",
    receiverId: "ACME",
    createdDate: date,
    createdTime: "2300",
    fileId: "1",
    asOfDate: date,
  }, [{ accountNumber: "000900000002", openingCents: 0, closingCents: 97_500, lines }]);
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
