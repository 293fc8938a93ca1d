/**
 * Money and paper: a payout's page names and links the file or batch of each submission with its
 * trace, check number and account ending, its rail reference and mailing address; the file's page
 * links each entry back to its payout.
 */
import assert from "node:assert/strict";
import { insertAchFile } from "./ach_file_rows.ts";
import { consoleAs, createPayout, fundLine, textOf } from "./console_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";

/** Rita's payout of $1,250.00 as the one entry of a transmitted ACH file. */
async function payoutInAchFile(
  f: HttpFixture,
  entry: { status?: "failed"; returnCode?: string },
): Promise<{ acme: { companyId: string; lineId: string }; payoutId: string; fileId: string }> {
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
  const fileId = await insertAchFile(f.deps.databases.test, {
    companyId: acme.companyId,
    status: "transmitted",
    effectiveDate: "2026-01-06",
    createdAt: f.clock.now(),
    transmittedAt: f.clock.now(),
    entries: [{
      payoutId,
      amountCents: 125_000,
      trace: "091000010000042",
      lastFour: "6789",
      ...entry,
    }],
  });
  return { acme, payoutId, fileId };
}

Deno.test("console: a payout links to its ACH file and check, and the file links back to the payout", async () => {
  await withHttpFixture(async (f) => {
    const { acme, payoutId, fileId } = await payoutInAchFile(f, {
      status: "failed",
      returnCode: "R03",
    });
    const database = f.deps.databases.test;
    await database.writer.write(async (tx) => {
      await tx.execute({
        sql: `INSERT INTO rail_batch_entries (id, company_id, rail, payout_id, reference,
                amount_cents, status, created_at)
              VALUES ('rbe_check', ?, 'check', ?, 'chk-ref-2', 125000, 'queued', ?)`,
        args: [acme.companyId, payoutId, f.clock.now()],
      });
      await tx.execute({
        sql: `INSERT INTO checks (id, company_id, check_number, payout_id, reference, kind,
                amount_cents, payee_name, status, issue_date, issued_at, created_at)
              VALUES ('chk_1', ?, 100234, ?, 'chk-ref-2', 'postal', 125000, 'Rita Rivers',
                'issued', '2026-01-05', ?, ?)`,
        args: [acme.companyId, payoutId, f.clock.now(), f.clock.now()],
      });
      await tx.execute({
        sql: `UPDATE payouts SET address_one = '1 Main St', city = 'Austin', state = 'TX',
                zip_code = '73301', rail_reference = 'chk-ref-2' WHERE id = ?`,
        args: [payoutId],
      });
    });

    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const payoutPage = await browser.get(`/console/payouts/${payoutId}?env=test`);
    assert.equal(payoutPage.status, 200);
    assert.match(
      payoutPage.html,
      new RegExp(`href="/console/bank-files/ach/${fileId}\\?env=test"`),
    );
    const text = textOf(payoutPage.html);
    assert.match(text, /Rail reference chk-ref-2 Mailing address 1 Main St, Austin, TX, 73301/);
    assert.match(
      text,
      new RegExp(
        `ACH ${fileId} transmitted trace 091000010000042 account ending in 6789 failed \\(R03\\)`,
      ),
    );
    assert.match(
      text,
      /Check queued for the next cutoff check 100234 queued chk-ref-2 \$1,250\.00/,
    );

    const filePage = await browser.get(`/console/bank-files/ach/${fileId}?env=test`);
    assert.equal(filePage.status, 200);
    assert.match(filePage.html, new RegExp(`href="/console/payouts/${payoutId}\\?env=test"`));
  }, { RATE_LIMIT_RPS: "0" });
});
