/**
 * Reconciliation badges: on a clean sandbox day every ACH file, check file and PayPal batch is
 * badged balanced (its totals agree with its entries, and its entries with the ledger); a file row
 * edited by hand, or an entry whose amount no longer matches the ledger, is badged "does not
 * balance" with what disagrees, on the list, on the file's own page and in the list's CSV.
 */
import assert from "node:assert/strict";
import { fileBalances } from "../lib/console/file_balances.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { api, payee } from "./api_helpers.ts";
import { CHECK_ADDRESS } from "./checks_http_helpers.ts";
import { consoleAs, textOf } from "./console_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { choosePaypal, referenceOf, withPaypal } from "./paypal_helpers.ts";

const ACH = 1;
const POSTAL_CHECK = 2;
const DIGITAL_CHECK = 5;
const PAYPAL = 7;

/** A day of Acme's test payouts by ACH, postal and digital check and PayPal, through the sandbox. */
async function cleanDay(f: HttpFixture): Promise<void> {
  await fundAcmeAuto(f, 100_000_00);
  const methods = [ACH, POSTAL_CHECK, DIGITAL_CHECK, PAYPAL, ACH];
  const created = await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: "day-1",
    large_disbursement: false,
    payees: methods.map((_, i) =>
      payee(`day-1-${i}`, 100 * (i + 1), { allowed_payment_method_ids: [ACH, 2, 5, PAYPAL] })
    ),
  });
  assert.equal(created.status, 201, await created.clone().text());
  await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
  const database = f.deps.databases.test;
  for (const [i, method] of methods.entries()) {
    const { rows } = await database.readClient.execute({
      sql: `SELECT p.id FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
            WHERE d.external_uuid = 'day-1' AND p.payee_uuid = ?`,
      args: [`day-1-${i}`],
    });
    const details = method === ACH
      ? { accountNumber: "000123456789", routingNumber: "011000015", accountType: "checking" }
      : method === PAYPAL
      ? {}
      : { zip: CHECK_ADDRESS.zip_code };
    const kept: Record<string, string> = method === POSTAL_CHECK
      ? CHECK_ADDRESS
      : method === PAYPAL
      ? { email: `day-1-${i}@payee.test` }
      : {};
    const selected = await database.writer.write((tx) =>
      selectMethod(
        tx,
        String(rows[0].id),
        { paymentMethodId: method, details, kept },
        f.clock.now(),
      )
    );
    assert.ok(selected.ok, selected.ok ? "" : selected.message);
  }
  await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 86_400 });
}

/** The ids of the day's files of a rail, oldest first. */
async function batchIds(f: HttpFixture, rail: string): Promise<string[]> {
  const { rows } = await f.deps.databases.test.readClient.execute({
    sql: "SELECT id FROM rail_batches WHERE rail = ? ORDER BY rowid",
    args: [rail],
  });
  return rows.map((row) => String(row.id));
}

Deno.test("console: every file of a clean day is badged balanced; a hand-edited file row or entry is not, saying what disagrees", async () => {
  await withHttpFixture(async (f) => {
    await cleanDay(f);
    const [achFile] = await batchIds(f, "ach");
    const [positivePay] = await batchIds(f, "check_positive_pay");
    const [print] = await batchIds(f, "check_print");
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const text = async (path: string) => {
      const page = await browser.get(path);
      assert.equal(page.status, 200, path);
      return textOf(page.html);
    };

    // A clean day: two ACH payouts in flight, a postal check sent, a digital check paid.
    assert.match(
      await text("/console/bank-files?env=test"),
      /\$600\.00 \/ \$0\.00 transmitted balanced/,
    );
    assert.match(await text(`/console/bank-files/ach/${achFile}?env=test`), /Balances balanced/);
    const checkFiles = await text("/console/bank-files/check-files?env=test");
    assert.match(checkFiles, /print file 1 \/ 0 \$200\.00 transmitted balanced/);
    assert.match(checkFiles, /positive-pay file 2 \/ 0 \$500\.00 transmitted balanced/);
    assert.doesNotMatch(checkFiles, /does not balance/);
    // One vocabulary and one time order for a check file: named as the CLI's checks:files names
    // it, built before it was transmitted, on its list and its own page.
    const printPage = await text(`/console/bank-files/batches/${print}?env=test`);
    assert.match(
      printPage,
      /Rail print file Status transmitted Reference CHECKS_\S+\.pdf Entries 1 Total \$200\.00 Balances balanced Built (\w{3} \d+, 2026, \d\d:\d\d UTC) Downloaded — Transmitted (\w{3} \d+, 2026, \d\d:\d\d UTC)/,
    );
    const { rows: [printed] } = await f.deps.databases.test.readClient.execute({
      sql: "SELECT created_at, transmitted_at FROM rail_batches WHERE id = ?",
      args: [print],
    });
    assert.ok(Number(printed.created_at) <= Number(printed.transmitted_at), "built, then sent");

    const database = f.deps.databases.test;
    await database.writer.write(async (tx) => {
      await tx.execute({
        sql: "UPDATE ach_files SET credit_total_cents = 60100 WHERE batch_id = ?",
        args: [achFile],
      });
      // The digital check's entry (paid: the ledger moved $300.00 to the bank) edited to $301.00.
      await tx.execute({
        sql: `UPDATE rail_batch_entries SET amount_cents = 30100
              WHERE batch_id = ? AND amount_cents = 30000`,
        args: [positivePay],
      });
      await tx.execute({
        sql: "UPDATE check_files SET total_cents = 20001 WHERE batch_id = ?",
        args: [print],
      });
    });
    const achList = await browser.get("/console/bank-files?env=test");
    assert.match(textOf(achList.html), /transmitted does not balance/);
    assert.match(
      achList.html,
      /<span class="badge bad" title="credits: the file says \$601\.00, its entries \$600\.00">/,
    );
    assert.match(
      await text(`/console/bank-files/ach/${achFile}?env=test`),
      /Balances does not balance credits: the file says \$601\.00, its entries \$600\.00/,
    );
    const edited = await browser.get("/console/bank-files/check-files?env=test");
    assert.match(
      edited.html,
      /<span class="badge bad" title="total: the file says \$200\.01, its entries \$200\.00">/,
    );
    assert.match(
      edited.html,
      new RegExp(
        '<span class="badge bad" title="batch total: the file says \\$500\\.00, its entries \\$501\\.00; ' +
          'ledger: its entries carry \\$501\\.00, the ledger moved \\$500\\.00">',
      ),
    );
    assert.match(
      await text(`/console/bank-files/batches/${positivePay}?env=test`),
      /Balances does not balance batch total: the file says \$500\.00, its entries \$501\.00; ledger: its entries carry \$501\.00, the ledger moved \$500\.00/,
    );

    // The lists' CSV carry the same verdicts.
    const csv = await browser.get("/console/bank-files/check-files/export.csv?env=test");
    assert.equal(csv.status, 200);
    const lines = csv.html.trimEnd().split("\r\n");
    assert.equal(
      lines[0],
      "file_id,file_name,company,kind,issues,voids,total,status,balances,built_at,transmitted_at",
    );
    assert.equal(lines.length, 3);
    assert.match(
      lines[1],
      new RegExp(
        `^${print},.*,print,1,0,200.01,transmitted,"does not balance: total: the file says \\$200.01, its entries \\$200.00",`,
      ),
    );
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("file balances: a PayPal batch balances with the ledger in flight and once paid; an item's amount edited by hand does not", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(1_000_000);
    const payoutId = await choosePaypal(m, "paypal", 12_345);
    await choosePaypal(m, "venmo", 6_789, "p1");
    const { rows } = await m.database.readClient.execute(
      "SELECT id FROM rail_batches WHERE rail = 'paypal' ORDER BY rowid",
    );
    const ids = rows.map((row) => String(row.id));
    assert.equal(ids.length, 2);
    const balancesNow = async () => [...(await fileBalances(m.database.readClient, ids)).values()];
    const balanced = { balanced: true, differences: [] };
    // Sent, in flight: the ledger holds each item's amount (and any fee) in in_transit.
    assert.deepEqual(await balancesNow(), [balanced, balanced]);
    server.setItemState(await referenceOf(m, payoutId), "SUCCESS");
    await m.advance(60);
    assert.equal((await m.payout(payoutId)).status, "completed");
    assert.deepEqual(await balancesNow(), [balanced, balanced]);

    await m.database.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE rail_batch_entries SET amount_cents = 12346 WHERE payout_id = ?",
        args: [payoutId],
      })
    );
    assert.deepEqual(await balancesNow(), [{
      balanced: false,
      differences: [
        "total: the file says $123.45, its entries $123.46",
        "ledger: its entries carry $123.46, the ledger moved $123.45",
      ],
    }, balanced]);
  });
});
